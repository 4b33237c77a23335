/**
 * The permission-hook runner: one process per hook event of a host whose hooks are processes
 * (Claude Code, ZCode). Host-neutral: the host's stdin and stdout shapes come from its
 * {@link HostProfile}; the decision comes from the bridge over the turn RPC (SPEC B-21).
 *
 * - A mail-driven run (the bridge put `AGENTMAIL_BRIDGE_SOCKET` and `AGENTMAIL_TURN_TOKEN` in
 *   the host's environment): every guarded call is decided by the bridge's permission flow
 *   (mode, "always" grants, asking the person by mail and waiting: P-1..P-7). Every failure
 *   fails closed — a bridge that does not answer, a bad stdin, a crash: deny (P-5, B-21).
 * - A person's own session (no RPC variables): no decision, so the host shows its own prompt (P-5);
 *   for a host whose profile says `own-stream` (ZCode) with the person's key and session, the hook
 *   asks by mail itself (hook-interactive.ts), yielding to the host's prompt on any failure.
 * - SessionStart: proves to the bridge that the plugin's hooks run in this process tree (P-8)
 *   by writing {@link HOOK_READY_MARKER} to stderr, which the host reports in its hook events;
 *   stdout stays empty (a SessionStart hook's stdout becomes model context).
 *
 * Imports only the light RPC client (`node:net`) and `node:crypto`: a hook's start is on the path
 * of every tool call.
 *
 * @module
 */

import { createHash } from 'node:crypto';
import { rpcDenialText, TurnRpcClient } from '@agentmail/bridge-kit/rpc-client';
import { type Locale, messageOf, resolveLocale } from '@agentmail/shared-policy';
import {
  type HookEvent,
  HookInputError,
  type HookOutput,
  type HookVerdict,
  type HostProfile,
} from './hook-profile.js';

export * from './hook-profile.js';

/** What the SessionStart hook writes to stderr once the bridge answered with the turn's context. */
export const HOOK_READY_MARKER = 'agentmail-hook: ready';

/**
 * Environment variable the bridge sets to the time a permission may wait for a person, in ms
 * (its turn timeout): the hook then answers (deny) before the host's own hook timeout kills it.
 */
export const PERMISSION_WAIT_ENV = 'AGENTMAIL_PERMISSION_WAIT_MS';

/**
 * Set to `1` by a bridge's startup self-check (no turn, so no RPC variables): the SessionStart
 * hook then writes {@link HOOK_READY_MARKER} although no bridge answers (SPEC P-8: the check
 * proves the plugin's hooks are registered before any mail arrives).
 */
export const HOOK_SELF_CHECK_ENV = 'AGENTMAIL_HOOK_SELF_CHECK';

/** Time the SessionStart check may take, in ms. @default 10_000 */
export const SESSION_START_CHECK_MS = 10_000;

/** Options of {@link runHook}. */
export interface RunHookOptions {
  host: HostProfile;
  /** The hook's stdin, whole. */
  stdin: string;
  /** The hook's environment. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
}

function localeOf(env: Readonly<Record<string, string | undefined>>): Locale {
  return resolveLocale(env.AGENTMAIL_LOCALE);
}

function waitMs(env: Readonly<Record<string, string | undefined>>): number | undefined {
  const n = Number(env[PERMISSION_WAIT_ENV]);
  return Number.isInteger(n) && n > 0 ? n : undefined;
}

// Resolved at run time beside this file (src/ or the bundle directory): not inlined into the hook bundle.
const INTERACTIVE_MODULE = new URL('./hook-interactive.js', import.meta.url).href;

/**
 * True when the environment holds a person's own connection for the interactive flow: Gateway URL,
 * agent key and the Gateway session this host session works for (`AGENTMAIL_SESSION_ID`).
 */
function hasPersonalConnection(env: Readonly<Record<string, string | undefined>>): boolean {
  return (
    Boolean(env.AGENTMAIL_GATEWAY_URL) &&
    Boolean(env.AGENTMAIL_AGENT_KEY || env.AGENTMAIL_AGENT_SECRET) &&
    Boolean(env.AGENTMAIL_SESSION_ID)
  );
}

/**
 * A call id for an event that has none (Claude Code's PermissionRequest): the same call within a
 * prompt gets the same id, so asking twice is refused by the Gateway as a duplicate (fail closed)
 * instead of mailing the person twice.
 */
function callIdOf(event: HookEvent): string {
  if (event.toolCallId !== '') return event.toolCallId;
  const digest = createHash('sha256')
    .update(`${event.toolName}\n${JSON.stringify(event.input)}`)
    .digest('hex')
    .slice(0, 16);
  return `permission-request:${event.promptId || 'prompt'}:${digest}`;
}

/**
 * Run one hook event: read the host's stdin, decide, and return what to write and the exit code.
 * Never throws: in a mail-driven run every failure is a denial in the host's shape.
 * @example
 * const out = await runHook({ host: CLAUDE_CODE_HOST, stdin }); // a bridge's profile
 * process.stdout.write(out.stdout); process.stderr.write(out.stderr); process.exitCode = out.exitCode;
 */
export async function runHook(options: RunHookOptions): Promise<HookOutput> {
  const { host } = options;
  const env = options.env ?? process.env;
  const locale = localeOf(env);
  let client: TurnRpcClient | undefined;
  try {
    client = TurnRpcClient.fromEnv(env, { locale });
  } catch {
    // AM_RPC_ENV_MISSING: not a mail turn (a person's own session), or a malformed socket path,
    // which only the bridge writes: both mean "no bridge for this process".
  }

  let event: HookEvent;
  try {
    event = host.readEvent(JSON.parse(options.stdin) as unknown);
  } catch (err) {
    const cause = err instanceof HookInputError ? err.message : `hook input is not JSON: ${messageOf(err)}`;
    if (!client) return { stdout: '', stderr: `agentmail-hook: ${cause}\n`, exitCode: 0 };
    // The event is unknown, so no JSON answer fits it: exit 2 blocks the call in both hosts.
    return { stdout: '', stderr: `${rpcDenialText('failed', { cause }, locale)}\n`, exitCode: 2 };
  }

  if (event.event === 'SessionStart') {
    if (!client) {
      const selfCheck = env[HOOK_SELF_CHECK_ENV] === '1';
      return { stdout: '', stderr: selfCheck ? `${HOOK_READY_MARKER} self-check\n` : '', exitCode: 0 };
    }
    try {
      const ctx = await client.context({ timeoutMs: SESSION_START_CHECK_MS });
      return {
        stdout: '',
        stderr: `${HOOK_READY_MARKER} platform=${ctx.platform} mode=${ctx.permissionMode}\n`,
        exitCode: 0,
      };
    } catch (err) {
      return {
        stdout: '',
        stderr: `agentmail-hook: the bridge did not answer: ${messageOf(err)}\n`,
        exitCode: 0,
      };
    }
  }

  if (!client) {
    if (host.standalone !== 'own-stream' || !hasPersonalConnection(env))
      return host.write(event.event, { kind: 'none' });
    // A person's own session with their key: the interactive flow, loaded only here (it needs the
    // Gateway client and the text catalogue; the mail-driven path above stays light).
    const { decideInteractive } = (await import(
      INTERACTIVE_MODULE
    )) as typeof import('./hook-interactive.js');
    return host.write(event.event, await decideInteractive(host, event, env));
  }
  if (event.event === 'PermissionRequest' && host.mailDrivenPermissionRequest === 'none')
    return host.write(event.event, { kind: 'none' });
  if (host.hostRefuses?.(event)) {
    // The host refuses this call by its own mode whatever the hook says: ask nobody. Only a mail in
    // `plan` itself is decided (the bridge's refusal tells the model to put its plan in the reply).
    const mode = await client
      .context({ timeoutMs: SESSION_START_CHECK_MS })
      .then((c) => c.permissionMode)
      .catch(() => undefined);
    if (mode !== 'plan') return host.write(event.event, { kind: 'none' });
  }
  const wait = waitMs(env);
  const answer = await client.decidePermission(
    {
      toolName: event.toolName,
      input: event.input,
      toolCallId: callIdOf(event),
      platformSessionId: event.sessionId,
      cwd: event.cwd,
      // The host itself asks about this call (its own rules say "ask"): never let it pass unasked.
      ...(event.event === 'PermissionRequest' ? { forceGuarded: true } : {}),
    },
    wait === undefined ? {} : { timeoutMs: wait },
  );
  const verdict: HookVerdict = answer.allow ? { kind: 'allow' } : { kind: 'deny', reason: answer.reason };
  return host.write(event.event, verdict);
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/**
 * The main of a host's hook process (`node hook.js <host id>`, each bridge's own bundled
 * `hook.js`): reads the event from stdin, writes the decision in `host`'s shape and sets the exit
 * code. The id argument must be `host.id`: a hook registered for another host exits 2, which
 * blocks the call (a hook that cannot tell its host must not let a call pass).
 */
export async function runHookMain(host: HostProfile, id: string = process.argv[2] ?? ''): Promise<void> {
  if (id !== host.id) {
    process.stderr.write(
      `agentmail-hook: unknown host "${id}"; this hook.js is ${host.displayName}'s: run it as \`node hook.js ${host.id}\`\n`,
    );
    process.exitCode = 2;
    return;
  }
  const out = await runHook({ host, stdin: await readStdin() });
  if (out.stderr) process.stderr.write(out.stderr);
  if (out.stdout) process.stdout.write(out.stdout);
  process.exitCode = out.exitCode;
}
