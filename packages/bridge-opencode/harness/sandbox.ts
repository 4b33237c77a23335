/**
 * An isolated place for one `opencode serve`: HOME and the XDG directories under a root the
 * caller owns (the bridge state directory in the harness), opencode's own network features off,
 * a pre-seeded config directory (so opencode does not `npm install @opencode-ai/plugin` before it
 * loads plugins: about 15 s online, about 85 s of retries offline), the configuration in a file
 * named by `OPENCODE_CONFIG` (nothing is written into the project but `.git`), and the project
 * directory `git init`ed so opencode's upward search for `opencode.json` / `.opencode/` stops at
 * the project instead of walking up to `/`.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { opencodeVersion } from './opencode-bin.js';

/** What {@link createSandbox} needs. */
export interface SandboxOptions {
  /** Directory that receives HOME, the XDG directories, tmp and the config file (created). */
  root: string;
  /** Existing directory opencode serves; `git init`ed unless it already has `.git`. */
  projectDir: string;
  /** Provider id of the scripted model in opencode's catalogue. */
  modelProvider: string;
  /** OpenAI-compatible base URL, `http://127.0.0.1:<port>/v1`. */
  modelBaseUrl: string;
  /** Every model id to list under the provider. */
  modelIds: readonly string[];
  /** Default model id (`model` and `small_model` = `<provider>/<id>`). */
  modelId: string;
  /** Plugin module to load (absolute path) and the options it receives as second argument. */
  plugin?: { path: string; options?: Record<string, unknown> };
  /** Extra top-level `opencode.json` keys (e.g. `permission`), merged over the defaults. */
  config?: Record<string, unknown>;
}

/** A ready sandbox. */
export interface Sandbox {
  projectDir: string;
  /** Path of the generated `opencode.json` (named by `OPENCODE_CONFIG` in {@link Sandbox.env}). */
  configPath: string;
  /** The config as written. */
  config: Record<string, unknown>;
  /** Variables to set on top of the inherited environment. */
  env: Record<string, string>;
  /** `XDG_DATA_HOME`: opencode keeps `opencode/opencode.db` and `opencode/log/` there. */
  dataDir: string;
}

/** opencode's switches for features that reach the network or read the person's other tools. */
export const OPENCODE_ISOLATION_ENV: Readonly<Record<string, string>> = {
  OPENCODE_DISABLE_AUTOUPDATE: '1',
  OPENCODE_DISABLE_MODELS_FETCH: '1',
  OPENCODE_DISABLE_SHARE: '1',
  OPENCODE_DISABLE_CLAUDE_CODE: '1',
  OPENCODE_DISABLE_EXTERNAL_SKILLS: '1',
  OPENCODE_DISABLE_LSP_DOWNLOAD: '1',
};

/**
 * opencode installs `@opencode-ai/plugin` into every config directory unless `node_modules/`
 * exists and `package-lock.json` already lists it: write exactly that.
 */
function preseedConfigDir(dir: string): void {
  mkdirSync(join(dir, 'node_modules'), { recursive: true });
  const dependencies = { '@opencode-ai/plugin': opencodeVersion() };
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ dependencies }));
  writeFileSync(
    join(dir, 'package-lock.json'),
    JSON.stringify({ lockfileVersion: 3, requires: true, packages: { '': { dependencies } } }),
  );
}

/** Creates the directories and files; idempotent for the same root (a restart reuses the data dir). */
export function createSandbox(options: SandboxOptions): Sandbox {
  const dirs = {
    home: join(options.root, 'home'),
    config: join(options.root, 'xdg-config'),
    data: join(options.root, 'xdg-data'),
    cache: join(options.root, 'xdg-cache'),
    state: join(options.root, 'xdg-state'),
    tmp: join(options.root, 'tmp'),
  };
  for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
  preseedConfigDir(join(dirs.config, 'opencode'));
  if (!existsSync(join(options.projectDir, '.git')))
    execFileSync('git', ['init', '-q', options.projectDir], { stdio: 'ignore' });

  const provider = options.modelProvider;
  const config: Record<string, unknown> = {
    $schema: 'https://opencode.ai/config.json',
    model: `${provider}/${options.modelId}`,
    small_model: `${provider}/${options.modelId}`,
    autoupdate: false,
    share: 'disabled',
    provider: {
      [provider]: {
        npm: '@ai-sdk/openai-compatible',
        name: 'Scripted model',
        options: { baseURL: options.modelBaseUrl, apiKey: 'test-key' },
        models: Object.fromEntries(
          options.modelIds.map((id) => [
            id,
            { name: id, tool_call: true, limit: { context: 128_000, output: 4_096 } },
          ]),
        ),
      },
    },
    ...(options.plugin === undefined
      ? {}
      : { plugin: [[pathToFileURL(options.plugin.path).href, options.plugin.options ?? {}]] }),
    ...options.config,
  };
  const configPath = join(options.root, 'opencode.json');
  writeFileSync(configPath, JSON.stringify(config, null, 2));
  return {
    projectDir: options.projectDir,
    configPath,
    config,
    dataDir: dirs.data,
    env: {
      ...OPENCODE_ISOLATION_ENV,
      HOME: dirs.home,
      XDG_CONFIG_HOME: dirs.config,
      XDG_DATA_HOME: dirs.data,
      XDG_CACHE_HOME: dirs.cache,
      XDG_STATE_HOME: dirs.state,
      TMPDIR: dirs.tmp,
      OPENCODE_CONFIG: configPath,
    },
  };
}
