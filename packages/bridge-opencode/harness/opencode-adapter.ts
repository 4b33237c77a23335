/**
 * The opencode `HostHarness` of the testkit harness: `opencode serve` (the pinned real binary)
 * in a sandbox under the bridge state directory, serving `BridgeEnv.workdir` (made a git repo so
 * opencode's config search stops there), the scripted model as an `@ai-sdk/openai-compatible`
 * provider named `BridgeEnv.modelProvider` with every `BridgeEnv.modelIds`, and the plugin loaded
 * as a `file://` tuple with options. `start` resolves after the warm-up request, i.e. once the
 * plugin's server function ran (plugins boot lazily under `serve`).
 */
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { askPersonQuestions, type BridgeEnv, type HostHarness } from '@agentmail/testkit';
import { BRIDGE_ROOT, buildPlugin } from './build.js';
import { createSandbox } from './sandbox.js';
import { startServe } from './serve.js';

/** The harness's probe plugin (run from source by opencode's Bun). */
export const PROBE_PLUGIN_PATH = join(dirname(fileURLToPath(import.meta.url)), 'probe-plugin.ts');

let built: ReturnType<typeof buildPlugin> | undefined;

/** The bundled src/plugin.ts, built on first use; the probe plugin while src/plugin.ts does not exist. */
async function pluginPath(): Promise<string> {
  if (!existsSync(join(BRIDGE_ROOT, 'src/plugin.ts'))) return PROBE_PLUGIN_PATH;
  built ??= buildPlugin();
  return (await built).pluginJs;
}

/** Removes the bundle (call in `afterAll`). */
export async function removePluginBundle(): Promise<void> {
  if (built === undefined) return;
  const { remove } = await built;
  built = undefined;
  await remove();
}

/** How {@link createOpencodeAdapter} configures opencode. */
export interface OpencodeAdapterOptions {
  /** Options tuple of the plugin entry. @default {} (the plugin reads `AGENTMAIL_*` from the environment) */
  pluginOptions?: (env: BridgeEnv) => Record<string, unknown>;
  /** Extra `opencode.json` keys (e.g. `permission`). */
  config?: Record<string, unknown>;
  /** Plugin module to load instead of the bundled src/plugin.ts. */
  pluginPath?: string;
}

/**
 * opencode's tool names and argument shapes, from opencode 1.18.33 (tool list offered to the
 * model in serve mode: bash, edit, glob, grep, question, read, skill, task, todowrite, webfetch,
 * write; bash takes `command` + `description`, read takes `filePath`).
 */
export function createOpencodeAdapter(options: OpencodeAdapterOptions = {}): HostHarness {
  return {
    platform: 'opencode',
    toolNames: { shell: 'bash', readFile: 'read', writeFile: 'write', editFile: 'edit' },
    shellArgs: (command) => ({ command, description: 'Run a shell command' }),
    readFileArgs: (path) => ({ filePath: path }),
    // opencode's own `question` tool cannot carry an error back to the model (its reject has no
    // message, P-9): the kit's ask_person mail tool is the seam (P-10), `question` is off in mail turns.
    questions: askPersonQuestions('ask_person', ['question']),
    // The plugin runs inside opencode, whose shell is opencode's child (README "What the model can read").
    toolsInBridgeProcess: true,
    // opencode: 3–15 s to listen on 2 cores, then the warm-up (plugin boot) and the Gateway connect.
    readyTimeoutMs: 90_000,
    stepTimeoutMs: 60_000,
    async start(env) {
      const sandbox = createSandbox({
        root: join(env.stateDir, 'opencode'),
        projectDir: env.workdir,
        modelProvider: env.modelProvider,
        modelBaseUrl: env.modelBaseUrl,
        modelIds: env.modelIds,
        modelId: env.modelId,
        plugin: {
          path: options.pluginPath ?? (await pluginPath()),
          options: options.pluginOptions?.(env) ?? {},
        },
        ...(options.config === undefined ? {} : { config: options.config }),
      });
      const { proc } = await startServe(env.spawn, sandbox, env.processEnv);
      return proc;
    },
  };
}

/** The default adapter: the bundled plugin, no extra config. */
export const opencodeAdapter: HostHarness = createOpencodeAdapter();
