/**
 * The runner's side of the launcher child (launcher-main.ts, see SPEC B-12): a `fork()` blocks the
 * calling event loop for 5–25 ms, so the runner forks one small launcher and asks it for every
 * worker. A {@link WorkerHandle} stands for one worker behind the launcher.
 */
import { type ChildProcess, fork } from 'node:child_process';
import type {
  ChildTurnEvent,
  LauncherEvent,
  LauncherRequest,
  RunnerMessage,
  WorkerMessage,
} from './messages.js';

/** A worker entry: the module a worker child runs (it calls `runChildTurnWorker`). */
export interface WorkerEntry {
  /** Absolute path of the module. */
  path: string;
  /** Its arguments. @default none */
  args?: readonly string[];
  /** Node options of the worker (e.g. a loader from source). @default the launcher's own */
  execArgv?: readonly string[];
}

/** Why a worker ended: exit code and signal as `child_process` reports them, or why it could not run. */
export interface WorkerExit {
  code: number | null;
  signal: string | null;
  /** Set when the worker could not run, or was lost with its launcher. */
  error?: string;
}

/**
 * One worker child, forked and relayed by the launcher. Messages that arrive before
 * {@link onMessage} is called are kept and handed over then; {@link onceExit} after the exit
 * calls back at once (in a microtask).
 */
export class WorkerHandle {
  /** The worker's pid (its process group id too); undefined when it could not be forked. */
  pid: number | undefined;
  #exit: WorkerExit | undefined;
  #onMessage: ((message: WorkerMessage) => void) | undefined;
  readonly #early: WorkerMessage[] = [];
  readonly #onExit: Array<(exit: WorkerExit) => void> = [];

  constructor(
    readonly id: number,
    readonly owner: ChildLauncher,
  ) {}

  /** True once the worker exited (or was lost). */
  get exited(): boolean {
    return this.#exit !== undefined;
  }

  /** Send a message to the worker; dropped when it exited or the launcher is gone. */
  send(message: RunnerMessage): void {
    if (!this.exited) this.owner.request({ type: 'send', id: this.id, message });
  }

  /** SIGKILL the worker's process group (its tool processes too). */
  kill(): void {
    if (!this.exited) this.owner.kill(this);
  }

  /** The one listener for the worker's messages. */
  onMessage(listener: (message: WorkerMessage) => void): void {
    this.#onMessage = listener;
    for (const message of this.#early.splice(0)) listener(message);
  }

  /** Called once when the worker exits. */
  onceExit(listener: (exit: WorkerExit) => void): void {
    const exit = this.#exit;
    if (exit) queueMicrotask(() => listener(exit));
    else this.#onExit.push(listener);
  }

  /** @internal The launcher relayed a message. */
  deliver(message: WorkerMessage): void {
    if (this.#onMessage) this.#onMessage(message);
    else this.#early.push(message);
  }

  /** @internal The launcher reported the exit. */
  end(exit: WorkerExit): void {
    if (this.#exit) return;
    this.#exit = exit;
    for (const listener of this.#onExit.splice(0)) listener(exit);
  }
}

/**
 * The launcher child and its workers. {@link start} forks it (at the first spawn); when it dies,
 * its workers are killed and reported lost (their turns are redelivered, B-14) and the next
 * {@link spawn} forks a new one. {@link stop} lets it go; it exits when its channel closes.
 */
export class ChildLauncher {
  readonly #path: string;
  readonly #env: () => NodeJS.ProcessEnv;
  readonly #emit: (event: ChildTurnEvent) => void;
  #child: ChildProcess | undefined;
  #nextId = 1;
  readonly #workers = new Map<number, WorkerHandle>();
  /** Spawns waiting for their `spawned` (or `exit`) report. */
  readonly #pending = new Map<number, () => void>();
  #stopped = false;
  #forks = 0;

  /**
   * @param path absolute path of the launcher entry (a module importing launcher-main).
   * @param env environment of the launcher, and so of every worker it forks; read at each launcher fork.
   */
  constructor(path: string, env: () => NodeJS.ProcessEnv, emit: (event: ChildTurnEvent) => void) {
    this.#path = path;
    this.#env = env;
    this.#emit = emit;
  }

  /** Fork the launcher when none runs. */
  start(): void {
    if (this.#stopped || this.#child) return;
    const child = fork(this.#path, [], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], env: this.#env() });
    this.#child = child;
    this.#forks += 1;
    this.#emit({ type: 'launcher_forked', launcher: child.pid ?? 0, restart: this.#forks > 1 });
    child.on('message', (event: LauncherEvent) => this.#onEvent(event));
    const gone = (why: string): void => {
      if (this.#child !== child) return;
      this.#child = undefined;
      // The next spawn forks a new launcher.
      this.#emit({
        type: 'launcher_lost',
        launcher: child.pid ?? 0,
        workers: this.#workers.size,
        reason: why,
      });
      this.#lost(why);
    };
    child.once('error', (err) => gone(`launcher error: ${err.message}`));
    child.once('exit', (code, signal) => gone(`launcher exited (code ${code}, signal ${signal})`));
  }

  /** Let the launcher go (it exits when its channel closes); later spawns fail. */
  stop(): void {
    this.#stopped = true;
    const child = this.#child;
    this.#child = undefined;
    if (child?.connected) child.disconnect();
    this.#lost('the bridge stopped');
  }

  /**
   * Fork a worker through the launcher. Resolves once its pid is known, or with an exited handle
   * when it could not run.
   */
  async spawn(entry: WorkerEntry): Promise<WorkerHandle> {
    const handle = new WorkerHandle(this.#nextId++, this);
    if (this.#stopped) {
      handle.end({ code: null, signal: null, error: 'the bridge is stopping' });
      return handle;
    }
    this.start();
    this.#workers.set(handle.id, handle);
    const known = new Promise<void>((resolve) => this.#pending.set(handle.id, resolve));
    this.request({
      type: 'spawn',
      id: handle.id,
      modulePath: entry.path,
      ...(entry.args ? { args: [...entry.args] } : {}),
      ...(entry.execArgv ? { execArgv: [...entry.execArgv] } : {}),
    });
    await known;
    return handle;
  }

  /** @internal Send a request to the launcher (dropped when it is gone: its exit reports the workers). */
  request(request: LauncherRequest): void {
    const child = this.#child;
    if (child?.connected)
      child.send(request, (err) => err && this.#emit({ type: 'ipc_send_failed', error: err.message }));
  }

  /** @internal SIGKILL a worker's process group, through the launcher or, without one, directly. */
  kill(handle: WorkerHandle): void {
    if (this.#child?.connected) this.request({ type: 'kill', id: handle.id });
    else killGroup(handle.pid);
  }

  #onEvent(event: LauncherEvent): void {
    const handle = this.#workers.get(event.id);
    if (!handle) return;
    switch (event.type) {
      case 'spawned':
        handle.pid = event.pid;
        this.#settle(handle.id);
        break;
      case 'message':
        handle.deliver(event.message);
        break;
      case 'exit':
        this.#workers.delete(handle.id);
        handle.end({
          code: event.code,
          signal: event.signal,
          ...(event.error === undefined ? {} : { error: event.error }),
        });
        this.#settle(handle.id);
        break;
    }
  }

  #settle(id: number): void {
    this.#pending.get(id)?.();
    this.#pending.delete(id);
  }

  /** The launcher is gone: its workers can no longer be reached, so they are killed and lost. */
  #lost(why: string): void {
    for (const handle of [...this.#workers.values()]) {
      this.#workers.delete(handle.id);
      killGroup(handle.pid);
      handle.end({ code: null, signal: null, error: why });
      this.#settle(handle.id);
    }
  }
}

function killGroup(pid: number | undefined): void {
  if (pid === undefined) return;
  try {
    process.kill(-pid, 'SIGKILL');
  } catch {
    // already gone
  }
}
