/**
 * The stand-in's configuration, as ZCode's CLI reads it. Sources (see research/zcode.md §2–§3):
 * - layers, low to high: built-in defaults → user `~/.zcode/cli/config.json` → project
 *   `<cwd>/zcode.json` or `<cwd>/.zcode/config.json` → `ZCODE_*` environment (kingsword09/zcode-cli
 *   `docs/CONFIGURATION.md`: "Project-level overrides are read from `zcode.json` or
 *   `.zcode/config.json` in the working directory"; a third-party integration plan measured on
 *   CLI 0.16.5 lists the same order);
 * - models: `provider.<id>.{kind: anthropic|openai-compatible|openai, options:{baseURL, apiKey},
 *   models:{<model id>:{…}}}` and `model.main` = `<provider id>/<model id>`; the `model` block is
 *   strict (`main`, `lite`) (CONFIGURATION.md "Custom provider without login");
 * - per-run model switch through `ZCODE_MODEL` / `ZCODE_BASE_URL` / `ZCODE_API_KEY` (Q00/ouroboros
 *   `docs/runtime-guides/zcode.md`: no `--model` flag, select via config or environment);
 * - `plugins: {enabled, dirs[], enabledPlugins{id:bool}, options{id:{}}}` (Z2 `schema.ts`,
 *   DefaultRuntimeConfig).
 * - no model configured: `Model config is missing. Create <home>/.zcode/cli/config.json with an
 *   explicit model provider before running ZCode.` (seen at runtime by Q00/ouroboros).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** A provider entry of `provider.<id>`. */
export interface ProviderConfig {
  kind: 'anthropic' | 'openai-compatible' | 'openai';
  name?: string;
  options: { baseURL?: string; apiKey?: string; apiKeyRequired?: boolean };
  headers?: Record<string, string>;
  models: Record<string, { name?: string }>;
}

/** The merged configuration the stand-in uses. */
export interface StandinConfig {
  provider: Record<string, ProviderConfig>;
  model: { main?: string; lite?: string };
  plugins: {
    enabled: boolean;
    dirs: string[];
    enabledPlugins: Record<string, boolean>;
    options: Record<string, Record<string, unknown>>;
  };
  storage: { sessionDbPath?: string };
  /** Tool names refused in every mode (also `--disallowedTools`). */
  disallowedTools: string[];
  /** Files that were read, for messages. */
  sources: string[];
}

/** The model a run uses: provider entry, model id, and the `provider/model` reference. */
export interface ResolvedModel {
  providerId: string;
  modelId: string;
  ref: string;
  provider: ProviderConfig;
  baseURL: string | undefined;
  apiKey: string | undefined;
}

/** A user-facing configuration failure (printed as `Error: <message>`, exit 1). */
export class ConfigError extends Error {
  override name = 'ConfigError';
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function readJson(file: string): Record<string, unknown> | undefined {
  if (!existsSync(file)) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new ConfigError(`Failed to parse config file ${file}: ${(err as Error).message}`);
  }
  if (!isObject(parsed)) throw new ConfigError(`Config file ${file} must contain a JSON object`);
  return parsed;
}

/** Deep merge of plain objects (arrays and scalars of `over` replace). */
function merge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    const b = out[k];
    out[k] = isObject(b) && isObject(v) ? merge(b, v) : v;
  }
  return out;
}

/** `~/.zcode/cli/config.json` of `home`. */
export function userConfigPath(home: string): string {
  return join(home, '.zcode', 'cli', 'config.json');
}

/** Read the layers for a run in `cwd`. @throws ConfigError on a file that is not a JSON object. */
export function loadConfig(home: string, cwd: string): StandinConfig {
  const sources: string[] = [];
  let raw: Record<string, unknown> = {};
  for (const file of [userConfigPath(home), join(cwd, 'zcode.json'), join(cwd, '.zcode', 'config.json')]) {
    const layer = readJson(file);
    if (layer) {
      raw = merge(raw, layer);
      sources.push(file);
    }
  }
  const plugins = isObject(raw.plugins) ? raw.plugins : {};
  const provider: Record<string, ProviderConfig> = {};
  if (isObject(raw.provider))
    for (const [id, p] of Object.entries(raw.provider)) {
      if (!isObject(p)) continue;
      const kind = p.kind === 'openai' || p.kind === 'openai-compatible' ? p.kind : 'anthropic';
      provider[id] = {
        kind,
        ...(typeof p.name === 'string' ? { name: p.name } : {}),
        options: isObject(p.options) ? (p.options as ProviderConfig['options']) : {},
        ...(isObject(p.headers) ? { headers: p.headers as Record<string, string> } : {}),
        models: isObject(p.models) ? (p.models as ProviderConfig['models']) : {},
      };
    }
  const model = isObject(raw.model) ? raw.model : {};
  const storage = isObject(raw.storage) ? raw.storage : {};
  return {
    provider,
    model: {
      ...(typeof model.main === 'string' ? { main: model.main } : {}),
      ...(typeof model.lite === 'string' ? { lite: model.lite } : {}),
    },
    plugins: {
      enabled: plugins.enabled !== false,
      dirs: Array.isArray(plugins.dirs) ? plugins.dirs.filter((d): d is string => typeof d === 'string') : [],
      enabledPlugins: isObject(plugins.enabledPlugins)
        ? (plugins.enabledPlugins as Record<string, boolean>)
        : {},
      options: isObject(plugins.options) ? (plugins.options as Record<string, Record<string, unknown>>) : {},
    },
    storage: typeof storage.sessionDbPath === 'string' ? { sessionDbPath: storage.sessionDbPath } : {},
    disallowedTools: Array.isArray(raw.disallowedTools)
      ? raw.disallowedTools.filter((t): t is string => typeof t === 'string')
      : [],
    sources,
  };
}

/**
 * The model of a run: `ZCODE_MODEL`, else the session's own model on `--resume` (a resumed
 * session keeps its model, CONFIGURATION.md "A resumed session may retain its previous model";
 * which one wins over the other is UNVERIFIED), else `model.main`; `ZCODE_BASE_URL` and
 * `ZCODE_API_KEY` override the chosen provider's endpoint and key.
 * @throws ConfigError `Model config is missing…` when nothing resolves to a configured provider.
 */
export function resolveModel(
  config: StandinConfig,
  env: Readonly<Record<string, string | undefined>>,
  home: string,
  sessionModel?: string,
): ResolvedModel {
  const missing = new ConfigError(
    `Model config is missing. Create ${userConfigPath(home)} with an explicit model provider before running ZCode.`,
  );
  const ref = env.ZCODE_MODEL?.trim() || sessionModel || config.model.main;
  if (!ref) throw missing;
  const slash = ref.indexOf('/');
  const providerId = slash < 0 ? '' : ref.slice(0, slash);
  const modelId = slash < 0 ? ref : ref.slice(slash + 1);
  const provider = config.provider[providerId];
  if (!provider || !modelId) throw missing;
  const baseURL = env.ZCODE_BASE_URL || provider.options.baseURL;
  const apiKey = env.ZCODE_API_KEY || provider.options.apiKey;
  if (!apiKey && provider.options.apiKeyRequired !== false)
    // UNVERIFIED wording: how an install without a key (not logged in) fails is not in the sources.
    throw new ConfigError(
      `Not logged in: provider "${providerId}" has no API key. Run \`zcode login\` or set provider.${providerId}.options.apiKey.`,
    );
  return { providerId, modelId, ref: `${providerId}/${modelId}`, provider, baseURL, apiKey };
}
