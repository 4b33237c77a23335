/**
 * The launcher child of the child-process turn runner (see SPEC B-12): the runner forks it once,
 * and it forks the worker children on the runner's request, so no `fork()` (which blocks the
 * calling event loop for 5–25 ms) runs in the bridge's process, whose loop reads SSE. It relays
 * worker messages both ways, reports each worker's pid and exit, and kills a worker's process group
 * on request. Kept tiny: node built-ins only (type imports are erased), so its own fork is cheap and
 * it can run from source. When the runner's process goes away it kills what is left of its
 * workers and exits.
 *
 * A bridge's build has an entry that imports this module (`@agentmail/bridge-kit/child-launcher`)
 * and gives that entry's path to `childProcessTurns` as `launcherPath`.
 */
import { type ChildProcess, fork } from 'node:child_process';
import type { LauncherEvent, LauncherRequest, WorkerMessage } from './messages.js';

const workers = new Map<number, ChildProcess>();

function report(event: LauncherEvent): void {
  // With a callback, a send on a closing channel is dropped instead of thrown.
  if (process.connected) process.send?.(event, undefined, undefined, () => undefined);
}

function spawnWorker(request: Extract<LauncherRequest, { type: 'spawn' }>): void {
  const { id, modulePath } = request;
  // detached: the worker leads its own process group, so a kill also ends its tool processes.
  // The environment is the launcher's, set by the runner.
  let child: ChildProcess;
  try {
    child = fork(modulePath, request.args ?? [], {
      detached: true,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      ...(request.execArgv ? { execArgv: request.execArgv } : {}),
    });
  } catch (err) {
    report({ type: 'exit', id, code: null, signal: null, error: (err as Error).message });
    return;
  }
  workers.set(id, child);
  if (child.pid !== undefined) report({ type: 'spawned', id, pid: child.pid });
  let ended = false;
  const end = (code: number | null, signal: string | null, error?: string): void => {
    if (ended) return;
    ended = true;
    workers.delete(id);
    report({ type: 'exit', id, code, signal, ...(error === undefined ? {} : { error }) });
  };
  child.on('message', (message: WorkerMessage) => report({ type: 'message', id, message }));
  child.once('error', (err) => {
    // A failed spawn emits no exit; a failed send or kill is followed by one.
    if (child.pid === undefined) end(null, null, err.message);
  });
  child.once('exit', (code, signal) => end(code, signal));
}

function kill(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    child.kill('SIGKILL');
  }
}

process.on('message', (request: LauncherRequest) => {
  switch (request.type) {
    case 'spawn':
      spawnWorker(request);
      break;
    case 'send': {
      const child = workers.get(request.id);
      if (child?.connected) child.send(request.message, () => undefined);
      break;
    }
    case 'kill': {
      const child = workers.get(request.id);
      if (child) kill(child);
      break;
    }
  }
});
// A stop signal sent to the bridge's whole process group (systemd, Ctrl-C in a terminal) reaches
// the launcher too. The bridge runs the shutdown: its workers deny what waits, withdraw those
// requests and exit first (B-15, P-7) — which they could not if the launcher died at once and took
// them along. The launcher goes when the runner lets go (below).
process.on('SIGTERM', () => undefined);
process.on('SIGINT', () => undefined);
// The runner's process exited or let go: so does the launcher. A worker still running then has
// nobody to report to (a bridge that stops gracefully ends its workers first): end its process
// group too, so nothing of a killed bridge outlives it (B-15).
process.on('disconnect', () => {
  for (const child of workers.values()) kill(child);
  process.exit(0);
});
