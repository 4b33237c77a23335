/**
 * The ZCode `HostHarness` of the testkit harness: the `agentmail-zcode` daemon (bundled,
 * build.ts) run by environment variables only, driving the testkit's ZCode stand-in against the
 * scripted model's Anthropic endpoint. ZCode's home (`~/.zcode/cli/config.json` with the scripted
 * provider and the plugin in `plugins.dirs`, the session database) lives under the stack's bridge
 * state directory, so nothing of a person's own ZCode is read or written.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { askPersonQuestions, type BridgeEnv, type HostHarness, sharedBuild } from '@agentmail/testkit';
import { MAIL_TOOL_PREFIX } from '../src/constants.js';
import { type BuiltBridge, buildBridge } from './build.js';

const bundle = sharedBuild(buildBridge);

/** The bundled daemon, plugin and stand-in, built on first use and shared by the test file. */
export const bundled: () => Promise<BuiltBridge> = bundle.get;

/** Removes the bundle (call in `afterAll`). */
export const removeBundle: () => Promise<void> = bundle.remove;

/** ZCode's user configuration for a scripted model (the Anthropic kind, ZCode's default). */
export function zcodeConfig(
  env: Pick<BridgeEnv, 'modelBaseUrl' | 'modelProvider' | 'modelId' | 'modelIds'>,
  pluginDirs: readonly string[],
): Record<string, unknown> {
  return {
    provider: {
      [env.modelProvider]: {
        kind: 'anthropic',
        name: 'Scripted model',
        options: { baseURL: env.modelBaseUrl.replace(/\/v1\/?$/, ''), apiKey: 'test-key' },
        models: Object.fromEntries(env.modelIds.map((m) => [m, { name: m }])),
      },
    },
    model: { main: `${env.modelProvider}/${env.modelId}` },
    plugins: { dirs: [...pluginDirs] },
  };
}

/** Write `config` as the user configuration of ZCode home `home`. */
export function writeZcodeConfig(home: string, config: Record<string, unknown>): string {
  const dir = join(home, '.zcode', 'cli');
  mkdirSync(dir, { recursive: true });
  const file = join(dir, 'config.json');
  writeFileSync(file, `${JSON.stringify(config, null, 2)}\n`);
  return file;
}

/** How {@link createZcodeAdapter} runs the daemon. */
export interface ZcodeAdapterOptions {
  /** A plugin directory instead of the built copy (e.g. a broken one). */
  pluginDir?: string;
  /** Variables added last (they win), e.g. `AGENTMAIL_ZCODE_WORKSPACE_MODE`. */
  env?: NodeJS.ProcessEnv;
  /** Change ZCode's configuration before the daemon starts. */
  config?: (config: Record<string, unknown>) => Record<string, unknown>;
}

/** The daemon's environment for a harness `env`, ZCode's home written (everything but the spawn). */
export async function daemonEnv(
  env: BridgeEnv,
  options: ZcodeAdapterOptions = {},
): Promise<NodeJS.ProcessEnv> {
  const b = await bundled();
  const pluginDir = options.pluginDir ?? b.pluginDir;
  const home = env.processEnv.HOME ?? join(env.stateDir, 'home');
  const config = zcodeConfig(env, [pluginDir]);
  writeZcodeConfig(home, options.config ? options.config(config) : config);
  const base: NodeJS.ProcessEnv = {};
  // A person's own ZCode settings must not leak in.
  for (const [k, v] of Object.entries(env.processEnv)) if (!k.startsWith('ZCODE_')) base[k] = v;
  return {
    ...base,
    HOME: home,
    AGENTMAIL_ZCODE_BIN: b.zcodeBin,
    AGENTMAIL_ZCODE_PLUGIN_DIR: pluginDir,
    AGENTMAIL_ZCODE_DATA_DIR: join(env.stateDir, 'zcode-data'),
    ...options.env,
  };
}

/**
 * A ZCode adapter: ZCode v3.15.1's tool names and argument shapes (`Bash {command, description}`,
 * `Read {file_path}`), its MCP prefix for the mail tools.
 */
export function createZcodeAdapter(options: ZcodeAdapterOptions = {}): HostHarness {
  return {
    platform: 'zcode',
    toolNames: { shell: 'Bash', readFile: 'Read', writeFile: 'Write', editFile: 'Edit' },
    shellArgs: (command) => ({ command, description: 'Run the command' }),
    readFileArgs: (path) => ({ file_path: path }),
    mailTool: (name) => `${MAIL_TOOL_PREFIX}${name}`,
    // Headless ZCode's AskUserQuestion is refused (no interaction): the kit's ask_person is the seam (P-10).
    questions: askPersonQuestions(`${MAIL_TOOL_PREFIX}ask_person`),
    // The setup check runs `zcode plugins list` once before the bridge connects.
    readyTimeoutMs: 60_000,
    stepTimeoutMs: 45_000,
    // A turn starts the stand-in, its MCP server and a hook per guarded call: ~1 s, more under load.
    shortTurnTimeoutMs: 15_000,
    async start(env) {
      const { daemonJs } = await bundled();
      return env.spawn(process.execPath, [daemonJs], { env: await daemonEnv(env, options) });
    },
  };
}

/** The default adapter: the built plugin and daemon, the PreToolUse gate (`workspace` → `build`). */
export const zcodeAdapter: HostHarness = createZcodeAdapter();
