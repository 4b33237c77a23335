/**
 * `pnpm demo`: the main job on real input, in one command. Starts the Gateway (`agentmail serve`
 * child process, embedded SQLite in a temp directory), the scripted model server and the pi bridge
 * (`agentmail-pi` daemon, one real pi worker per mail) through the testkit harness; the person
 * `alice` mails `pi@<workspace>.new` a task that needs a file read, a shell command (approval asked
 * by mail, granted with the `agentmail` CLI as a child process) and a reply; then prints the thread
 * as `agentmail thread` shows it, the permission exchange and the timings, stops everything and
 * checks that no process it started is left.
 *
 * `AGENTMAIL_REPLY_PROVIDER` + `AGENTMAIL_REPLY_MODEL` (both set) switch the bridge to that real
 * pi provider instead of the scripted model; the provider's key comes from its usual environment
 * variable (e.g. `ANTHROPIC_API_KEY`). Built and run by demo/tsup.config.ts (see the `demo` script).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { catalogue } from '@agentmail/shared-policy';
import {
  cleanEnv,
  DEFAULT_MODEL_ID,
  gatewayCliPath,
  ManagedProcess,
  type RecordedRequest,
  type Scenario,
  type Stack,
  startStack,
} from '@agentmail/testkit';
import { piAdapter, prepareBundle, removeBundle } from '../harness/pi-adapter.js';
import { DEMO_SECTIONS } from './sections.js';

/** Name of the demo's agent: mail goes to `pi@<workspace>.new`. @default 'pi' */
const DEMO_AGENT_NAME = 'pi';

/** The whole demo is stopped (exit 1) after this long with the scripted model, in ms. @default 120_000 */
const DEMO_TIMEOUT_MS = 120_000;

/** The same with a real provider (slower turns), in ms. @default 600_000 */
const DEMO_REAL_PROVIDER_TIMEOUT_MS = 600_000;

/** Time one wait (permission, reply) may take with the scripted model, in ms. @default 60_000 */
const DEMO_STEP_TIMEOUT_MS = 60_000;

const NOTES = ['Buy milk', 'Call the plumber', 'Water the plants', 'Book the dentist'];
const SUBJECT = 'How long is notes.txt?';
const BODY =
  'Hi pi, please read notes.txt in this folder, check its length with `wc -l notes.txt` and mail me the count and the first item.';

const provider = process.env.AGENTMAIL_REPLY_PROVIDER ?? '';
const modelId = process.env.AGENTMAIL_REPLY_MODEL ?? '';
const realModel = provider !== '' && modelId !== '' ? `${provider}/${modelId}` : undefined;

/** The mail id the turn prompt names (`prompt.field.mail_id`, e.g. "Mail id: m_…"). */
function mailIdIn(prompt: string): string {
  const [before, after = ''] = catalogue('en')['prompt.field.mail_id'].split('{mail_id}');
  const quote = (t: string): string => t.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const id = new RegExp(`${quote(before ?? '')}([A-Za-z0-9_:-]+)${quote(after)}`).exec(prompt)?.[1];
  if (id === undefined) throw new Error('the turn prompt names no mail id');
  return id;
}

const WC_OUTPUT = /^\s*(\d+)\s+notes\.txt/m;

/**
 * The scripted model: read_mail → read notes.txt → bash `wc -l notes.txt` → the answer, each
 * step chosen by what the request carries (the newest tool result), never by call counts.
 */
function scenarios(): Scenario[] {
  const shell = piAdapter.toolNames.shell;
  const read = piAdapter.toolNames.readFile;
  return [
    { name: 'title', match: { hasTools: false }, reply: { type: 'text', text: 'notes.txt length' } },
    {
      name: 'answer',
      match: { toolResultContains: WC_OUTPUT },
      reply: (request: RecordedRequest) => {
        const lines = request.toolResults.map((r) => WC_OUTPUT.exec(r.text)?.[1]).find(Boolean) ?? '?';
        return {
          type: 'text',
          text: `notes.txt has ${lines} lines (\`wc -l notes.txt\`); the first item is "${NOTES[0]}".`,
        };
      },
    },
    {
      name: 'wc',
      match: { toolResultContains: NOTES[0] ?? '' },
      reply: {
        type: 'tool_calls',
        calls: [{ name: shell, arguments: piAdapter.shellArgs?.('wc -l notes.txt') ?? {} }],
      },
    },
    {
      name: 'read-file',
      match: { toolResultContains: 'wc -l notes.txt' },
      reply: {
        type: 'tool_calls',
        calls: [{ name: read, arguments: piAdapter.readFileArgs?.('notes.txt') ?? {} }],
      },
    },
    {
      name: 'read-mail',
      match: { lastUserMessage: SUBJECT, hasToolResult: false, hasTools: true },
      reply: (request: RecordedRequest) => ({
        type: 'tool_calls',
        calls: [{ name: 'read_mail', arguments: { mail_id: mailIdIn(request.lastUserText) } }],
      }),
    },
  ];
}

/** Elapsed ms since `start` (performance clock), rounded. */
const since = (start: number): number => Math.round(performance.now() - start);

/** True while a member of the process group `pgid` is alive. */
function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Pids of this process's own children still running (Linux `/proc`; [] elsewhere). The bundler's
 * service process (esbuild, started by tsup) is one: it lives until it notices our exit, so the
 * demo ends it itself rather than leave it running past its own exit.
 */
function ownChildren(): number[] {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // `pid (comm) state ppid …`: comm may hold spaces and parentheses, so read after the last ')'.
      const stat = readFileSync(`/proc/${entry}/stat`, 'latin1');
      const [state, ppid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(ppid) === process.pid && state !== 'Z') pids.push(Number(entry));
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** Resolves once process `pid` is gone (or a zombie), or after `timeoutMs` (checked every 20 ms). */
async function pidGone(pid: number, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (ownChildren().includes(pid)) {
    if (performance.now() > end) return false;
    await new Promise((done) => setTimeout(done, 20));
  }
  return true;
}

/** Progress on stderr, so stdout is what a person reads (and what the README shows). */
const progress = (text: string): void => {
  process.stderr.write(`· ${text}\n`);
};

let stackStarting: Promise<Stack> | undefined;
const groups: Array<{ name: string; pgid: number }> = [];

/**
 * Pids of the pi workers the daemon logged (`worker spawned`, and `worker` on turn lines). Each
 * leads its own process group (its tool processes are in it), outside the daemon's group: a daemon
 * stopped gracefully ends them, but one killed outright (the harness's last-resort SIGKILL on
 * ctrl-C) leaves them to notice the lost IPC channel on their own, so the demo ends them itself.
 */
function workerPids(bridge: ManagedProcess | undefined): number[] {
  const pids = new Set<number>();
  for (const line of bridge?.lines() ?? []) {
    const json = line.replace(/^\[stderr\] /, '');
    if (!json.startsWith('{')) continue;
    try {
      const entry = JSON.parse(json) as { event?: unknown; worker_pid?: unknown; worker?: unknown };
      if (typeof entry.worker === 'number') pids.add(entry.worker);
      if (entry.event === 'worker_spawned' && typeof entry.worker_pid === 'number')
        pids.add(entry.worker_pid);
    } catch {
      // not a log line
    }
  }
  return [...pids];
}

/** Resolves once no member of group `pgid` is left, or after `timeoutMs` (checked every 20 ms). */
async function gone(pgid: number, timeoutMs: number): Promise<boolean> {
  const end = performance.now() + timeoutMs;
  while (groupAlive(pgid)) {
    if (performance.now() > end) return false;
    await new Promise((done) => setTimeout(done, 20));
  }
  return true;
}

/** Stops everything the demo started; never rejects. Returns the process groups still alive. */
async function cleanup(): Promise<Array<{ name: string; pgid: number }>> {
  const stack = await stackStarting?.catch(() => undefined);
  const bridge = stack?.bridge;
  await stack?.close();
  if (bridge !== undefined) groups.push({ name: 'bridge-pi (daemon)', pgid: bridge.pid });
  for (const pid of workerPids(bridge)) {
    groups.push({ name: `pi worker ${pid}`, pgid: pid });
    if (groupAlive(pid)) process.kill(-pid, 'SIGKILL');
  }
  await removeBundle().catch(() => {});
  const left: Array<{ name: string; pgid: number }> = [];
  for (const g of groups) if (!(await gone(g.pgid, 2_000))) left.push(g);
  for (const pid of ownChildren()) {
    try {
      process.kill(pid, 'SIGTERM');
    } catch {
      // gone meanwhile
    }
    if (!(await pidGone(pid, 2_000))) left.push({ name: `child ${pid}`, pgid: pid });
  }
  return left;
}

/**
 * Runs `agentmail <args>` as alice (a real child process in its own group; URL and token through
 * the environment, HOME in the stack's temp directory) and returns its stdout lines.
 * @throws Error with its output when it exits non-zero.
 */
async function agentmail(stack: Stack, cliJs: string, args: readonly string[]): Promise<string[]> {
  const proc = ManagedProcess.spawn(`agentmail ${args[0] ?? ''}`, process.execPath, [cliJs, ...args], {
    env: cleanEnv({
      HOME: join(stack.rootDir, 'home'),
      AGENTMAIL_GATEWAY_URL: stack.gatewayUrl,
      AGENTMAIL_TOKEN: stack.person.token,
    }),
    cwd: stack.workdir,
  });
  groups.push({ name: proc.name, pgid: proc.pid });
  const exit = await proc.exited;
  if (exit.code !== 0)
    throw new Error(`agentmail ${args.join(' ')} exited ${exit.code ?? exit.signal}:\n${proc.tail()}`);
  return proc.lines().filter((line) => !line.startsWith('[stderr] '));
}

async function main(): Promise<void> {
  const stepTimeoutMs = realModel === undefined ? DEMO_STEP_TIMEOUT_MS : DEMO_REAL_PROVIDER_TIMEOUT_MS;
  const out: string[] = [];
  const timings: Array<[string, number | string]> = [];

  progress('bundling the Gateway CLI and the pi bridge from their sources (cached after the first run)');
  let t = performance.now();
  const cliJs = await gatewayCliPath();
  const gatewayBuildMs = since(t);
  t = performance.now();
  await prepareBundle();
  const bridgeBuildMs = since(t);

  progress('starting the Gateway, the model server, alice and the agent key');
  t = performance.now();
  stackStarting = startStack({
    agentName: DEMO_AGENT_NAME,
    platform: 'pi',
    personName: 'alice',
    scenarios: realModel === undefined ? scenarios() : [],
  });
  const stack = await stackStarting;
  const gatewayStartMs = since(t);
  groups.push({ name: 'gateway', pgid: stack.gateway.pid });
  await writeFile(join(stack.workdir, 'notes.txt'), `${NOTES.join('\n')}\n`);

  // The admin's model selection for pi bridges (SPEC B-8): the scripted model, or the real one.
  await stack.setAllowedModels('pi', [realModel ?? DEFAULT_MODEL_ID]);

  progress('starting the pi bridge');
  t = performance.now();
  await stack.startBridge(
    piAdapter,
    realModel === undefined ? {} : { AGENTMAIL_REPLY_PROVIDER: provider, AGENTMAIL_REPLY_MODEL: modelId },
  );
  const bridgeReadyMs = since(t);

  const to = stack.taskAddress();
  progress(`alice mails ${to}`);
  const sentAtMs = Date.now();
  t = performance.now();
  const sent = await stack.sendAs(undefined, to, {
    subject: SUBJECT,
    body: BODY,
    permissionMode: 'workspace',
  });
  const firstRequest =
    realModel === undefined
      ? stack.awaitModelRequest({ lastUserMessage: SUBJECT, hasTools: true }, stepTimeoutMs)
      : undefined;
  const reply = stack.awaitReply({ threadOf: sent.mail_id, from: DEMO_AGENT_NAME, timeoutMs: stepTimeoutMs });
  const asked = stack.awaitPermission({ timeoutMs: stepTimeoutMs });
  // Each is awaited below (or loses the race): a rejection meanwhile must not be "unhandled".
  for (const pending of [firstRequest, reply, asked]) pending?.catch(() => {});

  // The bridge asks before running the shell command (workspace mode): alice grants it from the CLI.
  const permission = await Promise.race([asked, reply.then(() => undefined)]);
  const permissionLines: string[] = [];
  let approvalMs: number | undefined;
  if (permission === undefined) {
    if (realModel === undefined) throw new Error('the bridge replied without asking for the shell command');
    permissionLines.push('(the model answered without a guarded tool call: no permission was asked)');
  } else {
    const askedAt = performance.now();
    progress(`permission ${permission.id} asked by mail; alice runs agentmail permissions / approve`);
    const listed = await agentmail(stack, cliJs, ['permissions']);
    const id = /^(\S+)\s+approval\b/m.exec(listed.join('\n'))?.[1];
    if (id === undefined) throw new Error(`agentmail permissions listed no approval:\n${listed.join('\n')}`);
    const approved = await agentmail(stack, cliJs, ['approve', id]);
    permissionLines.push('$ agentmail permissions', ...listed, '', `$ agentmail approve ${id}`, ...approved);
    if (realModel === undefined) {
      await stack.awaitModelRequest(
        { lastUserMessage: SUBJECT, toolResultContains: WC_OUTPUT },
        stepTimeoutMs,
      );
      approvalMs = since(askedAt);
    }
  }

  const answer = await reply;
  const replyMs = since(t);
  const first = await firstRequest;
  progress('reply received; alice reads the thread with agentmail thread');
  const thread = await agentmail(stack, cliJs, ['thread', sent.mail_id]);

  if (realModel === undefined) {
    const unmatched = stack.model.unmatched();
    if (unmatched.length > 0)
      throw new Error(
        `model requests no scenario answered: ${unmatched.map((r) => r.lastUserText.slice(0, 80)).join(' | ')}`,
      );
    if (!answer.body.includes(`has ${NOTES.length} lines`))
      throw new Error(`the reply does not carry the wc -l count: ${answer.body}`);
  }

  timings.push(
    ['bundle the Gateway CLI from its sources (cached across runs)', gatewayBuildMs],
    ['bundle the pi bridge daemon and worker', bridgeBuildMs],
    ['Gateway start (child process, SQLite, alice, agent key)', gatewayStartMs],
    ['bridge ready (daemon registered, event stream open)', bridgeReadyMs],
    [
      'mail → first model request (worker spawned, pi session open)',
      first === undefined ? 'n/a (real provider)' : first.receivedAtMs - sentAtMs,
    ],
    ['approval round trip (asked → CLI approve → shell output at the model)', approvalMs ?? 'n/a'],
    ['mail → reply in alice’s inbox', replyMs],
  );

  out.push(
    `AgentMail demo: alice mails ${DEMO_AGENT_NAME}, a pi agent, through the Gateway`,
    `model: ${realModel ?? 'scripted (OpenAI-compatible test server; AGENTMAIL_REPLY_PROVIDER/AGENTMAIL_REPLY_MODEL for a real one)'}`,
    `workspace: ${stack.workdir} (notes.txt, ${NOTES.length} lines)`,
    '',
    `${DEMO_SECTIONS.thread} ${sent.mail_id}`,
    ...thread,
    '',
    DEMO_SECTIONS.permission,
    ...permissionLines,
    '',
    DEMO_SECTIONS.timings,
    ...timings.map(([label, ms]) => `${label.padEnd(72, ' ')} ${typeof ms === 'number' ? `${ms} ms` : ms}`),
  );
  process.stdout.write(`${out.join('\n')}\n`);
}

const deadline = setTimeout(
  () => {
    void fail(
      new Error(
        `the demo did not finish within ${(realModel ? DEMO_REAL_PROVIDER_TIMEOUT_MS : DEMO_TIMEOUT_MS) / 1000} s`,
      ),
    );
  },
  realModel === undefined ? DEMO_TIMEOUT_MS : DEMO_REAL_PROVIDER_TIMEOUT_MS,
);
deadline.unref();

let ending = false;
async function finish(code: number): Promise<never> {
  ending = true;
  const left = await cleanup();
  if (left.length > 0) {
    process.stderr.write(
      `processes still running: ${left.map((g) => `${g.name} (group ${g.pgid})`).join(', ')}\n`,
    );
    process.exit(1);
  }
  if (code === 0)
    process.stdout.write(
      `\n${DEMO_SECTIONS.clean}: ${groups.length} process groups started, none left running.\n`,
    );
  else process.stderr.write(`${DEMO_SECTIONS.clean} (${groups.length} process groups checked).\n`);
  process.exit(code);
}

async function fail(error: unknown): Promise<never> {
  if (ending) return new Promise<never>(() => {});
  ending = true; // one way out: a second failure or a signal meanwhile changes nothing
  const stack = await stackStarting?.catch(() => undefined);
  process.stderr.write(`\ndemo failed: ${error instanceof Error ? error.message : String(error)}\n`);
  if (stack !== undefined) process.stderr.write(`${stack.logs(30)}\n`);
  return finish(1);
}

process.on('unhandledRejection', (error) => void fail(error));
process.on('uncaughtException', (error) => void fail(error));
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
  process.on(signal, () => {
    if (ending) return;
    process.stderr.write(`\n${signal}: stopping every process the demo started\n`);
    void finish(130);
  });

main().then(() => finish(0), fail);
