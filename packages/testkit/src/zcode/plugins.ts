/**
 * Plugin discovery and loading as ZCode does it for `plugins.dirs` (research/zcode.md §1–§2):
 * - manifest lookup `.zcode-plugin/plugin.json` → `.claude-plugin/plugin.json` →
 *   `.codex-plugin/plugin.json`; `name` required, `^[a-z0-9][a-z0-9._-]{0,127}$` (Z1
 *   `adapters/src/plugins/index.ts`, Z2 `contracts/plugins`);
 * - id `<name>@inline` for `plugins.dirs` entries, enabled unless `enabledPlugins[id] === false`;
 *   duplicate ids are dropped (Z1 candidate order);
 * - MCP servers from `.mcp.json` merged with the manifest's `mcpServers` (manifest wins), server
 *   key `plugin:<name>:<key>`, templates `${ZCODE_|CLAUDE_PLUGIN_ROOT|PLUGIN_DATA|PROJECT_DIR}`,
 *   `${user_config.K}`, `${ZCODE_*}` from the environment, other names only in sensitive fields
 *   (env values); a missing variable disables that server with a diagnostic (yeyuan98/ZCode
 *   `adapters/src/plugins/mcp.ts` `resolveMcpServerConfig`, `resolveTemplate`);
 * - hooks from `hooks/hooks.json` (`{description?, hooks:{Event:[{matcher?, hooks:[…]}]}}`) and
 *   the manifest's `hooks`; 7 events, others skipped with a warning (Z1 `hook-sources.ts`).
 * - plugin data directory `~/.zcode/cli/plugins/data/<id>` (seen at runtime by several plugins).
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';

/** The hook events ZCode runs (others are skipped with a diagnostic). */
export const HOOK_EVENTS = [
  'SessionStart',
  'UserPromptSubmit',
  'PreToolUse',
  'PermissionRequest',
  'PostToolUse',
  'PostToolUseFailure',
  'Stop',
] as const;
/** One of {@link HOOK_EVENTS}. */
export type HookEventName = (typeof HOOK_EVENTS)[number];

/** One hook of a plugin, as declared. */
export interface PluginHook {
  event: HookEventName;
  matcher?: string;
  type: string;
  command: string;
  args?: string[];
  shell?: string;
  timeoutMs?: number;
  timeout?: number;
  enabled?: boolean;
  statusMessage?: string;
  sourcePath: string;
  /** Whether this build runs it (`process` and `command`; `http`/`mcp_tool` are newer builds only). */
  runnable: boolean;
}

/** A resolved stdio MCP server of a plugin. */
export interface PluginMcpServer {
  /** `plugin:<name>:<key>`. */
  name: string;
  command: string;
  args: string[];
  cwd?: string;
  env: Record<string, string>;
  timeoutMs?: number;
}

/** A problem found while loading. */
export interface PluginDiagnostic {
  code: string;
  message: string;
  severity: 'error' | 'warning';
  path?: string;
  pluginId?: string;
}

/** A loaded plugin. */
export interface LoadedPlugin {
  id: string;
  name: string;
  version?: string;
  description?: string;
  enabled: boolean;
  source: 'inline';
  marketplace: 'inline';
  rootPath: string;
  manifestPath: string;
  dataPath: string;
  declaredMcpServerNames: string[];
  mcpServers: PluginMcpServer[];
  hooks: PluginHook[];
  skillCount: number;
  commandRootCount: number;
}

const NAME = /^[a-z0-9][a-z0-9._-]{0,127}$/;
const MANIFESTS = ['.zcode-plugin', '.claude-plugin', '.codex-plugin'];
const TEMPLATE = /\$\{([^}]+)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

class VariableError extends Error {}

interface TemplateContext {
  root: string;
  data: string;
  project: string;
  env: Readonly<Record<string, string | undefined>>;
  options: Record<string, unknown>;
  defaults: Record<string, unknown>;
}

function resolveTemplate(value: string, ctx: TemplateContext, sensitive: boolean): string {
  return value.replace(TEMPLATE, (match, name: string) => {
    switch (name) {
      case 'CLAUDE_PLUGIN_ROOT':
      case 'ZCODE_PLUGIN_ROOT':
        return ctx.root;
      case 'CLAUDE_PLUGIN_DATA':
      case 'ZCODE_PLUGIN_DATA':
        return ctx.data;
      case 'CLAUDE_PROJECT_DIR':
      case 'ZCODE_PROJECT_DIR':
        return ctx.project;
      case 'CLAUDE_SESSION_ID':
      case 'ZCODE_SESSION_ID':
        throw new VariableError(`Plugin variable requires a runtime session context: ${name}`);
    }
    if (name.startsWith('user_config.')) {
      const key = name.slice('user_config.'.length);
      const v = ctx.options[key] ?? ctx.defaults[key];
      if (v === undefined) throw new VariableError(`Missing plugin user_config value: ${key}`);
      return String(v);
    }
    if (name.startsWith('ZCODE_') || (sensitive && ENV_NAME.test(name))) {
      const v = ctx.env[name];
      if (v === undefined) throw new VariableError(`Missing environment variable: ${name}`);
      return v;
    }
    return match;
  });
}

function readObject(file: string, diagnostics: PluginDiagnostic[], pluginId?: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (err) {
    diagnostics.push({
      code: 'plugin_read_failed',
      message: (err as Error).message,
      severity: 'error',
      path: file,
      ...(pluginId ? { pluginId } : {}),
    });
    return undefined;
  }
}

function hooksFrom(
  spec: unknown,
  sourcePath: string,
  diagnostics: PluginDiagnostic[],
  pluginId: string,
): PluginHook[] {
  const map = isObject(spec) && isObject(spec.hooks) ? spec.hooks : isObject(spec) ? spec : {};
  const out: PluginHook[] = [];
  for (const [event, entries] of Object.entries(map)) {
    if (event === 'description') continue;
    if (!(HOOK_EVENTS as readonly string[]).includes(event)) {
      diagnostics.push({
        code: 'plugin_hook_event_unsupported',
        message: `Unsupported hook event: ${event}`,
        severity: 'warning',
        path: sourcePath,
        pluginId,
      });
      continue;
    }
    if (!Array.isArray(entries)) continue;
    for (const entry of entries) {
      if (!isObject(entry) || !Array.isArray(entry.hooks)) continue;
      for (const h of entry.hooks) {
        if (!isObject(h) || typeof h.command !== 'string') continue;
        const type = typeof h.type === 'string' ? h.type : 'command';
        out.push({
          event: event as HookEventName,
          ...(typeof entry.matcher === 'string' ? { matcher: entry.matcher } : {}),
          type,
          command: h.command,
          ...(Array.isArray(h.args)
            ? { args: h.args.filter((a): a is string => typeof a === 'string') }
            : {}),
          ...(typeof h.shell === 'string' ? { shell: h.shell } : {}),
          ...(typeof h.timeoutMs === 'number' ? { timeoutMs: h.timeoutMs } : {}),
          ...(typeof h.timeout === 'number' ? { timeout: h.timeout } : {}),
          ...(typeof h.enabled === 'boolean' ? { enabled: h.enabled } : {}),
          ...(typeof h.statusMessage === 'string' ? { statusMessage: h.statusMessage } : {}),
          sourcePath,
          runnable: (type === 'process' || type === 'command') && h.enabled !== false,
        });
      }
    }
  }
  return out;
}

/** What {@link loadPlugins} needs. */
export interface LoadPluginsInput {
  dirs: readonly string[];
  enabledPlugins: Readonly<Record<string, boolean>>;
  options: Readonly<Record<string, Record<string, unknown>>>;
  home: string;
  cwd: string;
  env: Readonly<Record<string, string | undefined>>;
}

/** Load every plugin of `plugins.dirs` (the stand-in has no marketplace or bundled plugins). */
export function loadPlugins(input: LoadPluginsInput): {
  plugins: LoadedPlugin[];
  diagnostics: PluginDiagnostic[];
} {
  const diagnostics: PluginDiagnostic[] = [];
  const plugins: LoadedPlugin[] = [];
  const seen = new Set<string>();
  for (const dir of input.dirs) {
    const root = resolve(input.cwd, dir);
    const manifestDir = MANIFESTS.find((m) => existsSync(join(root, m, 'plugin.json')));
    if (!manifestDir) {
      diagnostics.push({
        code: 'plugin_manifest_missing',
        message: `No plugin manifest in ${root} (looked for ${MANIFESTS.map((m) => `${m}/plugin.json`).join(', ')})`,
        severity: 'error',
        path: root,
      });
      continue;
    }
    const manifestPath = join(root, manifestDir, 'plugin.json');
    const manifest = readObject(manifestPath, diagnostics);
    if (!isObject(manifest) || typeof manifest.name !== 'string' || !NAME.test(manifest.name)) {
      diagnostics.push({
        code: 'plugin_manifest_invalid',
        message: `Plugin manifest needs a "name" matching ${NAME.source}`,
        severity: 'error',
        path: manifestPath,
      });
      continue;
    }
    const name = manifest.name;
    const id = `${name}@inline`;
    if (seen.has(id)) continue;
    seen.add(id);
    const dataPath = join(input.home, '.zcode', 'cli', 'plugins', 'data', id);
    const defaults: Record<string, unknown> = {};
    if (isObject(manifest.userConfig))
      for (const [k, o] of Object.entries(manifest.userConfig))
        if (isObject(o) && o.default !== undefined) defaults[k] = o.default;
    const ctx: TemplateContext = {
      root,
      data: dataPath,
      project: input.cwd,
      env: input.env,
      options: input.options[id] ?? {},
      defaults,
    };

    const declared: Record<string, unknown> = {};
    const mcpFile = join(root, '.mcp.json');
    if (existsSync(mcpFile)) {
      const v = readObject(mcpFile, diagnostics, id);
      const servers = isObject(v) && isObject(v.mcpServers) ? v.mcpServers : isObject(v) ? v : {};
      Object.assign(declared, servers);
    }
    if (isObject(manifest.mcpServers)) Object.assign(declared, manifest.mcpServers);
    const mcpServers: PluginMcpServer[] = [];
    for (const [key, server] of Object.entries(declared)) {
      if (!isObject(server)) continue;
      try {
        const type = typeof server.type === 'string' ? server.type : server.command ? 'stdio' : 'http';
        if (type !== 'stdio' || typeof server.command !== 'string')
          throw new Error(`the stand-in emulates stdio MCP servers only (server ${key} is ${type})`);
        if (server.enabled === false) continue;
        const env: Record<string, string> = {};
        const declaredEnv = {
          CLAUDE_PROJECT_DIR: input.cwd,
          ZCODE_PLUGIN_DATA: dataPath,
          ZCODE_PLUGIN_ROOT: root,
          ZCODE_PROJECT_DIR: input.cwd,
          CLAUDE_PLUGIN_DATA: dataPath,
          CLAUDE_PLUGIN_ROOT: root,
          ...(isObject(server.env) ? server.env : {}),
        };
        for (const [k, v] of Object.entries(declaredEnv))
          if (typeof v === 'string') env[k] = resolveTemplate(v, ctx, true);
        env.ZCODE_PLUGIN_ID = id;
        mcpServers.push({
          name: `plugin:${name}:${key}`,
          command: resolveTemplate(server.command, ctx, false),
          args: Array.isArray(server.args)
            ? server.args
                .filter((a): a is string => typeof a === 'string')
                .map((a) => resolveTemplate(a, ctx, false))
            : [],
          ...(typeof server.cwd === 'string' ? { cwd: resolveTemplate(server.cwd, ctx, false) } : {}),
          env,
          ...(typeof server.timeoutMs === 'number' ? { timeoutMs: server.timeoutMs } : {}),
        });
      } catch (err) {
        diagnostics.push({
          code: err instanceof VariableError ? 'plugin_variable_missing' : 'plugin_mcp_server_disabled',
          message: (err as Error).message,
          severity: 'error',
          path: manifestPath,
          pluginId: id,
        });
      }
    }

    const hooks: PluginHook[] = [];
    const hooksFile = join(root, 'hooks', 'hooks.json');
    if (existsSync(hooksFile))
      hooks.push(...hooksFrom(readObject(hooksFile, diagnostics, id), hooksFile, diagnostics, id));
    if (typeof manifest.hooks === 'string') {
      const file = isAbsolute(manifest.hooks) ? manifest.hooks : join(root, manifest.hooks);
      hooks.push(...hooksFrom(readObject(file, diagnostics, id), file, diagnostics, id));
    } else if (isObject(manifest.hooks))
      hooks.push(...hooksFrom(manifest.hooks, manifestPath, diagnostics, id));

    const enabled = input.enabledPlugins[id] ?? true;
    if (enabled) mkdirSync(dataPath, { recursive: true });
    plugins.push({
      id,
      name,
      ...(typeof manifest.version === 'string' ? { version: manifest.version } : {}),
      ...(typeof manifest.description === 'string' ? { description: manifest.description } : {}),
      enabled,
      source: 'inline',
      marketplace: 'inline',
      rootPath: root,
      manifestPath,
      dataPath,
      declaredMcpServerNames: Object.keys(declared),
      mcpServers,
      hooks,
      skillCount: 0,
      commandRootCount: 0,
    });
  }
  return { plugins, diagnostics };
}
