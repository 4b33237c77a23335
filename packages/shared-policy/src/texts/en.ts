/**
 * English texts: the default locale and the source of the key set. Every text a model or a
 * person reads (prompt headlines, reply instructions, failure mails, denial reasons, tool
 * descriptions) lives here, keyed by a dotted name. Placeholders are `{name}` and are filled by
 * {@link formatText}. A test checks that `zh-CN` has the same keys and the same placeholders.
 *
 * Keep each area inside its own section marker so parallel edits do not collide.
 */
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
  'permission.failure.no_details': 'no details given',
  'permission.question.free_text_marker': '(answer in your own words)',
  'permission.question.several_marker': '(you may choose several)',
  'permission.question.hint_choose_one': 'Reply with one of the options.',
  'permission.question.hint_choose_many':
    'Reply with the options you choose: at least one for each question.',
  'permission.question.hint_free_text': 'Reply in your own words.',
  'permission.question.hint_mixed': 'For the questions without options, reply in your own words.',
  'permission.question.context': 'Asked by {agent} while working in {cwd}.',
  'permission.question.failed':
    'The question could not be asked by mail ({cause}). Continue without the answer, or say in your reply what you need to know.',
  'permission.question.declined': 'The person declined to answer the question.',
  'permission.turn_ended':
    'This turn has ended (it finished, timed out or was stopped), so the tool call did not run and nobody was asked.',
  'permission.question.no_answer':
    'No answer came ({cause}). Continue without it, or say in your reply what you need to know.',
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

  // ==== web (the web mailbox, packages/web) ====
  'web.loading': 'Loading…',
  'web.nav.label': 'Sections',
  'web.nav.inbox': 'Inbox',
  'web.nav.requests': 'Requests',
  'web.nav.compose': 'Write',
  'web.nav.agents': 'Agents',
  'web.nav.admin': 'Admin',
  'web.nav.sign_out': 'Sign out',
  'web.live.connecting': 'connecting',
  'web.live.live': 'live',
  'web.live.retrying': 'reconnecting',
  'web.live.signed_out': 'signed out',
  'web.signin.intro': 'Sign in to read your mail, write to agents and answer their requests.',
  'web.signin.token': 'Your user token',
  'web.signin.help':
    'The token starts with "amu_". An admin gave it to you (admins: the first `agentmail serve` printed yours). It stays on this device only as a sign-in cookie.',
  'web.signin.submit': 'Sign in',
  'web.signin.bad_token': 'This token is unknown or was revoked. Check it, or ask an admin for a new one.',
  'web.signin.empty': 'Enter your user token to sign in.',
  'web.signin.signed_out': 'You are signed out.',
  'web.error.signed_out': 'You are signed out (the session ended or the token was reset). Sign in again.',
  'web.error.agent_key':
    'This is an agent key. The web mailbox takes a person\'s user token ("amu_…"); ask an admin for yours.',
  'web.error.forbidden': 'You may not do this. Ask an admin.',
  'web.error.no_longer_waiting':
    'No longer waiting: the agent stopped waiting for this answer (its turn ended or its bridge restarted), so your answer changes nothing. If it still needs one, it asks again.',
  'web.error.already_decided':
    'This request was already answered (perhaps in another tab or on the command line).',
  'web.error.origin':
    'Refused: this page is not the AgentMail web mailbox of this Gateway. Open the Gateway address itself and try again.',
  'web.error.too_large': 'Too large. Send less, or attach the content as a smaller file.',
  'web.error.busy': 'Too many requests right now. Wait a moment and try again.',
  'web.error.budget':
    'The conversation has used up its budget of rounds. Start a new task instead (write to the agent\'s ".new" address).',
  'web.error.server':
    'The Gateway had a problem. Try again in a moment; if it keeps failing, the Gateway log has the cause.',
  'web.error.network':
    'Cannot reach the Gateway. Check that it runs and that this device is online, then try again.',
  'web.error.with_detail': '{detail}',
  'web.error.unexpected': 'Something went wrong: {detail}',
  'web.who.agent': 'agent',
  'web.who.person': 'person',
  'web.inbox.title': 'Inbox',
  'web.inbox.unread': 'Unread ({count})',
  'web.inbox.all': 'All',
  'web.inbox.empty_unread': 'No unread mail.',
  'web.inbox.empty_all': 'No mail yet. Write to an agent to start.',
  'web.inbox.more': 'Show more',
  'web.inbox.request': 'request',
  'web.mail.no_subject': '(no subject)',
  'web.mail.from': 'From',
  'web.mail.to': 'To',
  'web.mail.cc': 'Cc',
  'web.mail.relay': 'relayed',
  'web.mail.failure': 'failed',
  'web.mail.failure_note': 'The agent could not process a mail: what went wrong and what to do are below.',
  'web.mail.show_all': 'Show all ({size})',
  'web.mail.attachments': 'Attachments',
  'web.mail.reply': 'Reply',
  'web.mail.forward': 'Forward',
  'web.mail.back': 'Back to the inbox',
  'web.mail.show_plain': 'Show as plain text',
  'web.mail.show_formatted': 'Show formatted',
  'web.mail.image': '[image not loaded: {alt}]',
  'web.thread.session': 'Session {alias}',
  'web.thread.default_session': 'default session',
  'web.thread.continue_at': 'reply goes to {address}',
  'web.thread.open_mail': 'Open the mail of {from}, {when}',
  'web.thread.show_older': 'Show {count} older mails',
  'web.thread.load_earlier': 'Load earlier mails ({count} more)',
  'web.thread.load_newer': 'Load newer mails ({count} more)',
  'web.compose.title': 'Write a mail',
  'web.compose.title_reply': 'Reply',
  'web.compose.title_forward': 'Forward',
  'web.compose.about': 'About: {subject}',
  'web.compose.to': 'To',
  'web.compose.cc': 'Cc',
  'web.compose.subject': 'Subject',
  'web.compose.body': 'Message',
  'web.compose.comment': 'Comment (optional)',
  'web.compose.mode': 'Permission mode',
  'web.compose.mode_keep': "The session's own (workspace for a new session)",
  'web.compose.mode_help':
    'Workspace asks you before the agent runs commands or changes files; plan only reads; full never asks. Only the person who started a session may change its mode.',
  'web.compose.attach': 'Attach files',
  'web.compose.remove': 'Remove',
  'web.compose.send': 'Send',
  'web.compose.uploading': 'Uploading…',
  'web.compose.cancel': 'Cancel',
  'web.compose.sent': 'Sent.',
  'web.compose.re': 'Re: {subject}',
  'web.compose.address_placeholder': 'name, or name@/path.new for a new task',
  'web.compose.error.empty': '{field}: enter an address, e.g. pi@/home/me/project.new',
  'web.compose.error.address':
    '{field}: "{address}" is not an address ({reason}). Pick one from the suggestions.',
  'web.compose.error.one_to': 'To: one address only; put the others in Cc.',
  'web.compose.error.nothing': 'Write a subject or a message.',
  'web.compose.error.upload': '{file} was not attached: {reason}',
  'web.suggest.existing_session': 'existing session',
  'web.suggest.workspace': 'working directory (new session)',
  'web.suggest.default_session': 'default session',
  'web.suggest.person': 'person',
  'web.mode.workspace': 'workspace (ask before changes)',
  'web.mode.plan': 'plan (read only)',
  'web.mode.full': 'full (never ask)',
  'web.requests.title': 'Waiting requests',
  'web.requests.none': 'No agent is waiting for you.',
  'web.request.kind.approval': 'approval',
  'web.request.kind.question': 'question',
  'web.request.approval_from': 'Approval request from {agent}',
  'web.request.question_from': 'Question from {agent}',
  'web.request.context': 'Tool, input and working directory',
  'web.request.command': 'What it runs',
  'web.request.state.approve_once': 'approved once',
  'web.request.state.approve_always': 'always approved',
  'web.request.state.deny': 'denied',
  'web.request.state.answered': 'answered',
  'web.request.state.withdrawn': 'withdrawn',
  'web.request.state.expired': 'expired',
  'web.request.pick_one': 'Choose one',
  'web.request.pick_several': 'Choose one or more',
  'web.request.other_answer': 'Or answer in your own words',
  'web.request.your_answer': 'Your answer',
  'web.request.note': 'Note for the agent (optional)',
  'web.request.note_placeholder': 'e.g. use the staging database instead',
  'web.request.approve': 'Approve once',
  'web.request.always': 'Always approve',
  'web.request.deny': 'Deny',
  'web.request.send_answer': 'Send answer',
  'web.request.decline': 'Decline to answer',
  'web.request.open_mail': 'Open the mail',
  'web.request.pick_or_type': 'Choose an option or write an answer.',
  'web.request.answered': 'Answer sent.',
  'web.request.decided.approve': 'Approved once.',
  'web.request.decided.always': 'Approved for this session.',
  'web.request.decided.deny': 'Denied.',
  'web.request.withdrawn_notice': 'A request is no longer waiting: its agent stopped waiting for the answer.',
  'web.notify.enable': 'Notify me of new requests',
  'web.notify.state.granted': 'Notifications on while this tab is open.',
  'web.notify.state.denied': 'Notifications are blocked in this browser.',
  'web.notify.state.unsupported': 'This browser shows no notifications.',
  'web.notify.approval': '{agent} asks for your approval',
  'web.notify.question': '{agent} has a question',
  'web.agents.title': 'Agents',
  'web.agents.none': 'No agent has registered yet.',
  'web.agents.online': 'online',
  'web.agents.offline': 'offline',
  'web.agents.last_seen': 'last seen {when}',
  'web.agents.never_seen': 'never seen',
  'web.agents.enforcement': 'Permission modes: {mode}',
  'web.agents.enforcement_native': 'enforced by the bridge (native)',
  'web.agents.enforcement_advisory': 'advisory only (the bridge could not install its permission hook)',
  'web.agents.enforcement_unknown': 'not reported yet',
  'web.agents.workspaces': 'Working directories (new task):',
  'web.agents.session': 'Session',
  'web.agents.address': 'Address',
  'web.agents.mode': 'Mode',
  'web.agents.no_sessions': 'You have no sessions with this agent yet.',
  'web.agents.write': 'Write to this agent',
  'web.admin.title': 'Admin',
  'web.admin.only': 'Only admins see this page.',
  'web.admin.people': 'People',
  'web.admin.admin': 'admin',
  'web.admin.new_person': "New person's name",
  'web.admin.add_person': 'Add person',
  'web.admin.reset_token': 'Reset token',
  'web.admin.reset_confirm': 'Give {name} a new token? Their old token and web sessions stop working.',
  'web.admin.token_for': 'Token for {name} (shown once — hand it over now):',
  'web.admin.copy': 'Copy',
  'web.admin.keys': 'Agent keys',
  'web.admin.key_agent': 'Agent',
  'web.admin.key_id': 'Key id',
  'web.admin.key_created': 'Created',
  'web.admin.key_last_used': 'Last used',
  'web.admin.key_never_used': 'never',
  'web.admin.key_name': 'Agent name for a new key',
  'web.admin.issue_key': 'Issue key',
  'web.admin.key_for': "Key for {agent} (shown once — put it in the bridge's AGENTMAIL_AGENT_KEY now):",
  'web.admin.revoke': 'Revoke',
  'web.admin.revoke_confirm': 'Revoke this key of {agent}? A bridge using it stops working.',
  'web.admin.revoked': 'revoked {when}',
  'web.admin.revoked_notice': 'The key of {agent} was revoked.',
  'web.admin.models': 'Models per platform',
  'web.admin.no_platforms': 'No agent has registered yet, so there is no platform to configure.',
  'web.admin.platform': 'Platform',
  'web.admin.selection': 'Selection for mail turns (in order, at most 10)',
  'web.admin.selection_empty': "None: bridges use their host's default model.",
  'web.admin.catalogue': 'Catalogue (what the agents report)',
  'web.admin.catalogue_empty': 'No agent of this platform reported models yet.',
  'web.admin.stale': 'stale: no agent reports it',
  'web.admin.add': 'Add',
  'web.admin.up': 'Move up',
  'web.admin.down': 'Move down',
  'web.admin.save': 'Save selection',
  'web.admin.models_saved': 'Model selection of {platform} saved.',
  // ==== end web ====

  // ==== ops (service crash reports, agentmail doctor: see SPEC §8, B-19) ====
  'ops.crash.subject': '{unit} on {host} stopped: {result}',
  'ops.crash.intro': 'The service {unit} on {host} stopped unexpectedly at {at}.',
  'ops.crash.result': 'Result: {result} ({meaning})',
  'ops.crash.exit': 'Exit: {exit_code} {exit_status}',
  'ops.crash.restart':
    'systemd restarts it on its own (Restart=on-failure); after 5 failed starts in 10 minutes it gives up, and you get a report saying start-limit-hit.',
  'ops.crash.log_header': 'The last {n} lines of its log:',
  'ops.crash.no_log': 'Its log could not be read here.',
  'ops.crash.fix': 'See what happened: {status}   ·   the whole log: {journal}',
  'ops.crash.result.success': 'a normal stop',
  'ops.crash.result.protocol': 'it did not start up the way its unit says',
  'ops.crash.result.timeout': 'it did not start or stop within its timeout',
  'ops.crash.result.exit-code': 'it exited with an error code',
  'ops.crash.result.signal': 'it was killed by a signal',
  'ops.crash.result.core-dump': 'it crashed (core dump)',
  'ops.crash.result.watchdog': 'its watchdog fired',
  'ops.crash.result.start-limit-hit': 'it failed too often; systemd no longer restarts it',
  'ops.crash.result.resources': 'systemd could not set it up (a file, directory or limit)',
  'ops.crash.result.oom-kill': 'it ran out of memory and was killed (MemoryMax)',
  'ops.crash.result.other': 'systemd reported "{result}"',
  'ops.doctor.unknown': 'unknown',
  'ops.doctor.node_ok': 'Node.js {version} (>= {min})',
  'ops.doctor.node_old': 'Node.js {version} is older than {min}',
  'ops.doctor.gateway_ok': 'Gateway at {url} (the URL from {from}) answers, version {version}',
  'ops.doctor.gateway_down': 'no Gateway answers at {url} (the URL from {from}): {error}',
  'ops.doctor.token_none': 'no user token: only the Gateway was checked, not the agents',
  'ops.doctor.token_ok': 'your token works',
  'ops.doctor.token_bad': 'your token (from {from}) is refused: {error}',
  'ops.doctor.none_installed': 'no service is installed for this user',
  'ops.doctor.unit_missing': 'no unit file {path}',
  'ops.doctor.unit_ok': 'unit {path} is valid (systemd-analyze verify)',
  'ops.doctor.unit_invalid': 'unit {path} is not valid: {error}',
  'ops.doctor.unit_ok_system':
    'unit {path} is valid (systemd-analyze verify in system mode: there is no user manager here, no login session)',
  'ops.doctor.unit_no_analyze':
    'unit {path} is present; it could not be verified here: systemd-analyze is not installed',
  'ops.doctor.unit_unverified':
    'unit {path} is present; systemd-analyze could not verify it here, in user or system mode: {error}',
  'ops.doctor.program_ok': 'the program the unit starts is there ({path})',
  'ops.doctor.program_missing':
    'the unit starts {path}, which does not exist (not built yet?): the service cannot start',
  'ops.doctor.env_ok': 'env file {path} (mode 0600)',
  'ops.doctor.env_mode': 'env file {path} has mode {mode}: others can read its key',
  'ops.doctor.env_missing': 'no env file {path}',
  'ops.doctor.dir_ok': 'state directory {path} is writable',
  'ops.doctor.dir_bad': 'state directory {path} is missing or not writable',
  'ops.doctor.dir_not_dir': 'state directory {path} is a file, not a directory',
  'ops.doctor.host_no_version': '{path} --version printed no version: it does not look like {host}',
  'ops.doctor.report_key_ok': "the Gateway's crash reports have an agent key that works ({path})",
  'ops.doctor.report_key_missing':
    "no agent key for the Gateway's own crash reports in {path}: they would stay spooled, unseen",
  'ops.doctor.report_key_refused':
    'the Gateway refuses the key for its own crash reports in {path}: they would stay spooled, unseen',
  'ops.doctor.host_ok': '{host} {version} is installed',
  'ops.doctor.host_missing': '{host} is not installed ({path})',
  'ops.doctor.host_version': '{host} {version} is installed; this bridge is tested with {supported}',
  'ops.doctor.key_missing': 'no agent key or Gateway URL in {path}',
  'ops.doctor.key_ok': 'the Gateway at {url} accepts the agent key',
  'ops.doctor.key_refused': 'the Gateway at {url} refuses the agent key in {path} (unknown or revoked)',
  'ops.doctor.key_unchecked': 'the agent key could not be checked at {url}: {error}',
  'ops.doctor.key_other_name': 'the key is bound to the agent "{bound}", not "{name}"',
  'ops.doctor.not_registered': 'agent {name} is not registered: its bridge has not started with this key yet',
  'ops.doctor.registered': 'agent {name} is registered ({platform}) and the key is bound to it',
  'ops.doctor.online': 'agent {name} is online, last heartbeat {last_seen}',
  'ops.doctor.offline': 'agent {name} is offline, last heartbeat {last_seen}',
  'ops.doctor.never_online': 'agent {name} has never been online',
  'ops.doctor.plugin_builtin': 'the bridge loads its own extension into pi',
  'ops.doctor.plugin_missing': 'the AgentMail plugin is not configured for {host} ({path})',
  'ops.doctor.plugin_loaded': 'the plugin is configured ({path}) and loaded: its agent is online',
  'ops.doctor.plugin_configured':
    'the plugin is configured ({path}); loaded is not known while the agent is offline',
  'ops.doctor.plugin_unproven':
    'the driver is online, but its host may not have loaded the plugin ({path}): mode enforcement is {mode}, not native',
  'ops.doctor.enforcement_native': 'permission modes are enforced natively',
  'ops.doctor.enforcement_advisory': 'permission modes are advisory only: {reason}',
  'ops.doctor.enforcement_unknown':
    'mode enforcement is not known: no heartbeat of agent {name} has said it yet',
  'ops.doctor.enforcement_unasked':
    'mode enforcement is not known: the Gateway at {url} (the URL from {from}) could not be asked: {error}',
  'ops.doctor.enforcement_no_token':
    'mode enforcement is not known: without a user token the Gateway at {url} (the URL from {from}) was not asked',
  'ops.doctor.spooled': '{n} crash report(s) wait to be mailed, the oldest from {oldest}',
  'ops.service.not_built': '{path} is not built yet: run {build} before starting',
  'ops.service.no_report_key':
    "no key for the Gateway's own crash reports yet: once it runs, agentmail service install gateway --issue-key --force",
  'ops.service.other_keys':
    'agent {agent} has {count} other active key(s) beside the new key {key_id} of this service; revoke the ones nothing uses: agentmail agent key list, then agentmail agent key revoke <key id>',
  'ops.service.plugin_env': 'the driver loads {path} into every run ({variable})',
  'ops.service.plugin_added': 'added {path} to {list} of {file}',
  'ops.service.plugin_present': '{path} is already in {list} of {file}',
  'ops.service.admin_token':
    'created the Gateway data in its state directory; admin token (shown once, keep it): {token}',
  'ops.service.admin_saved': 'saved it for the CLI in {path} (as agentmail login does)',
  'ops.service.admin_login': 'log in with it: agentmail login --url <url> --token <token>',
  'ops.service.enable': 'enable and start it:',
  'ops.service.nothing_installed': 'nothing installed',
  'ops.service.kept': 'kept    {path} (its data)',
  'ops.service.key_still_active':
    'the agent key of {name} is still active: agentmail agent key revoke {name}   (when this agent is gone for good)',
  'ops.service.still_running':
    '{unit} is still running: its files are removed, its process runs on until stopped; stop it, then reload:',
  'ops.service.maybe_running':
    'whether {unit} still runs cannot be known here (no user manager: no login session); if it does, its process runs on until stopped; stop it, then reload:',
  'ops.service.port_cli':
    'your CLI config {file} still names {old}: agentmail login --url {url} --token <token>   (or edit its url)',
  'ops.service.port_bridge':
    'the {service} bridge still reaches the Gateway at {old} ({file}): agentmail --url {url} service install {service} --force, then systemctl --user restart {unit}',
  'ops.service.then': 'then:',
  'ops.service.report_not_failure': 'service result "{result}": not a failure, no report',
  'ops.service.report_sent': 'report {id} mailed to {to}',
  'ops.service.report_duplicate': 'report {id} mailed to {to} (already sent before)',
  'ops.service.report_spooled': 'report {id} kept in {file}: {error}',
  'ops.service.none_spooled': 'no spooled reports',
  'ops.service.boot_failed': '{url} did not answer',
  // ==== end ops ====
} as const satisfies Record<string, string>;

/** Every key of the text catalogue. */
export type TextKey = keyof typeof EN;
