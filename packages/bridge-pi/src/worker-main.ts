/**
 * Entry of a worker child process (see SPEC B-12): receives one job over IPC, runs one turn,
 * reports over IPC and exits. Forked by the daemon with an IPC channel; nothing else.
 */
import { enableCompileCache } from 'node:module';
import type { CommitFn } from '@agentmail/bridge-kit';
import { PendingPermissions } from '@agentmail/shared-policy';
import { WORKER_NICE, WORKER_NICE_ENV } from './constants.js';
import type { DaemonMessage, WorkerMessage } from './ipc.js';
import { lowerPriority } from './priority.js';

// Loading pi dominates worker spawn → first model request: the worker loads pi's single-file
// bundle (pi-sdk.ts), node's on-disk compile cache (under the OS temp dir) spares later workers
// the parse, and the import starts now instead of after the job arrives. The daemon sets PI_CODING_AGENT_DIR
// in the fork environment, so nothing pi reads at load time depends on the job.
enableCompileCache();
// Model work yields the CPU to the daemon (B-12: a slow turn must not stall event reading). A
// worker runs in its own session (its own process group, so a stop can kill its tools too).
// The daemon validated the value (config.ts) and sets it in every worker's environment.
lowerPriority(Number(process.env[WORKER_NICE_ENV] ?? WORKER_NICE));
process.env.PI_OFFLINE ??= '1';
const turnModule = import('./worker.js');
turnModule.catch(() => undefined); // reported when the job awaits it

function send(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

const abort = new AbortController();
const shutdown = new AbortController();
const pending = new PendingPermissions({ signal: shutdown.signal });

process.on('message', (raw: DaemonMessage) => {
  switch (raw.type) {
    case 'job':
      void start(raw);
      break;
    case 'probe':
      void probe(raw);
      break;
    case 'permission_decision':
      pending.resolve(raw.event);
      break;
    case 'abort':
      abort.abort(raw.reason);
      break;
    case 'shutdown':
      // P-7, B-15: pending questions resolve as denied, then the turn is stopped.
      shutdown.abort();
      abort.abort('shutdown');
      break;
    case 'commit_answer':
      commits.get(raw.id)?.(raw.granted);
      commits.delete(raw.id);
      break;
  }
});

/** Commit requests waiting for the daemon's answer. */
const commits = new Map<number, (granted: boolean) => void>();
let nextCommit = 1;
/**
 * The relay's commit gate lives in the daemon (its runtime gives a timed-out turn up): ask it
 * before the relay goes out, report when it settled (one outcome per mail, B-7, B-10). No answer
 * (the daemon went away) is a refusal.
 */
const commit: CommitFn = async (fn) => {
  const id = nextCommit++;
  const granted = await new Promise<boolean>((resolve) => {
    commits.set(id, resolve);
    void send({ type: 'commit_request', id });
  });
  if (!granted) return undefined;
  let ok = false;
  try {
    const value = await fn();
    ok = true;
    return value;
  } finally {
    void send({ type: 'commit_done', id, ok });
  }
};
// The daemon (or its launcher) went away: stop at once (the turn cannot be reported any more).
// This is a shutdown for the turn: no failure mail (the mail stays unread and is delivered again,
// B-14, B-20), unlike a turn timeout.
process.on('disconnect', () => {
  for (const answer of commits.values()) answer(false);
  commits.clear();
  shutdown.abort();
  abort.abort('shutdown');
  // Long enough for a pending request's withdrawal (WITHDRAW_TIMEOUT_MS) to reach the Gateway.
  setTimeout(() => process.exit(1), 6_000).unref();
});

let started = false;
async function start(job: Extract<DaemonMessage, { type: 'job' }>): Promise<void> {
  if (started) return;
  started = true;
  process.env.PI_CODING_AGENT_DIR = job.agentDir;
  const { runTurn } = await turnModule;
  const report = await runTurn(job, {
    pending,
    signal: abort.signal,
    emit: (event) => void send({ type: 'event', event }),
    commit,
    reconnect: (url, key) => void send({ type: 'reconnect', url, key }),
  });
  // A stopped turn's pending request is being withdrawn (the person is told): let that finish.
  // (Loaded by the turn module already; not at the top, so the worker's start stays light.)
  await (await import('@agentmail/bridge-kit')).withdrawalsSettled();
  // The peak RSS rides along for the daemon's log (and the bench).
  await send({ ...report, maxRssKb: process.resourceUsage().maxRSS });
  process.exit(0);
}

async function probe(job: Extract<DaemonMessage, { type: 'probe' }>): Promise<void> {
  if (started) return;
  started = true;
  const { runProbe } = await import('./probe.js');
  await send(await runProbe(job));
  process.exit(0);
}

void send({ type: 'ready' });
