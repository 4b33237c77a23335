import {
  type AttachmentInfo,
  type Mail,
  type MailSummary,
  type OfflineRecipient,
  type PermissionMode,
  type PersonSendRequest,
  parseAddress,
  type SendMailResponse,
} from '@agentmail/protocol';
import type { Command } from 'commander';
import { type CliContext, parseIntOption } from './context.js';
import { CliError, isCliError } from './errors.js';
import type { HumanApi } from './http.js';
import { attachmentFiles } from './http.js';
import {
  BODY_LIMIT_WORDS,
  checkBodyText,
  checkSubject,
  readBodyFile,
  readBodyStream,
  replacementWarning,
} from './mail-body.js';
import { type CliIo, oneLine, printJson, shortTime, table, textBlock, truncate } from './output.js';
import { closestNames } from './person-errors.js';
import { requestLine, SEND_WAIT_DEFAULT_S, SEND_WAIT_MAX_S, waitForAnswer } from './wait-reply.js';

/** Inbox page size of `agentmail inbox` without `--limit`. @default 20 */
export const CLI_INBOX_DEFAULT_LIMIT = 20;

/** Most thread pages `agentmail thread` fetches (20 mails each). @default 50 */
export const THREAD_MAX_PAGES = 50;

/** How a session is named in the CLI's output: its alias, or `default session` (a default session has no alias). */
export function sessionName(alias: string): string {
  return alias === '' ? 'default session' : alias;
}

function sender(m: MailSummary): string {
  return `${m.from_name}${m.from_human ? '' : ' (agent)'}`;
}

function attachmentLine(a: AttachmentInfo): string {
  return `Attached: ${oneLine(a.filename)} (${a.size_bytes} bytes, ${oneLine(a.content_type)}) id ${oneLine(a.id)}  → agentmail attachment get ${oneLine(a.id)}`;
}

/**
 * One mail as `read` and `thread` show it. Every field that came from a sender is shown inert
 * (SPEC H-1): header fields as one line each (a line break in a subject can not fake a header),
 * the body as a block.
 */
export function formatMail(mail: Mail): string {
  const f = oneLine;
  const lines = [
    `Mail:     ${f(mail.id)}${mail.status === 'unread' ? '  (unread)' : ''}`,
    `From:     ${f(sender(mail))} <${f(mail.from_address)}>`,
    `To:       ${mail.to.map((p) => f(p.address)).join(', ')}`,
  ];
  if (mail.cc.length > 0) lines.push(`Cc:       ${mail.cc.map((p) => f(p.address)).join(', ')}`);
  lines.push(`Date:     ${shortTime(mail.created_at)}`, `Subject:  ${f(mail.subject)}`);
  lines.push(
    `Session:  ${f(sessionName(mail.session_alias))} (${f(mail.session_id)}), mode ${mail.permission_mode}`,
  );
  if (mail.in_reply_to !== '') lines.push(`Reply to: ${f(mail.in_reply_to)} (from ${f(mail.parent_from)})`);
  lines.push(`Reply as: agentmail send ${f(mail.reply_address)} --reply-to ${f(mail.id)} …`);
  for (const a of mail.attachments) lines.push(attachmentLine(a));
  lines.push('', textBlock(mail.body));
  return lines.join('\n');
}

const MODES: readonly PermissionMode[] = ['plan', 'workspace', 'full'];

/** Commander's collector for a repeatable option (`--attach a --attach b`). */
function collect(value: string, previous: string[] = []): string[] {
  return [...previous, value];
}

/** "queued: echo is offline since 2026-12-01 10:00 (last seen …); the mail waits for it" (SPEC H-3, G-39). */
export function offlineLine(r: OfflineRecipient): string {
  const name = oneLine(r.name);
  if (r.offline_since === null) return `queued: ${name} has not connected yet; the mail waits for it`;
  return `queued: ${name} is offline since ${shortTime(r.offline_since)}; the mail waits and is delivered when it is back`;
}

/** `sent m_… to echo@/w. (default session, mode workspace)` plus the queued lines (H-3). */
function sentLines(sent: SendMailResponse): string[] {
  if (sent.status === 'duplicate_relay') return [`already sent as ${sent.mail_id}`];
  const mode = sent.permission_mode === undefined ? '' : `, mode ${sent.permission_mode}`;
  const lines = [
    `sent ${sent.mail_id} to ${oneLine(sent.address)} (${sent.session_alias === '' ? 'default session' : `session ${oneLine(sent.session_alias)}`}${mode})`,
  ];
  for (const r of sent.offline_recipients ?? []) lines.push(offlineLine(r));
  return lines;
}

/**
 * Add what the person may have meant to an unknown recipient error: the closest names among the
 * contacts ("did you mean: echo"), and, for an alias that may be the tail of a directory name
 * with a dot, the address form that works (`name@/srv/my.project.`, SPEC G-3).
 */
async function withHints(err: unknown, api: HumanApi, to: string): Promise<unknown> {
  if (!isCliError(err) || err.code !== 'AM_CLI_SERVER_REFUSED') return err;
  const code = (err.body as { code?: unknown } | undefined)?.code;
  let address: ReturnType<typeof parseAddress>;
  try {
    address = parseAddress(to);
  } catch {
    return err;
  }
  const hints: string[] = [];
  if (code === 'AM_GW_UNKNOWN_RECIPIENT') {
    const names = await api.contacts().then(
      (r) => r.contacts.map((c) => c.name),
      () => [] as string[],
    );
    const close = closestNames(address.name, names);
    if (close.length > 0) hints.push(`did you mean: ${close.join(', ')}`);
  }
  if (code === 'AM_GW_UNKNOWN_ALIAS' && address.path !== '' && address.session !== '')
    hints.push(
      `if ${address.path}.${address.session} is the directory, end the address with a dot: ${address.name}@${address.path}.${address.session}.`,
    );
  if (hints.length === 0) return err;
  return new CliError('SERVER_REFUSED', err.message, {
    ...(err.status === undefined ? {} : { status: err.status }),
    ...(err.body === undefined ? {} : { body: err.body }),
    ...(err.detail === undefined ? {} : { detail: err.detail }),
    suggestion: [...hints, ...(err.suggestion === undefined ? [] : [err.suggestion])].join('\n'),
  });
}

/** The body: `--body <text>`, `--body -` (stdin) or `--body-file <path>`, each held to the one limit. */
async function readBody(io: CliIo, body: string | undefined, bodyFile: string | undefined): Promise<string> {
  if (body !== undefined && bodyFile !== undefined)
    throw new CliError('USAGE', 'give the body once: --body or --body-file, not both', {
      suggestion: 'agentmail send <to> --body-file <path>   or   agentmail send <to> --body <text>',
    });
  if (bodyFile !== undefined) return readBodyFile(bodyFile, io.cwd);
  if (body === undefined)
    throw new CliError('USAGE', 'send needs a body: --body <text>, --body - (stdin) or --body-file <path>', {
      suggestion: 'agentmail send <to> -s <subject> -b <text>   (a long text: --body-file <path>)',
    });
  if (body === '-') return readBodyStream(io.stdin());
  const warning = replacementWarning('--body', body);
  if (warning !== undefined) io.err(warning);
  return checkBodyText(body);
}

/** Register `send`, `inbox`, `read` and `thread` (`attachment get` is attachments.ts). */
export function registerMailCommands(program: Command, ctx: CliContext): void {
  registerSendCommand(program, ctx);
  registerInboxCommand(program, ctx);
  registerReadCommands(program, ctx);
}

/**
 * `send --wait`: wait for the answer to `sent` (SPEC B-9: a reply or the failure mail), show it
 * (`--json`: `json(answer)`) and mark it read; the session's requests and a lost Gateway are said
 * on stderr meanwhile.
 * @throws CliError `AM_CLI_ANSWER_FAILED` after showing a failure mail; `AM_CLI_WAIT_TIMEOUT`.
 */
async function showAnswer(
  ctx: CliContext,
  cmd: Command,
  api: HumanApi,
  sent: SendMailResponse,
  waitS: number,
  json: (answer: Mail) => unknown,
): Promise<void> {
  const { url, token } = await ctx.config(cmd);
  const answer = await waitForAnswer({
    api,
    url,
    token: token ?? '',
    sent,
    timeoutMs: waitS * 1000,
    onRequest: (request) => ctx.io.err(requestLine(request)),
    onConnection: (state) =>
      ctx.io.err(
        state === 'lost'
          ? `lost the Gateway at ${url}; reconnecting (still waiting for the answer to ${sent.mail_id})`
          : `reconnected to ${url}`,
      ),
  });
  if (answer.status === 'unread') await api.markRead([answer.id]);
  if (ctx.globals(cmd).json) printJson(ctx.io, json(answer));
  else ctx.io.out(`\n${formatMail(answer)}`);
  if (answer.failure === true)
    throw new CliError(
      'ANSWER_FAILED',
      `the answer to ${sent.mail_id} is a failure mail: the mail was not processed`,
      { suggestion: 'its cause is in the mail above; fix it, then send the mail again' },
    );
}

/** `agentmail send`: every local check (mode, rounds, subject, files, body) before any upload. */
function registerSendCommand(program: Command, ctx: CliContext): void {
  program
    .command('send')
    .description('send a mail to an agent or a person (name, name@/path, name@/path.new, name@/path.alias)')
    .argument('<to>', 'recipient address')
    .option(
      '-s, --subject <subject>',
      "subject line (at most 500 characters); without it, the body's first line (shortened) is the subject",
    )
    .option(
      '-b, --body <text>',
      `body text, or "-" to read it from stdin (at most ${BODY_LIMIT_WORDS}; a shell refuses an argument over ~128 KB: use --body-file or --body - for a long text)`,
    )
    .option('--body-file <path>', 'read the body from this file (UTF-8; instead of --body)')
    .option('--cc <address>', 'copy to this address (repeat for more)', collect)
    .option('--reply-to <mail_id>', 'id of the mail this answers')
    .option(
      '-a, --attach <file>',
      'attach this file (repeat for more; ≤25 MB each; all checked before any upload)',
      collect,
    )
    .option(
      '--mode <mode>',
      'permission mode: plan | workspace | full (a new session; an existing one only for its owner)',
    )
    .option('--max-rounds <n>', 'round budget of a new session')
    .option(
      '--wait [seconds]',
      `then wait for the answer (default ${SEND_WAIT_DEFAULT_S} s) and show it; exit 1 for a failure mail or no answer in time`,
    )
    .action(async (to: string, opts: Record<string, unknown>, cmd: Command) => {
      const mode = opts.mode as string | undefined;
      if (mode !== undefined && !MODES.includes(mode as PermissionMode)) {
        throw new CliError('USAGE', `option "--mode" must be one of plan, workspace, full; got "${mode}"`, {
          suggestion: '--mode plan (read only), --mode workspace or --mode full; or leave it out',
        });
      }
      const maxRounds =
        opts.maxRounds === undefined
          ? undefined
          : parseIntOption('--max-rounds', String(opts.maxRounds), 1, 1000);
      const waitS =
        opts.wait === undefined
          ? undefined
          : opts.wait === true
            ? SEND_WAIT_DEFAULT_S
            : parseIntOption('--wait', String(opts.wait), 1, SEND_WAIT_MAX_S);
      // No subject: the Gateway gives the mail the one rule's subject (the body's first line).
      const subject = checkSubject(opts.subject === undefined ? '' : String(opts.subject));
      const subjectWarning = replacementWarning('--subject', subject);
      if (subjectWarning !== undefined) ctx.io.err(subjectWarning);
      // Everything local first — every file, the body — so a problem sends and uploads nothing.
      const files = await attachmentFiles((opts.attach as string[] | undefined) ?? [], ctx.io.cwd);
      const body = await readBody(
        ctx.io,
        opts.body === undefined ? undefined : String(opts.body),
        opts.bodyFile === undefined ? undefined : String(opts.bodyFile),
      );
      const api = await ctx.api(cmd);
      const attachments: AttachmentInfo[] = [];
      for (const file of files) attachments.push((await api.uploadFile(file)).attachment);
      const req: PersonSendRequest = { to, subject, body };
      const cc = opts.cc as string[] | undefined;
      if (cc !== undefined) req.cc = cc;
      if (opts.replyTo !== undefined) req.reply_to = String(opts.replyTo);
      if (attachments.length > 0) req.attachment_ids = attachments.map((a) => a.id);
      if (mode !== undefined) req.permission_mode = mode as PermissionMode;
      if (maxRounds !== undefined) req.max_rounds = maxRounds;
      let sent: SendMailResponse;
      try {
        sent = await api.send(req);
      } catch (err) {
        throw await withHints(err, api, to);
      }
      const json = ctx.globals(cmd).json;
      if (waitS === undefined || sent.status === 'duplicate_relay') {
        if (json) return printJson(ctx.io, { ...sent, attachments });
        ctx.io.out(sentLines(sent).join('\n'));
        return;
      }
      if (!json) ctx.io.out(sentLines(sent).join('\n'));
      await showAnswer(ctx, cmd, api, sent, waitS, (answer) => ({ ...sent, attachments, answer }));
    });
}

/** `agentmail inbox`: a page of mails, newest first, and how to get the older ones. */
function registerInboxCommand(program: Command, ctx: CliContext): void {
  program
    .command('inbox')
    .description('list your mails, newest first: unread by default, --all for every mail')
    .option('--all', 'include read mails')
    .option('-n, --limit <n>', `how many (1-100, default ${CLI_INBOX_DEFAULT_LIMIT}): the newest n`)
    .option('--before <mail_id>', 'older pages: only mails older than this one (the last id of a page)')
    .action(async (opts: { all?: boolean; limit?: string; before?: string }, cmd: Command) => {
      const limit =
        opts.limit === undefined ? CLI_INBOX_DEFAULT_LIMIT : parseIntOption('--limit', opts.limit, 1, 100);
      const api = await ctx.api(cmd);
      const inbox = await api.inbox({
        status: opts.all ? 'all' : 'unread',
        limit,
        order: 'newest',
        ...(opts.before === undefined ? {} : { before: opts.before }),
      });
      if (ctx.globals(cmd).json) return printJson(ctx.io, inbox);
      if (inbox.mails.length === 0) {
        ctx.io.out(opts.before !== undefined ? 'no older mail' : opts.all ? 'no mail' : 'no unread mail');
        return;
      }
      const rows = inbox.mails.map((m) => [
        `${m.status === 'unread' ? '*' : ' '} ${m.id}`,
        shortTime(m.created_at),
        truncate(sender(m), 24),
        truncate(m.is_permission ? `[permission] ${m.subject}` : m.subject),
        truncate(sessionName(m.session_alias), 32),
      ]);
      ctx.io.out(table(['  ID', 'DATE', 'FROM', 'SUBJECT', 'SESSION'], rows));
      const last = inbox.mails[inbox.mails.length - 1]?.id ?? '';
      const more = inbox.has_more
        ? `; older: agentmail inbox${opts.all ? ' --all' : ''} --before ${last}${opts.limit === undefined ? '' : ` --limit ${limit}`}`
        : '';
      ctx.io.out(`${inbox.unread_count} unread${more}`);
    });
}

/** `agentmail read` (one mail, marked read) and `agentmail thread` (its whole thread). */
function registerReadCommands(program: Command, ctx: CliContext): void {
  program
    .command('read')
    .description('show one mail with its body and attachments, and mark it read')
    .argument('<id>', 'mail id')
    .option('--keep-unread', 'do not mark the mail read')
    .action(async (id: string, opts: { keepUnread?: boolean }, cmd: Command) => {
      const api = await ctx.api(cmd);
      const { mail } = await api.mail(id);
      if (!opts.keepUnread && mail.status === 'unread') await api.markRead([id]);
      if (ctx.globals(cmd).json) return printJson(ctx.io, { mail });
      ctx.io.out(formatMail(mail));
    });

  program
    .command('thread')
    .description('show the whole thread a mail belongs to, oldest first')
    .argument('<id>', 'mail id')
    .action(async (id: string, _opts: unknown, cmd: Command) => {
      const api = await ctx.api(cmd);
      let page = await api.thread(id, { offset: 0 });
      const mails = [...page.mails];
      for (let i = 1; page.next_offset !== null && i < THREAD_MAX_PAGES; i++) {
        page = await api.thread(id, { offset: page.next_offset });
        mails.push(...page.mails);
      }
      const thread = {
        session_id: page.session_id,
        session_alias: page.session_alias,
        total: page.total,
        mails,
      };
      if (ctx.globals(cmd).json) return printJson(ctx.io, thread);
      ctx.io.out(
        `Thread ${oneLine(sessionName(thread.session_alias))} (${oneLine(thread.session_id)}): ${thread.total} mails`,
      );
      for (const mail of mails) {
        ctx.io.out(`\n${'─'.repeat(60)}`);
        ctx.io.out(formatMail(mail));
      }
      if (mails.length < thread.total) ctx.io.out(`\n(${thread.total - mails.length} more not shown)`);
    });
}
