/**
 * Entry of a worker child process (see SPEC B-12): the kit's worker (`runChildTurnWorker`)
 * receives one job over IPC, runs one turn on `piTurns` (src/worker.ts) (or the probe, src/probe.ts),
 * reports over IPC and exits. Forked by the kit's launcher with an IPC channel; nothing else.
 */
import { enableCompileCache } from 'node:module';
import { runChildTurnWorker } from '@agentmail/bridge-kit/child-worker';
import { WORKER_NICE, WORKER_NICE_ENV } from './constants.js';
import { lowerPriority } from './priority.js';
import type { ProbeReport, ProbeTask } from './probe.js';

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

runChildTurnWorker<ProbeTask, ProbeReport>({
  turns: async (job, emit) => {
    const agentDir = process.env.PI_CODING_AGENT_DIR;
    if (!agentDir) throw new Error('PI_CODING_AGENT_DIR is not set (the daemon sets it for its workers)');
    return (await turnModule).piTurns(job, agentDir, emit);
  },
  task: async (task) => (await import('./probe.js')).runProbe(task),
});
