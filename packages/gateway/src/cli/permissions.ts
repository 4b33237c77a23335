import type { DecideRequest, DecideResponse, PermissionView } from '@agentmail/protocol';
import { endedReasonText } from '@agentmail/shared-policy';
import type { Command } from 'commander';
import type { CliContext } from './context.js';
import { CliError } from './errors.js';
import type { HumanApi } from './http.js';
import { sessionName } from './mail.js';
import { oneLine, printJson, shortTime, textBlock } from './output.js';

/**
 * One request as `agentmail permissions` shows it. The agent wrote the question, the context and
 * the options: they are shown inert (SPEC H-1), the question and context as blocks of text, names
 * and options as single lines.
 */
export function describePermission(p: PermissionView): string {
  const f = oneLine;
  const id = f(p.id);
  const head = `${id}  ${p.kind}  from ${f(p.agent_name)}  session ${f(sessionName(p.session_alias))}  ${shortTime(p.created_at)}`;
  const status =
    p.status === 'pending'
      ? 'pending'
      : p.status === 'decided'
        ? `decided: ${f(p.decision ?? '')}`
        : // Withdrawn (the asking call stopped waiting) or expired: `decision` says why.
          `no longer waiting: ${endedReasonText(p.decision)}`;
  const lines = [
    `${head}  [${status}]`,
    ...textBlock(p.question)
      .split('\n')
      .map((l) => `  ${l}`),
  ];
  if (p.context !== '')
    lines.push(
      ...textBlock(p.context)
        .split('\n')
        .map((l) => `  | ${l}`),
    );
  const open = p.status === 'pending';
  if (p.kind === 'approval') {
    if (open) lines.push(`  → agentmail approve ${id} [--always]  |  agentmail deny ${id}`);
  } else {
    if (p.options.length > 0)
      lines.push(
        `  options${p.multi_select ? ' (choose one or more)' : ''}: ${p.options.map(f).join(' | ')}`,
      );
    const answer = p.options.length > 0 ? '<option>…' : '<free text>';
    if (open) lines.push(`  → agentmail answer ${id} ${answer}  |  agentmail deny ${id} (decline to answer)`);
  }
  if (p.answers.length > 0) lines.push(`  answers: ${p.answers.map(f).join(' | ')}`);
  if (p.note !== '') lines.push(`  note: ${f(p.note)}`);
  return lines.join('\n');
}

async function findPermission(api: HumanApi, id: string): Promise<PermissionView | undefined> {
  const { permissions } = await api.permissions('all');
  return permissions.find((p) => p.id === id);
}

/**
 * The answers to send for a question: option labels when the question has options (checked
 * against them), else all words joined as one free-text answer (see SPEC P-9).
 * @throws CliError `AM_CLI_USAGE` for an unknown label, several labels on a single-choice
 *   question, or an approval request (which takes `approve`/`deny`).
 */
export function answersFor(permission: PermissionView | undefined, words: readonly string[]): string[] {
  const all = words.join(' ').trim();
  if (all === '')
    throw new CliError('USAGE', 'the answer is empty', {
      suggestion: `give an option or your words: agentmail answer <id> <option>…; to decline: agentmail deny <id>`,
    });
  // Unknown, or no longer waiting: the Gateway's answer says which, in its words.
  if (permission === undefined || permission.status !== 'pending') return [...words];
  if (permission.kind === 'approval') {
    throw new CliError('USAGE', `${permission.id} asks for an approval, not an answer`, {
      suggestion: `use \`agentmail approve ${permission.id}\` or \`agentmail deny ${permission.id}\``,
    });
  }
  if (permission.options.length === 0) return [all];
  // A label as the person types it: trimmed, any case; a label with spaces given unquoted.
  const labelOf = (w: string): string | undefined =>
    permission.options.find((o) => o === w.trim()) ??
    permission.options.find((o) => o.toLowerCase() === w.trim().toLowerCase());
  const whole = labelOf(all);
  if (whole !== undefined) return [whole];
  const unknown = words.filter((w) => labelOf(w) === undefined);
  if (unknown.length > 0) {
    throw new CliError('USAGE', `"${unknown[0]}" is not an option of ${permission.id}`, {
      suggestion: `choose from: ${permission.options.map((o) => JSON.stringify(o)).join(', ')} (quote a label with spaces: agentmail answer <id> "Option A")`,
    });
  }
  const labels = [...new Set(words.map((w) => labelOf(w) as string))];
  if (!permission.multi_select && labels.length > 1) {
    throw new CliError('USAGE', `${permission.id} takes one option, got ${labels.length}`, {
      suggestion: 'quote a label that contains spaces: agentmail answer <id> "Option A"',
    });
  }
  return labels;
}

/** Register `permissions`, `approve`, `deny` and `answer`. */
export function registerPermissionCommands(program: Command, ctx: CliContext): void {
  const done = (cmd: Command, res: DecideResponse): void => {
    if (ctx.globals(cmd).json) printJson(ctx.io, res);
    else ctx.io.out(`${oneLine(res.id)}: ${oneLine(res.decision)}`);
  };
  const decide = async (cmd: Command, id: string, body: DecideRequest): Promise<void> => {
    const api = await ctx.api(cmd);
    done(cmd, await api.decide(id, body));
  };

  program
    .command('permissions')
    .alias('requests')
    .description('list permission requests and questions waiting for you (also: agentmail requests)')
    .option('--all', 'include decided ones')
    .action(async (opts: { all?: boolean }, cmd: Command) => {
      const api = await ctx.api(cmd);
      const res = await api.permissions(opts.all ? 'all' : 'pending');
      if (ctx.globals(cmd).json) return printJson(ctx.io, res);
      if (res.permissions.length === 0) {
        ctx.io.out(opts.all ? 'no permission requests' : 'nothing waiting for you');
        return;
      }
      ctx.io.out(res.permissions.map(describePermission).join('\n\n'));
    });

  program
    .command('approve')
    .description('approve a tool call once (or always, for this session and tool)')
    .argument('<id>', 'permission request id')
    .option('--always', 'approve this tool for the rest of the session')
    .option('--note <text>', 'a note the agent sees')
    .action(async (id: string, opts: { always?: boolean; note?: string }, cmd: Command) => {
      const api = await ctx.api(cmd);
      const asked = await findPermission(api, id);
      if (asked?.kind === 'question' && asked.status === 'pending')
        throw new CliError('USAGE', `${asked.id} is a question, not an approval`, {
          suggestion: `agentmail answer ${asked.id} <option>…, or agentmail deny ${asked.id} to decline`,
        });
      const body: DecideRequest = { decision: opts.always ? 'always' : 'approve' };
      if (opts.note !== undefined) body.note = opts.note;
      done(cmd, await api.decide(id, body));
    });

  program
    .command('deny')
    .description('deny a tool call, or decline to answer a question')
    .argument('<id>', 'permission request id')
    .option('--note <text>', 'why, or what to do instead (the agent sees it)')
    .action(async (id: string, opts: { note?: string }, cmd: Command) => {
      const body: DecideRequest = { decision: 'deny' };
      if (opts.note !== undefined) body.note = opts.note;
      await decide(cmd, id, body);
    });

  program
    .command('answer')
    .description('answer a question: option labels, or free text')
    .argument('<id>', 'question id')
    .argument('<answer...>', 'option label(s), or the words of a free-text answer')
    .option('--note <text>', 'a note the agent sees')
    .action(async (id: string, words: string[], opts: { note?: string }, cmd: Command) => {
      const api = await ctx.api(cmd);
      const answers = answersFor(await findPermission(api, id), words);
      const body: DecideRequest = { answers };
      if (opts.note !== undefined) body.note = opts.note;
      done(cmd, await api.decide(id, body));
    });
}
