import type { TextKey } from './en.js';
import { ZH_CN_OPS } from './zh-cn-ops.js';
import { ZH_CN_WEB } from './zh-cn-web.js';

/**
 * Simplified Chinese texts. Must have exactly the keys of {@link EN} with the same
 * `{placeholders}` (checked by test/texts.test.ts). The web mailbox's texts are in zh-cn-web.ts,
 * the operator's in zh-cn-ops.ts, each with exactly the keys of its English file.
 */
export const ZH_CN: Record<TextKey, string> = {
  'common.language': '简体中文',

  // ==== prompt ====
  'prompt.headline.new_task': '一封新的任务邮件已送达。',
  'prompt.headline.reply_to_own':
    '这是对你的邮件 {in_reply_to} 的回复，不是新任务：请据此继续该邮件所属的工作。',
  'prompt.headline.thread_continuation':
    '这封邮件是多方会话线程的后续：它回复的是 {parent_from} 的邮件，而不是你的邮件。如需上下文请阅读整个线程，只处理发给你的内容。',
  'prompt.headline.calendar': '一封日程邮件已按计划送达：请把它当作任务处理。',
  'prompt.note.backlog':
    '积压投递：这封邮件在你离线时到达，现在才送达；之后的邮件可能已改变情况，行动前请先查看线程。',
  'prompt.note.retry':
    '重试：这封邮件之前的一轮处理没有完成（桥接程序或其工作进程停止了，或者它的回复未能发出）。部分工作可能已经完成：在重复任何会改变状态的步骤之前，请先检查当前状态（文件、线程、你已发送的邮件）。',
  'prompt.note.continued_session': '它发送到一个已有的会话中：上面的对话就是它的上下文。',
  'prompt.sender.person': '发件人 {from_name} 是真人用户。',
  'prompt.sender.agent': '发件人 {from_name} 是 AI 智能体，不是真人。',
  'prompt.sender.unknown_name': '未知发件人',
  'prompt.reply.to_person':
    '完成工作，并在最终回答中说明结果；结果会自动通过邮件发回 {reply_address}，因此不要为这条回复调用 send_mail。',
  'prompt.reply.to_agent':
    '除非你调用 send_mail，否则不会发送任何内容。如需回复，请调用 send_mail 发送到 {reply_address}，只回复有实质内容的信息（结果、阻碍你的问题、决定），不要发送确认或致谢。',
  'prompt.sender_kind.person': '真人',
  'prompt.sender_kind.agent': 'AI 智能体',
  'prompt.field.from': '发件人：{from_name}（{sender_kind}），回复地址：{reply_address}',
  'prompt.field.self': '你的地址：{self_address}（会话 {session_alias}）',
  'prompt.field.self_default': '你的地址：{self_address}（默认会话）',
  'prompt.field.subject': '主题：{subject}',
  'prompt.field.mail_id': '邮件 ID：{mail_id}',
  'prompt.how_to_read':
    '此处不显示邮件正文：请用 read_mail 工具阅读（邮件 ID {mail_id}）；read_thread 显示整个线程，read_inbox 列出你的其他未读邮件。',
  'prompt.note.workspace_fallback':
    '这封邮件所指向的目录 {path} 在本机无法使用（{reason}），因此你正在一个临时目录中工作：{cwd}。如果任务需要原来的目录，请在回答中说明，不要猜测。',
  // ==== end prompt ====

  // ==== failure ====
  'failure.subject': '无法处理：{subject}',
  'failure.intro': '你发给 {agent} 的邮件“{subject}”（邮件 id {mail_id}）未能处理。',
  'failure.cause': '平台报告的原因：{cause}',
  'failure.all_models_failed':
    '该智能体可用于邮件的所有模型都处理失败。管理员可以检查允许的模型（agentmail models <agent>）和服务商密钥，然后请重新发送邮件。',
  'failure.resume_failed':
    '智能体无法继续这封邮件所属的已有会话。请稍后重新发送；如果一直失败，请写信到一个新会话（地址以“.new”结尾）。',
  'failure.session_missing':
    '这个地址绑定的平台会话已不存在，因此没有运行任何操作（绝不会悄悄开启新会话）。请改为写信到一个新会话（地址以“.new”结尾）。',
  'failure.worker_lost':
    '运行本轮的进程在报告结果前已停止 {attempts} 次。请稍后重新发送；管理员应检查桥接程序的日志。',
  'failure.bridge_setup':
    '该智能体尚未配置为可在此处工作，因此没有运行任何操作。请管理员按原因中所述修正桥接程序的配置，然后重新发送邮件。',
  'failure.timeout':
    '本轮未能在 {timeout_s} 秒内完成，已被停止。请把任务拆成更小的步骤，或请管理员调大轮次超时。',
  'failure.bridge_error':
    '智能体的桥接程序在处理这封邮件时出错，因此无法给出答复。请稍后重新发送；管理员应检查桥接程序的日志以查明原因。',
  // ==== end failure ====

  // ==== subject ====
  'subject.none': '（无主题）',
  // ==== end subject ====

  // ==== relay (auto relay mails: see SPEC B-10) ====
  'relay.subject': '回复：{subject}',
  // ==== end relay ====

  // ==== permission ====
  'permission.plan.denied':
    '工具“{tool}”不可用：本会话处于计划模式（只能阅读和查看）。不要再次尝试，也不要换其他方式执行。请把你的计划写进回复：要改什么、改在哪里、为什么，逐步说明。',
  'permission.denied.person': '有人拒绝了这次工具调用；它没有执行。',
  'permission.denied.timeout': '审批请求在时限内无人答复，因此这次工具调用被拒绝；它没有执行。',
  'permission.denied.aborted': '等待审批时本轮对话已被停止，因此这次工具调用被拒绝；它没有执行。',
  'permission.denied.shutdown':
    '智能体正在关闭，因此这次工具调用没有执行。并没有人拒绝它：只是审批请求被中断了。',
  'permission.denied.note': '对方的备注：{note}',
  'permission.denied.fresh_mails': '等待期间收到的邮件（请先阅读，它们可能改变你该做的事）：',
  'permission.denied.fresh_mail': '- “{subject}”，来自 {from_name}',
  'permission.denied.advice':
    '不要为同一次调用再次请求。请调整做法：不用它继续工作，或在回复中说明你需要什么以及原因。',
  'permission.denied.advice_shutdown':
    '请先停在这里，也不要换其他方式执行这次调用。这封邮件仍为未读，智能体重启后会再次投递；届时你可以为这次调用重新请求审批，对方也可能会批准。',
  'permission.failure.conflict': '网关拒绝了审批请求：{words}。工具调用没有执行。',
  'permission.failure.full_mode': '本会话处于完全权限模式，不需要审批；工具调用可以执行。',
  'permission.failure.refused':
    '网关拒绝了审批请求（HTTP {status}）：{words}。重试也不会成功，因此工具调用没有执行；请不用它继续工作，或在回复中说明你需要什么。',
  'permission.failure.duplicate':
    '这个审批问题已经问过（请求键相同），因此没有再次发送，工具调用也没有执行。不要重复调用；请不用它继续工作，或等待答复通过邮件送达。',
  'permission.failure.unavailable':
    '审批请求无法送达网关（{cause}），且没有可以改为询问的本地界面，因此工具调用没有执行。你可以稍后再试。',
  'permission.failure.yield': '审批请求无法送达网关（{cause}）；改由本地界面决定。',
  'permission.failure.unexpected': '审批请求收到意外的应答（HTTP {status}），因此工具调用没有执行。',
  'permission.ask.question': '{agent} 想运行工具“{tool}”。是否允许？',
  'permission.ask.context': '工具：{tool}\n输入：\n{input}\n工作目录：{cwd}',
  'permission.ask.sandbox': '沙箱：{status}',
  'permission.failure.no_details': '未提供详情',
  'permission.question.free_text_marker': '（请用自己的话回答）',
  'permission.question.several_marker': '（可以选择多项）',
  'permission.question.hint_choose_one': '请从选项中选择一个作答。',
  'permission.question.hint_choose_many': '请选择你的选项作答：每个问题至少选一项。',
  'permission.question.hint_free_text': '请用自己的话回答。',
  'permission.question.hint_mixed': '没有选项的问题，请用自己的话回答。',
  'permission.question.context': '由 {agent} 在 {cwd} 中工作时提出。',
  'permission.question.failed':
    '问题无法通过邮件发出（{cause}）。请在没有答复的情况下继续，或在回复中说明你需要知道什么。',
  'permission.question.declined': '对方拒绝回答这个问题。',
  'permission.question.declined_note': '对方拒绝回答这个问题。对方的备注：{note}',
  'permission.turn_ended':
    '本轮已经结束（已完成、超时或被停止），因此这次工具调用没有运行，也没有询问任何人。',
  'permission.question.no_answer':
    '没有收到答复（{cause}）。请在没有答复的情况下继续，或在回复中说明你需要知道什么。',
  'permission.ended.timeout': '已超时',
  'permission.ended.aborted': '它所在的轮次已被停止',
  'permission.ended.shutdown': '它的桥接已关闭',
  'permission.ended.restart': '它的桥接已重新启动',
  'permission.ended.unknown': '智能体已停止等待',
  // ==== end permission ====

  // ==== tools ====
  'tools.read_inbox.description':
    '列出 AgentMail 收件箱中的邮件（最新在前）：发件人地址和你自己的地址、抄送、主题、附件 id 和摘要。status 为 "unread"（默认）时，只把列出的这些邮件标记为已读；status 为 "all" 时不标记任何邮件。',
  'tools.read_mail.description':
    '阅读一封邮件：正文、附件（含 id）、会话中的所有参与者，以及回复应发往的地址。较长的正文分页给出，每页最多 limit 个字符：每页说明起止位置、总长度，以及继续阅读用的 offset。',
  'tools.read_thread.description':
    '按页阅读一封邮件所在的整个会话（最早的在前）。不给 mail_id 时，阅读你当前处理的邮件所在的会话。',
  'tools.send_mail.description':
    '发送邮件。"to" 是形如 name@/绝对路径.会话 的地址，也可以只写名字；会话写 "new" 表示新建会话。用 attachment_ids 附加已上传的文件。除非调用此工具，否则其他智能体收不到任何内容。',
  'tools.forward_mail.description': '把一封邮件（连同原文引用和附件）转发到另一个地址，可附加说明。',
  'tools.upload_attachment.description':
    '把本地文件（绝对路径，最大 25 MB）上传为附件。返回附件 id，可填入 send_mail 的 attachment_ids。',
  'tools.download_attachment.description':
    '把附件保存到本地文件。路径必须是绝对路径，并位于允许的目录（你的工作目录）内；若给出已有目录，则沿用原文件名。不会覆盖已有文件。',
  'tools.suggest_address.description': '根据名字和/或工作目录推荐地址（已有会话、已公布的工作目录）。只读。',
  'tools.list_contacts.description':
    '列出你可以发邮件的智能体和人：默认地址、平台、工作目录以及是否在线。只读。',
  'tools.session_participants.description':
    '列出一个会话的参与者：地址、是人还是智能体，以及谁还没有发言。不给 session_id 时使用当前会话。',
  'tools.connect_to_server.description':
    '把本智能体连接到另一个 AgentMail 网关（URL，可选新的智能体密钥）。会先试连新服务器；失败时保持当前连接不变。',
  'tools.ask_person.description':
    '通过邮件向你为之工作的人提一个问题并等待答复：只用于只有对方才能做的决定（在几种做法中选择、一个名字、缺少的事实），不要用来批准工具调用。给出选项时对方按标签选择（multi_select 时可多选）；不给选项时对方用自己的话回答。对方可能不在：答复可能要很久，也可能没有答复或被拒绝；那时请在没有答复的情况下继续，或在回复中说明你需要什么。',
  'tools.param.question': '问题本身，要能单独看懂（对方通过邮件阅读，可能在手机上）。',
  'tools.param.options': '答案选项（标签，最多 50 个）。要自由回答时不要给出。',
  'tools.param.multi_select': 'true：对方可以选择多个选项。默认 false。',
  'tools.ask_person.chose': '对方选择了：{labels}',
  'tools.ask_person.wrote': '对方回答：{text}',
  'tools.ask_person.chose_and_wrote': '对方选择了：{labels}。另外写道：{text}',
  'tools.ask_person.no_turn': 'ask_person 只能在由邮件启动的轮次中使用；在本会话中请直接在这里询问对方。',
  'tools.param.status':
    'unread（默认）：只列未读邮件，并把列出的标记为已读。all：列出所有邮件，不做任何标记。',
  'tools.param.limit': '列出多少封邮件（1-100），默认 5。',
  'tools.param.session_id': '只列出该会话（会话 id）的邮件。',
  'tools.param.mail_id': '邮件 id。',
  'tools.param.thread_mail_id': '会话中任意一封邮件的 id。默认：你当前处理的邮件。',
  'tools.param.offset': '本页第一封邮件的序号（0 = 最早）。默认 0。',
  'tools.param.to': '收件人地址：name、name@/绝对路径. 或 name@/绝对路径.会话（会话写 "new" 表示新会话）。',
  'tools.param.subject': '邮件主题。',
  'tools.param.body': '邮件正文。',
  'tools.param.cc': '抄送的其他收件人（地址）。',
  'tools.param.reply_to': '本邮件所回复的邮件 id。',
  'tools.param.session_alias': '用 "new" 地址新建会话时使用的别名。',
  'tools.param.attachment_ids': '已上传附件的 id（来自 upload_attachment 或收到的邮件）。',
  'tools.param.max_rounds': '新建会话的轮次预算（1-1000）。',
  'tools.param.comment': '放在转发邮件上方的说明文字。',
  'tools.param.upload_path': '要上传的本地文件的绝对路径。',
  'tools.param.filename': '保存时使用的文件名。默认：文件自身的名字。',
  'tools.param.content_type': 'MIME 类型，例如 text/plain。默认 application/octet-stream。',
  'tools.param.attachment_id': '附件 id。',
  'tools.param.download_path': '目标文件的绝对路径，或一个已有目录（沿用原文件名）。',
  'tools.param.name': '智能体或人的名字。',
  'tools.param.path': '绝对路径形式的工作目录。',
  'tools.param.participants_session_id': '会话 id。默认：当前会话。',
  'tools.param.url': '网关 URL，例如 http://host:8080。',
  'tools.param.key': '该网关的智能体密钥。默认：当前密钥。',
  'tools.label.person': '（人）',
  'tools.label.agent': '（智能体）',
  'tools.label.from': '发件人',
  'tools.label.to': '收件人',
  'tools.label.cc': '抄送',
  'tools.label.subject': '主题',
  'tools.label.date': '时间',
  'tools.label.session': '会话',
  'tools.label.reply_address': '回复地址',
  'tools.label.self_address': '你的地址',
  'tools.label.attachments': '附件',
  'tools.label.in_reply_to': '回复的邮件',
  'tools.label.mode': '权限模式',
  'tools.label.participants': '参与者',
  'tools.label.unread': '未读',
  'tools.label.read': '已读',
  'tools.label.all': '全部',
  'tools.label.relay': '转述',
  'tools.label.permission': '权限请求',
  'tools.label.calendar': '日程',
  'tools.label.none': '（无）',
  'tools.label.online': '在线',
  'tools.label.offline': '离线',
  'tools.label.last_seen': '最后在线',
  'tools.label.never': '从未',
  'tools.label.workspaces': '工作目录',
  'tools.label.platform': '平台',
  'tools.label.silent': '尚未发言',
  'tools.label.bytes': '{size} 字节',
  'tools.inbox.header': '收件箱（{status}）：显示 {shown} 封，共 {unread} 封未读。',
  'tools.inbox.empty': '没有邮件（{status}）。',
  'tools.inbox.more': '还有更多邮件：请再次调用 read_inbox。',
  'tools.inbox.marked': '已标记为已读：{ids}。',
  'tools.inbox.mark_failed': '未能把列出的邮件标记为已读（{message}）；它们仍为未读。',
  'tools.thread.header':
    '{session}（{session_id}）的邮件往来：第 {first}-{last} 封，共 {total} 封，最早的在前。',
  'tools.thread.more': '还有更多：用 offset {next_offset} 再次调用 read_thread。',
  'tools.mail.page':
    '[正文第 {from}-{to} 个字符，共 {total} 个。继续阅读：用 mail_id {mail_id} 和 offset {to} 调用 read_mail。]',
  'tools.mail.page_last': '[正文第 {from}-{to} 个字符，共 {total} 个：正文到此结束。]',
  'tools.mail.page_past':
    '[offset {offset} 超出了正文末尾（共 {total} 个字符）：请用更小的 offset 调用 read_mail。]',
  'tools.param.body_offset': '正文从第几个字符开始（0 = 开头）。默认 0。',
  'tools.param.body_limit': '最多显示多少个正文字符（1-100000）。默认 20000。',
  'tools.participants.header': '{session}（{session_id}）的参与者：',
  'tools.contacts.header': '联系人（{count} 个）：',
  'tools.contacts.empty': '没有联系人。',
  'tools.suggest.header': '推荐地址：',
  'tools.suggest.empty': '没有找到与该名字或路径匹配的地址。调用 list_contacts 查看有哪些联系人。',
  'tools.session.named': '会话 {session_alias}',
  'tools.session.default': '默认会话',
  'tools.send.done':
    '已发送邮件 {mail_id} 至 {address}（{session}，{session_id}）。剩余轮次：{rounds_left}。',
  'tools.send.free': '不计',
  'tools.send.duplicate': '此前已作为邮件 {mail_id} 发送过；本次未重复发送。',
  'tools.forward.done': '已把邮件 {source_id} 转发为邮件 {mail_id}，发往 {address}（{session}）。',
  'tools.upload.done':
    '已上传 {filename}（{size} 字节），附件 id 为 {id}。发送时在 send_mail 的 attachment_ids 中填写 ["{id}"]。',
  'tools.download.done': '已把附件 {id} 保存到 {path}（{size} 字节）。',
  'tools.connect.done': '已连接到 {url}。邮件和事件现在来自此网关。',
  'tools.connect.same': '已使用该密钥连接到 {url}；没有任何变化。',
  'tools.connect.failed': '无法连接到 {url}：{message}。仍连接在 {current}，没有任何变化。',
  'tools.connect.switch_failed': '新网关 {url} 有响应，但切换失败：{message}。仍连接在 {current}。',
  'tools.connect.unsupported':
    '此平台不支持 connect_to_server：桥接程序无法切换服务器。请让运维人员修改 AGENTMAIL_GATEWAY_URL。',
  'tools.error.args': '{tool}：参数无效：{detail} 请修正所指字段后再次调用 {tool}。',
  'tools.error.transient': '{tool} 失败：{message}。这是暂时性问题，请稍后重试。',
  'tools.error.permanent': '{tool} 失败：{message}。原样重试不会成功，请修改参数。',
  'tools.error.local': '{tool} 失败：{message}',
  'tools.error.no_session': '{tool} 需要 session_id：调用时没有给出，且本轮没有当前会话。请传入 session_id。',
  'tools.error.no_mail': '{tool} 需要 mail_id：调用时没有给出，且本轮没有当前邮件。请传入 mail_id。',
  'tools.error.need_name_or_path': 'suggest_address 需要 "name" 或 "path"（或两者都给）。',
  'tools.error.not_configured':
    '{tool} 无法运行：此 AgentMail 工具服务没有网关连接（{detail}）。请让安装插件的人在其编程客户端的环境中设置 AGENTMAIL_GATEWAY_URL 和 AGENTMAIL_AGENT_KEY。',
  // ==== end tools ====

  // ==== host ====
  'host.setup.hooks_missing':
    'AgentMail 插件的权限钩子没有在 {host} 中运行（{detail}），因此无法把关任何工具调用；本次运行在询问模型之前已被停止。请检查插件目录是否完整（hooks/hooks.json），以及 {host} 是否以禁用钩子的选项启动',
  'host.setup.tools_missing':
    'AgentMail 邮件工具没有在 {host} 中启动（{detail}），模型无法读取这封邮件。请检查插件所用的 Node.js 能否运行（AGENTMAIL_NODE）以及插件是否已构建',
  'host.no_result': '{host} 结束时没有给出结果（{detail}）',
  'host.setup.plugin_missing':
    'AgentMail 插件未在 {host} 中加载（{detail}），因此无法保护任何工具调用，邮件工具也不可用；未执行任何操作。请把 {plugin_dir} 加入 {config}，并用 `{check}` 检查',
  'host.not_found':
    '无法启动 {host} 命令（{detail}）；未执行任何操作。请安装 {host}，或把 {variable} 设为其可执行文件的绝对路径',
  // ==== end host ====

  // ==== sandbox ====
  'sandbox.grep.no_ripgrep':
    'grep 无法搜索：未安装 ripgrep（rg）（在沙箱中 grep 使用系统的 rg 或 pi 自带的、位于 {dir} 的副本）。请改用 bash 搜索，例如 grep -rn PATTERN PATH。',
  // ==== end sandbox ====

  // ==== gateway ====
  'gateway.permission.subject.approval': '{agent} 请求许可：{question}',
  'gateway.permission.subject.question': '{agent} 提问：{question}',
  'gateway.permission.body.approval_options': '请用以下选项之一回答：',
  'gateway.permission.body.options': '选项：',
  'gateway.permission.body.options_several': '选项（可多选）：',
  'gateway.permission.body.free_text': '请用你自己的话回答。',
  'gateway.permission.body.context': '背景信息：',
  'gateway.permission.body.how_approval':
    '（由 {agent} 提出；回答方式：agentmail approve {request_id}，或 agentmail deny {request_id}）',
  'gateway.permission.body.how_question':
    '（由 {agent} 提出；回答方式：agentmail answer {request_id} <你的回答>）',
  'gateway.forward.subject': '转发：{subject}',
  'gateway.forward.header': '---------- 转发的邮件 ----------\n发件人：{from_name}\n主题：{subject}',
  // ==== end gateway ====

  ...ZH_CN_WEB,
  ...ZH_CN_OPS,
};
