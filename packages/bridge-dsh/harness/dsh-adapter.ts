/**
 * The DSH `HostHarness` of the testkit harness: the real pinned `dsh` in a sandbox under the
 * bridge state directory (`DSH_HOME`, HOME), the scripted model as the `llm-deepseek` route,
 * the plugin bundled from the sources and loaded by path (`--patch`, the development route) or
 * installed into the profile with `dsh plugin add` (the user route). `start` returns the dsh
 * process; the harness counts the bridge started once its event stream to the Gateway is open.
 */
import { join } from 'node:path';
import type { BridgeEnv, HostHarness, ManagedProcess } from '@agentmail/testkit';
import { sharedBundle } from './build.js';
import { dshBin } from './dsh-bin.js';
import { createDshSandbox, type DshProfileKind, type DshSandbox } from './sandbox.js';

/** How {@link createDshAdapter} runs dsh. */
export interface DshAdapterOptions {
  /** @default 'base' */
  profile?: DshProfileKind;
  /** Extra environment for dsh. */
  env?: (env: BridgeEnv) => Record<string, string>;
}

/** The launcher arguments of one dsh start. */
export function dshArgs(sandbox: DshSandbox, profile: DshProfileKind): string[] {
  const app = profile === 'web' ? ['--no-open', '--port', '0'] : [];
  return [dshBin(), '--profile', sandbox.profile, '--patch', sandbox.overlay, ...app];
}

/** Spawns dsh for `env` (sandbox under `env.stateDir/dsh`, cwd = the mails' workdir). */
export async function spawnDsh(env: BridgeEnv, options: DshAdapterOptions = {}): Promise<ManagedProcess> {
  const profile = options.profile ?? 'base';
  const bundle = await sharedBundle();
  const sandbox = createDshSandbox({
    root: join(env.stateDir, 'dsh'),
    profile,
    modelBaseUrl: env.modelBaseUrl,
    modelIds: env.modelIds,
    pluginJs: bundle.pluginJs,
  });
  return env.spawn(process.execPath, dshArgs(sandbox, profile), {
    env: { ...env.processEnv, ...sandbox.env, ...(options.env?.(env) ?? {}) },
    cwd: env.workdir,
  });
}

/**
 * DSH 0.1.0-rc.8's tool names and argument shapes: bash takes `command` + `description`, read and
 * write take `file_path`; the question tool is `ask_user_question` (`questions: [{ id, question,
 * header?, options?: [{ label, description? }] }]`).
 */
export function createDshAdapter(options: DshAdapterOptions = {}): HostHarness {
  return {
    platform: 'dsh',
    modelProvider: 'deepseek-official',
    toolNames: { shell: 'bash', readFile: 'read', writeFile: 'write', editFile: 'edit' },
    shellArgs: (command) => ({ command, description: 'Run a shell command' }),
    // The plugin runs inside dsh, whose shell is dsh's child (README "What the model can read").
    toolsInBridgeProcess: true,
    readFileArgs: (path) => ({ file_path: path }),
    questions: {
      tool: 'ask_user_question',
      args: (questions) => ({ questions: questions.map((q) => ({ ...q })) }),
    },
    readyTimeoutMs: 60_000,
    stepTimeoutMs: 45_000,
    // A scripted dsh turn takes 0.1–1.7 s (bench, quiet and loaded): 8 s is ample, and the
    // turn-timeout scenario of both profiles waits that long instead of 15 s.
    shortTurnTimeoutMs: 8_000,
    start: (env) => spawnDsh(env, options),
  };
}

/** The base-profile adapter (dsh-base alone, the plugin by path). */
export const dshAdapter: HostHarness = createDshAdapter();
