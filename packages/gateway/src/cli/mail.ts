import type { Mail, MailSummary, PermissionMode, PersonSendRequest } from '@agentmail/protocol';
import type { Command } from 'commander';
import { type CliContext, parseIntOption } from './context.js';
import { CliError } from './errors.js';
import { type CliIo, printJson, shortTime, table, truncate } from './output.js';

/** Inbox page size of `agentmail inbox` without `--limit`. @default 20 */
export const CLI_INBOX_DEFAULT_LIMIT = 20;

/** Most thread pages `agentmail thread` fetches (20 mails each). @default 50 */
export const THREAD_MAX_PAGES = 50;

function sender(m: MailSummary): string {
  return `${m.from_name}${m.from_human ? '' : ' (agent)'}`;
}

function printMail(io: CliIo, mail: Mail): void {
  const lines = [
    `Mail:     ${mail.id}${mail.status === 'unread' ? '  (unread)' : ''}`,
    `From:     ${sender(mail)} <${mail.from_address}>`,
    `To:       ${mail.to.map((p) => p.address).join(', ')}`,
  ];
  if (mail.cc.length > 0) lines.push(`Cc:       ${mail.cc.map((p) => p.address).join(', ')}`);
  lines.push(`Date:     ${shortTime(mail.created_at)}`, `Subject:  ${mail.subject}`);
  lines.push(`Session:  ${mail.session_alias} (${mail.session_id}), mode ${mail.permission_mode}`);
  if (mail.in_reply_to !== '') lines.push(`Reply to: ${mail.in_reply_to} (from ${mail.parent_from})`);
  lines.push(`Reply as: agentmail send ${mail.reply_address} --reply-to ${mail.id} …`);
  for (const a of mail.attachments) {
    lines.push(`Attached: ${a.filename} (${a.size_bytes} bytes, ${a.content_type}) id ${a.id}`);
  }
  lines.push('', mail.body);
  io.out(lines.join('\n'));
}

async function readBody(io: CliIo, body: string): Promise<string> {
  return body === '-' ? io.readStdin() : body;
}

const MODES: readonly PermissionMode[] = ['plan', 'workspace', 'full'];

/** Register `send`, `inbox`, `read` and `thread`. */
export function registerMailCommands(program: Command, ctx: CliContext): void {
  program
    .command('send')
    .description('send a mail to an agent or a person (name, name@/path, name@/path.new, name@/path.alias)')
    .argument('<to>', 'recipient address')
    .requiredOption('-s, --subject <subject>', 'subject line')
    .requiredOption('-b, --body <text>', 'body text, or "-" to read it from stdin')
    .option('--cc <address...>', 'copy to these addresses')
    .option('--reply-to <mail_id>', 'id of the mail this answers')
    .option('-a, --attach <file...>', 'attach these files (uploaded first, ≤25 MB each)')
    .option('--mode <mode>', 'permission mode of a new session: plan | workspace | full')
    .option('--max-rounds <n>', 'round budget of a new session')
    .action(async (to: string, opts: Record<string, unknown>, cmd: Command) => {
      const mode = opts.mode as string | undefined;
      if (mode !== undefined && !MODES.includes(mode as PermissionMode)) {
        throw new CliError('USAGE', `option "--mode" must be one of plan, workspace, full; got "${mode}"`);
      }
      const maxRounds =
        opts.maxRounds === undefined
          ? undefined
          : parseIntOption('--max-rounds', String(opts.maxRounds), 1, 1000);
      const api = await ctx.api(cmd);
      const body = await readBody(ctx.io, String(opts.body));
      const attachments = [];
      for (const file of (opts.attach as string[] | undefined) ?? []) {
        attachments.push((await api.uploadFile(file)).attachment);
      }
      const req: PersonSendRequest = { to, subject: String(opts.subject), body };
      const cc = opts.cc as string[] | undefined;
      if (cc !== undefined) req.cc = cc;
      if (opts.replyTo !== undefined) req.reply_to = String(opts.replyTo);
      if (attachments.length > 0) req.attachment_ids = attachments.map((a) => a.id);
      if (mode !== undefined) req.permission_mode = mode as PermissionMode;
      if (maxRounds !== undefined) req.max_rounds = maxRounds;
      const sent = await api.send(req);
      if (ctx.globals(cmd).json) return printJson(ctx.io, { ...sent, attachments });
      if (sent.status === 'duplicate_relay') {
        ctx.io.out(`already sent as ${sent.mail_id}`);
        return;
      }
      ctx.io.out(`sent ${sent.mail_id} to ${sent.address} (session ${sent.session_alias})`);
    });

  program
    .command('inbox')
    .description('list your mails: unread by default')
    .option('--all', 'include read mails')
    .option('-n, --limit <n>', `how many (1-100, default ${CLI_INBOX_DEFAULT_LIMIT})`)
    .action(async (opts: { all?: boolean; limit?: string }, cmd: Command) => {
      const limit =
        opts.limit === undefined ? CLI_INBOX_DEFAULT_LIMIT : parseIntOption('--limit', opts.limit, 1, 100);
      const api = await ctx.api(cmd);
      const inbox = await api.inbox({ status: opts.all ? 'all' : 'unread', limit });
      if (ctx.globals(cmd).json) return printJson(ctx.io, inbox);
      if (inbox.mails.length === 0) {
        ctx.io.out(opts.all ? 'no mail' : 'no unread mail');
        return;
      }
      const rows = inbox.mails.map((m) => [
        `${m.status === 'unread' ? '*' : ' '} ${m.id}`,
        shortTime(m.created_at),
        truncate(sender(m), 24),
        truncate(m.is_permission ? `[permission] ${m.subject}` : m.subject),
        m.session_alias,
      ]);
      ctx.io.out(table(['  ID', 'DATE', 'FROM', 'SUBJECT', 'SESSION'], rows));
      ctx.io.out(`${inbox.unread_count} unread${inbox.has_more ? '; more with --limit' : ''}`);
    });

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
      printMail(ctx.io, mail);
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
      ctx.io.out(`Thread ${thread.session_alias} (${thread.session_id}): ${thread.total} mails`);
      for (const mail of mails) {
        ctx.io.out(`\n${'─'.repeat(60)}`);
        printMail(ctx.io, mail);
      }
      if (mails.length < thread.total) ctx.io.out(`\n(${thread.total - mails.length} more not shown)`);
    });
}
