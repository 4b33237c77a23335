/**
 * English texts: the default locale and the source of the key set. Every text a model or a
 * person reads (prompt headlines, reply instructions, failure mails, denial reasons, tool
 * descriptions) lives here, keyed by a dotted name. Placeholders are `{name}` and are filled by
 * {@link formatText}. A test checks that `zh-CN` has the same keys and the same placeholders.
 *
 * Keep each area inside its own section marker so parallel edits do not collide. The web
 * mailbox's texts (`web.*`) are in en-web.ts, the operator's (`ops.*`, crash reports and
 * `agentmail doctor`) in en-ops.ts: each file holds only its own prefix.
 */
import { EN_OPS } from './en-ops.js';
import { EN_WEB } from './en-web.js';

export const EN = {
  'common.language': 'English',

  // ==== prompt (headlines, reply instructions: see SPEC B-5, B-6, B-20) ====
  'prompt.headline.new_task': 'A new task has arrived by mail.',
  'prompt.headline.reply_to_own':
    'This is a reply to your mail {in_reply_to}, not a new task: use it to continue the work that mail belongs to.',
  'prompt.headline.thread_continuation':
    'This mail continues a multi-party thread: it answers a mail from {parent_from}, not one of yours. Read the thread if you need the context, and act only on what is addressed to you.',
  'prompt.headline.calendar': 'A scheduled calendar mail has arrived: treat it as a task.',
  'prompt.note.backlog':
    'Backlog delivery: this mail arrived while you were offline and is delivered late; newer mails may have changed the situation, so check the thread before acting.',
  'prompt.note.retry':
    'Retry: an earlier turn for this mail did not finish (the bridge or its worker stopped, or its answer could not be sent). Part of its work may already be done: check the current state (files, the thread, mails you sent) before you repeat a step that changes something.',
  'prompt.note.continued_session':
    'It arrives in an existing session: the earlier conversation above is its context.',
  'prompt.sender.person': 'The sender, {from_name}, is a person.',
  'prompt.sender.agent': 'The sender, {from_name}, is an AI agent, not a person.',
  'prompt.sender.unknown_name': 'an unknown sender',
  'prompt.reply.to_person':
    'Finish the work and state the result in your final answer; it will be mailed back to {reply_address} automatically, so do not call send_mail for this reply.',
  'prompt.reply.to_agent':
    'Nothing is sent unless you call send_mail. If an answer is needed, call send_mail to {reply_address} and reply only with substance (results, questions that block you, decisions), never with acknowledgements or thanks.',
  'prompt.sender_kind.person': 'person',
  'prompt.sender_kind.agent': 'AI agent',
  'prompt.field.from': 'From: {from_name} ({sender_kind}), reply address: {reply_address}',
  'prompt.field.self': 'You: {self_address} (session {session_alias})',
  'prompt.field.self_default': 'You: {self_address} (the default session)',
  'prompt.field.subject': 'Subject: {subject}',
  'prompt.field.mail_id': 'Mail id: {mail_id}',
  'prompt.how_to_read':
    'The body is not shown here: read it with the read_mail tool (mail id {mail_id}); read_thread shows the whole thread and read_inbox lists your other unread mail.',
  'prompt.note.workspace_fallback':
    'The directory this mail is addressed to, {path}, cannot be used on this machine ({reason}), so you are working in a scratch directory instead: {cwd}. If the task needs the original directory, say so in your answer instead of guessing.',
  // ==== end prompt ====

  // ==== failure (failure mails: see SPEC B-9, B-14) ====
  'failure.subject': 'Could not process: {subject}',
  'failure.intro': 'Your mail "{subject}" (mail id {mail_id}) to {agent} could not be processed.',
  'failure.cause': 'Cause reported by the platform: {cause}',
  'failure.all_models_failed':
    'Every model this agent may use for mail failed on it. An admin can check the allowed models (agentmail models <agent>) and the provider keys; then send the mail again.',
  'failure.resume_failed':
    'The agent could not continue the existing session this mail belongs to. Send the mail again later; if it keeps failing, write to a new session (address ending in ".new").',
  'failure.session_missing':
    'The platform session this address is bound to no longer exists, so nothing was run (a fresh session is never started silently). Write to a new session (address ending in ".new") instead.',
  'failure.worker_lost':
    'The process that runs the turn stopped {attempts} times before reporting. Send the mail again later; an admin should check the bridge log.',
  'failure.bridge_setup':
    'The agent is not set up to work in this place, so nothing was run. An admin must fix the bridge set-up named in the cause; then send the mail again.',
  'failure.timeout':
    'The turn did not finish within {timeout_s} seconds and was stopped. Split the task into smaller steps, or ask an admin to raise the turn timeout.',
  'failure.bridge_error':
    "The agent's bridge failed while handling this mail, so no answer could be produced. Send the mail again later; an admin should check the bridge log for the cause.",
  // ==== end failure ====

  // ==== subject (a send without a subject: see subjectForSend) ====
  'subject.none': '(no subject)',
  // ==== end subject ====

  // ==== relay (auto relay mails: see SPEC B-10) ====
  'relay.subject': 'Re: {subject}',
  // ==== end relay ====

  // ==== permission (denial reasons, question mails: see SPEC P-1..P-9) ====
  'permission.plan.denied':
    'The tool "{tool}" is not available: this session is in plan mode (read and look only). Do not try it again or by other means. Put your plan in your reply instead: what you would change, where, and why, step by step.',
  'permission.denied.person': 'A person denied this tool call; it did not run.',
  'permission.denied.timeout':
    'Nobody answered the approval request in time, so this tool call was refused; it did not run.',
  'permission.denied.aborted':
    'The turn was stopped while waiting for approval, so this tool call was refused; it did not run.',
  'permission.denied.shutdown':
    'The agent is shutting down, so this tool call did not run. No person refused it: the request was only cut short.',
  'permission.denied.note': 'Their note: {note}',
  'permission.denied.fresh_mails':
    'Mails that arrived while you were waiting (read them; they may change what you should do):',
  'permission.denied.fresh_mail': '- "{subject}" from {from_name}',
  'permission.denied.advice':
    'Do not ask again for the same call. Change course: continue without it, or explain in your reply what you need and why.',
  'permission.denied.advice_shutdown':
    'Stop here for now and do not try the call by other means. The mail stays unread and is delivered again when the agent restarts; then you may ask for this call again, and the person may approve it.',
  'permission.failure.conflict':
    'The approval request was refused by the Gateway: {words}. The tool call did not run.',
  'permission.failure.full_mode':
    'The session is in full permission mode, which never asks; the tool call may run.',
  'permission.failure.refused':
    'The approval request was refused by the Gateway (HTTP {status}): {words}. Retrying will not succeed, so the tool call did not run; continue without it or explain in your reply what you need.',
  'permission.failure.duplicate':
    'This approval question was already asked (same request key), so it was not sent again and the tool call did not run. Do not repeat it; continue without it or wait for the answer to arrive by mail.',
  'permission.failure.unavailable':
    'The approval request could not reach the Gateway ({cause}) and there is no local prompt to ask instead, so the tool call did not run. You may try again later.',
  'permission.failure.yield':
    'The approval request could not reach the Gateway ({cause}); the local prompt decides instead.',
  'permission.failure.unexpected':
    'The approval request failed with an unexpected answer (HTTP {status}), so the tool call did not run.',
  'permission.ask.question': '{agent} wants to run the tool "{tool}". Allow it?',
  'permission.ask.context': 'Tool: {tool}\nInput:\n{input}\nWorking directory: {cwd}',
  'permission.ask.sandbox': 'Sandbox: {status}',
  'permission.failure.no_details': 'no details given',
  'permission.question.free_text_marker': '(answer in your own words)',
  'permission.question.several_marker': '(you may choose several)',
  'permission.question.hint_choose_one': 'Answer with one of the options.',
  'permission.question.hint_choose_many':
    'Answer with the options you choose: at least one for each question.',
  'permission.question.hint_free_text': 'Answer in your own words.',
  'permission.question.hint_mixed': 'For the questions without options, answer in your own words.',
  'permission.question.context': 'Asked by {agent} while working in {cwd}.',
  'permission.question.failed':
    'The question could not be asked by mail ({cause}). Continue without the answer, or say in your reply what you need to know.',
  'permission.question.declined': 'The person declined to answer the question.',
  'permission.question.declined_note': 'The person declined to answer the question. Their note: {note}',
  'permission.turn_ended':
    'This turn has ended (it finished, timed out or was stopped), so the tool call did not run and nobody was asked.',
  'permission.question.no_answer':
    'No answer came ({cause}). Continue without it, or say in your reply what you need to know.',
  'permission.ended.timeout': 'it timed out',
  'permission.ended.aborted': 'its turn was stopped',
  'permission.ended.shutdown': 'its bridge shut down',
  'permission.ended.restart': 'its bridge started again',
  'permission.ended.unknown': 'the agent stopped waiting',
  // ==== end permission ====

  // ==== tools (mail tool descriptions and rendered labels: see SPEC B-17) ====
  'tools.read_inbox.description':
    'List mails in your AgentMail inbox, newest first: sender and own addresses, cc, subject, attachment ids and a snippet. With status "unread" (default) exactly the listed mails are then marked read; status "all" marks nothing.',
  'tools.read_mail.description':
    'Read one mail: body, attachments (with ids), everyone in the thread and the address a reply should go to. A long body comes in pages of at most limit characters: the page says where it starts and ends, the total length and the offset to read on from.',
  'tools.read_thread.description':
    'Read the whole thread (session) of a mail, oldest first, page by page. Without mail_id it reads the thread of the mail you are working on.',
  'tools.send_mail.description':
    'Send a mail. "to" is an address name@/absolute/path.session, or just a name; the session "new" starts a new session. Attach uploaded files with attachment_ids. An agent receives nothing unless you call this tool.',
  'tools.forward_mail.description':
    'Forward a mail, quoting it and its attachments, to another address with an optional comment.',
  'tools.upload_attachment.description':
    'Upload a local file (absolute path, at most 25 MB) as an attachment. Returns the attachment id to pass in attachment_ids of send_mail.',
  'tools.download_attachment.description':
    'Save an attachment to a local file. The path must be absolute and inside an allowed directory (your working directory); an existing directory keeps the original file name. Existing files are never overwritten.',
  'tools.suggest_address.description':
    'Suggest addresses for a name and/or a working directory (existing sessions, announced workspaces). Read only.',
  'tools.list_contacts.description':
    'List the agents and people you can mail: default address, platform, workspaces and whether they are online. Read only.',
  'tools.session_participants.description':
    'List who takes part in a session: addresses, person or agent, and who has not spoken yet. Without session_id it uses the current session.',
  'tools.connect_to_server.description':
    'Connect this agent to another AgentMail Gateway (URL, optionally a new agent key). The new server is tried first; if that fails, the current connection stays as it is.',
  'tools.ask_person.description':
    'Ask the person you work for a question by mail and wait for the answer: use it only for a decision only they can make (a choice between approaches, a name, a missing fact), not for approvals of tool calls. With options the person picks by label (several with multi_select); without options they answer in their own words. The person may be away: the answer may take long, or come back as no answer or declined; then continue without it or say in your reply what you need.',
  'tools.param.question':
    'The question, complete on its own (the person reads it by mail, maybe on a phone).',
  'tools.param.options': 'Answer options (labels, at most 50). Leave out for a free-text answer.',
  'tools.param.multi_select': 'true: the person may choose several options. Default false.',
  'tools.ask_person.chose': 'The person chose: {labels}',
  'tools.ask_person.wrote': 'The person answered: {text}',
  'tools.ask_person.chose_and_wrote': 'The person chose: {labels}. They also wrote: {text}',
  'tools.ask_person.no_turn':
    'ask_person works only in a turn started by a mail; in this session ask the person here directly.',
  'tools.param.status':
    'unread (default): only unread mails, and mark the listed ones read. all: every mail, marks nothing.',
  'tools.param.limit': 'How many mails to list (1-100). Default 5.',
  'tools.param.session_id': 'Only mails of this session (session id).',
  'tools.param.mail_id': 'Id of the mail.',
  'tools.param.thread_mail_id': 'Id of any mail of the thread. Default: the mail you are working on.',
  'tools.param.offset': 'Index of the first mail of the page (0 = oldest). Default 0.',
  'tools.param.to':
    'Recipient address: name, name@/absolute/path. or name@/absolute/path.session (session "new" = a new session).',
  'tools.param.subject': 'Subject line.',
  'tools.param.body': 'Mail text.',
  'tools.param.cc': 'More recipients (addresses), in copy.',
  'tools.param.reply_to': 'Id of the mail this one answers.',
  'tools.param.session_alias': 'Alias for the session a "new" address creates.',
  'tools.param.attachment_ids': 'Ids of uploaded attachments (from upload_attachment or a received mail).',
  'tools.param.max_rounds': 'Round budget of a newly created session (1-1000).',
  'tools.param.comment': 'Text put above the forwarded mail.',
  'tools.param.upload_path': 'Absolute path of the local file to upload.',
  'tools.param.filename': "File name to store. Default: the file's own name.",
  'tools.param.content_type': 'MIME type, e.g. text/plain. Default application/octet-stream.',
  'tools.param.attachment_id': 'Id of the attachment.',
  'tools.param.download_path':
    'Absolute target file path, or an existing directory to keep the original name.',
  'tools.param.name': 'Agent or person name.',
  'tools.param.path': 'Absolute working directory.',
  'tools.param.participants_session_id': 'Session id. Default: the current session.',
  'tools.param.url': 'Gateway URL, e.g. http://host:8080.',
  'tools.param.key': 'Agent key for that Gateway. Default: the current key.',
  'tools.label.person': '(person)',
  'tools.label.agent': '(agent)',
  'tools.label.from': 'From',
  'tools.label.to': 'To',
  'tools.label.cc': 'Cc',
  'tools.label.subject': 'Subject',
  'tools.label.date': 'Date',
  'tools.label.session': 'Session',
  'tools.label.reply_address': 'Reply to',
  'tools.label.self_address': 'Your address',
  'tools.label.attachments': 'Attachments',
  'tools.label.in_reply_to': 'In reply to',
  'tools.label.mode': 'Permission mode',
  'tools.label.participants': 'Participants',
  'tools.label.unread': 'unread',
  'tools.label.read': 'read',
  'tools.label.all': 'all',
  'tools.label.relay': 'relay',
  'tools.label.permission': 'permission request',
  'tools.label.calendar': 'calendar',
  'tools.label.none': '(none)',
  'tools.label.online': 'online',
  'tools.label.offline': 'offline',
  'tools.label.last_seen': 'last seen',
  'tools.label.never': 'never',
  'tools.label.workspaces': 'Workspaces',
  'tools.label.platform': 'Platform',
  'tools.label.silent': 'has not spoken yet',
  'tools.label.bytes': '{size} bytes',
  'tools.inbox.header': 'Inbox ({status}): {shown} shown, {unread} unread in total.',
  'tools.inbox.empty': 'No mails ({status}).',
  'tools.inbox.more': 'More mails are waiting: call read_inbox again.',
  'tools.inbox.marked': 'Marked as read: {ids}.',
  'tools.inbox.mark_failed': 'Could not mark the listed mails read ({message}); they stay unread.',
  'tools.thread.header': 'Thread of {session} ({session_id}): mails {first}-{last} of {total}, oldest first.',
  'tools.thread.more': 'More: call read_thread with offset {next_offset}.',
  'tools.mail.page':
    '[Body characters {from}-{to} of {total}. Read on: call read_mail with mail_id {mail_id} and offset {to}.]',
  'tools.mail.page_last': '[Body characters {from}-{to} of {total}: the end of the body.]',
  'tools.mail.page_past':
    '[offset {offset} is past the end of the body ({total} characters): call read_mail with a smaller offset.]',
  'tools.param.body_offset': 'Character of the body to start at (0 = the beginning). Default 0.',
  'tools.param.body_limit': 'Most characters of the body to show (1-100000). Default 20000.',
  'tools.participants.header': 'Participants of {session} ({session_id}):',
  'tools.contacts.header': 'Contacts ({count}):',
  'tools.contacts.empty': 'No contacts.',
  'tools.suggest.header': 'Suggested addresses:',
  'tools.suggest.empty': 'No address found for that name or path. Call list_contacts to see who exists.',
  'tools.session.named': 'session {session_alias}',
  'tools.session.default': 'the default session',
  'tools.send.done':
    'Sent mail {mail_id} to {address} ({session}, {session_id}). Rounds left: {rounds_left}.',
  'tools.send.free': 'free',
  'tools.send.duplicate': 'Already sent before as mail {mail_id}; nothing new was sent.',
  'tools.forward.done': 'Forwarded mail {source_id} as mail {mail_id} to {address} ({session}).',
  'tools.upload.done':
    'Uploaded {filename} ({size} bytes) as attachment {id}. Send it with send_mail attachment_ids ["{id}"].',
  'tools.download.done': 'Saved attachment {id} to {path} ({size} bytes).',
  'tools.connect.done': 'Connected to {url}. Mail and events now come from this Gateway.',
  'tools.connect.same': 'Already connected to {url} with this key; nothing changed.',
  'tools.connect.failed':
    'Could not connect to {url}: {message}. Still connected to {current}; nothing changed.',
  'tools.connect.switch_failed':
    'The new Gateway {url} answered, but switching to it failed: {message}. Still connected to {current}.',
  'tools.connect.unsupported':
    'connect_to_server is not available on this platform: the bridge cannot switch servers. Ask the operator to change AGENTMAIL_GATEWAY_URL.',
  'tools.error.args': '{tool}: invalid arguments: {detail} Fix the named field and call {tool} again.',
  'tools.error.transient': '{tool} failed: {message}. This is temporary; try again later.',
  'tools.error.permanent':
    '{tool} failed: {message}. Repeating the same call will not help; change the arguments.',
  'tools.error.local': '{tool} failed: {message}',
  'tools.error.no_session':
    '{tool} needs a session_id: none was given and this turn has no current session. Pass session_id.',
  'tools.error.no_mail':
    '{tool} needs a mail_id: none was given and this turn has no current mail. Pass mail_id.',
  'tools.error.need_name_or_path': 'suggest_address needs "name" or "path" (or both).',
  'tools.error.not_configured':
    '{tool} cannot run: this AgentMail tool server has no Gateway connection ({detail}). Ask the person who set up the plugin to set AGENTMAIL_GATEWAY_URL and AGENTMAIL_AGENT_KEY in the environment of their coding client.',
  // ==== end tools ====

  // ==== host (bridges whose host is a separate program: Claude Code, ZCode) ====
  'host.setup.hooks_missing':
    "the AgentMail plugin's permission hooks did not run in {host} ({detail}), so no tool call could be guarded; the run was stopped before the model was asked. Check that the plugin directory is complete (hooks/hooks.json) and that {host} is not started with options that disable hooks",
  'host.setup.tools_missing':
    'the AgentMail mail tools did not start in {host} ({detail}); the model could not have read the mail. Check that Node.js runs for the plugin (AGENTMAIL_NODE) and the plugin is built',
  'host.no_result': '{host} ended without a result ({detail})',
  'host.setup.plugin_missing':
    'the AgentMail plugin is not loaded in {host} ({detail}), so nothing could be guarded and the mail tools are missing; nothing was run. Add {plugin_dir} to {config} and check with `{check}`',
  'host.not_found':
    'the {host} command could not be started ({detail}); nothing was run. Install {host}, or set {variable} to the absolute path of its executable',
  // ==== end host ====

  // ==== sandbox (a host's tools confined in the workspace sandbox: see SPEC P-12) ====
  'sandbox.grep.no_ripgrep':
    "grep cannot search: ripgrep (rg) is not installed (in the sandbox grep runs the system's rg or pi's own copy in {dir}). Search with bash instead, e.g. grep -rn PATTERN PATH.",
  // ==== end sandbox ====

  // ==== gateway (mail texts the Gateway writes) ====
  'gateway.permission.subject.approval': 'Permission from {agent}: {question}',
  'gateway.permission.subject.question': 'Question from {agent}: {question}',
  'gateway.permission.body.approval_options': 'Answer with one of:',
  'gateway.permission.body.options': 'Options:',
  'gateway.permission.body.options_several': 'Options (several allowed):',
  'gateway.permission.body.free_text': 'Answer in your own words.',
  'gateway.permission.body.context': 'Context:',
  'gateway.permission.body.how_approval':
    '(asked by {agent}; answer with: agentmail approve {request_id}, or agentmail deny {request_id})',
  'gateway.permission.body.how_question':
    '(asked by {agent}; answer with: agentmail answer {request_id} <your answer>)',
  'gateway.forward.subject': 'Fwd: {subject}',
  'gateway.forward.header': '---------- Forwarded mail ----------\nFrom: {from_name}\nSubject: {subject}',
  // ==== end gateway ====

  ...EN_WEB,
  ...EN_OPS,
} as const satisfies Record<string, string>;

/** Every key of the text catalogue. */
export type TextKey = keyof typeof EN;
