/**
 * The setup check (SPEC P-8): `mode_enforcement` is `native` only after ZCode itself says the
 * plugin's hooks are registered. `zcode plugins list --json` (yeyuan98/ZCode
 * `cli/src/plugins-command-format.ts`) lists each plugin with `enabled`, `rootPath`,
 * `mcpServerNames`, `hookDetails[{event, matcher, runnable, command, args}]` and its
 * `diagnostics`; plugin hooks run while the plugin is enabled, whatever the user-level
 * `hooks.enabled` says (Z1 `docs/hooks-runtime-contract.md`). No model is asked, nothing is written.
 */
import { realpathSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname } from 'node:path';
import { runHostCli, type SetupCheckResult, stderrSummary } from '@agentmail/host-tools/driver';
import { formatText, type Locale, resolveLocale } from '@agentmail/shared-policy';
import { z } from 'zod';
import type { ZcodeBridgeConfig } from './config.js';
import { HOOK_HOST_ID, HOST_NAME, MAIL_TOOL_PREFIX, MCP_SERVER_KEY, PLUGIN_ID } from './constants.js';
import { GUARDED_TOOLS } from './host.js';
import { zcodeConfigPath } from './zcode-home.js';

/** One entry of `zcode plugins list --json`, as far as the check reads it. */
const PluginEntry = z.looseObject({
  id: z.string(),
  enabled: z.boolean(),
  rootPath: z.string().default(''),
  mcpServerNames: z.array(z.string()).default([]),
  hookDetails: z
    .array(
      z.looseObject({
        event: z.string(),
        matcher: z.string().optional(),
        runnable: z.boolean().default(true),
        command: z.string().default(''),
        args: z.array(z.string()).default([]),
      }),
    )
    .default([]),
  diagnostics: z.array(z.looseObject({ severity: z.string(), message: z.string().default('') })).default([]),
});
type PluginEntry = z.infer<typeof PluginEntry>;

/** Tool names the plugin's PreToolUse hook must cover: the guarded built-ins and the mail tools. */
export function gatedToolNames(): string[] {
  return [...GUARDED_TOOLS, `${MAIL_TOOL_PREFIX}read_mail`, `${MAIL_TOOL_PREFIX}send_mail`];
}

/** ZCode's matcher rule (empty or `*`: all; `A|B`: exact names; else an unanchored RegExp). */
export function hookMatcherCovers(matcher: string | undefined, toolName: string): boolean {
  if (!matcher || matcher === '*') return true;
  if (/^[a-zA-Z0-9_|]+$/u.test(matcher)) return matcher.split('|').includes(toolName);
  try {
    return new RegExp(matcher).test(toolName);
  } catch {
    return false;
  }
}

function samePath(a: string, b: string): boolean {
  try {
    return realpathSync(a) === realpathSync(b);
  } catch {
    return a === b;
  }
}

/** The problem with the listed plugin, or undefined when it is set up (exported for tests). */
export function checkPluginEntry(
  entries: readonly PluginEntry[],
  config: Pick<ZcodeBridgeConfig, 'pluginDir' | 'zcodeHome'>,
  locale: Locale,
): string | undefined {
  const plugin = entries.find((p) => p.id === PLUGIN_ID);
  const missing = (detail: string): string =>
    formatText(
      'host.setup.plugin_missing',
      {
        host: HOST_NAME,
        detail,
        plugin_dir: config.pluginDir,
        config: `plugins.dirs of ${zcodeConfigPath(config.zcodeHome)}`,
        check: 'zcode plugins list',
      },
      locale,
    );
  if (!plugin) return missing(`no plugin ${PLUGIN_ID} in \`zcode plugins list\``);
  if (!samePath(plugin.rootPath, config.pluginDir))
    return missing(`${PLUGIN_ID} is loaded from ${plugin.rootPath}, not from ${config.pluginDir}`);
  if (!plugin.enabled) return missing(`${PLUGIN_ID} is disabled (plugins.enabledPlugins)`);
  const errors = plugin.diagnostics.filter((d) => d.severity === 'error').map((d) => d.message);
  const gate = plugin.hookDetails.filter(
    (h) =>
      h.event === 'PreToolUse' &&
      h.runnable &&
      [h.command, ...h.args].some((a) => a.endsWith('hook.js')) &&
      h.args.includes(HOOK_HOST_ID),
  );
  const uncovered = gatedToolNames().filter((t) => !gate.some((h) => hookMatcherCovers(h.matcher, t)));
  if (gate.length === 0 || uncovered.length > 0)
    return formatText(
      'host.setup.hooks_missing',
      {
        host: HOST_NAME,
        detail:
          gate.length === 0
            ? `no runnable PreToolUse hook running hook.js ${HOOK_HOST_ID}${errors.length ? `; ${errors.join('; ')}` : ''}`
            : `the PreToolUse hook does not cover ${uncovered.join(', ')}`,
      },
      locale,
    );
  if (!plugin.mcpServerNames.includes(MCP_SERVER_KEY))
    return formatText(
      'host.setup.tools_missing',
      {
        host: HOST_NAME,
        detail: `MCP server ${MCP_SERVER_KEY} is not listed${errors.length ? `: ${errors.join('; ')}` : ''}`,
      },
      locale,
    );
  return undefined;
}

/**
 * Ask `zcode plugins list --json` (with the runs' environment, in the data directory) whether the
 * plugin is loaded with its PreToolUse gate and its mail-tool server. Never throws.
 */
export async function selfCheck(config: ZcodeBridgeConfig, signal?: AbortSignal): Promise<SetupCheckResult> {
  const locale: Locale = resolveLocale(config.locale);
  // The check runs in the data directory, before anything else of the bridge created it.
  try {
    await mkdir(config.dataDir, { recursive: true });
  } catch (err) {
    return { ok: false, reason: `the data directory ${config.dataDir} cannot be created: ${String(err)}` };
  }
  const lines: string[] = [];
  const report = await runHostCli({
    bin: config.zcodeBin,
    args: ['plugins', 'list', '--json'],
    cwd: config.dataDir,
    env: { ...process.env, PATH: `${dirname(config.nodeBin)}:${process.env.PATH ?? ''}` },
    ...(signal ? { signal } : {}),
    onLine: (l) => lines.push(l),
  });
  if (report.spawnError !== undefined)
    return {
      ok: false,
      reason: formatText(
        'host.not_found',
        { host: HOST_NAME, detail: stderrSummary(report.stderrTail), variable: 'AGENTMAIL_ZCODE_BIN' },
        locale,
      ),
    };
  if (report.code !== 0)
    return {
      ok: false,
      reason: `\`${config.zcodeBin} plugins list --json\` failed (exit code ${report.code ?? report.signal}): ${stderrSummary(report.stderrTail)}`,
    };
  let entries: PluginEntry[];
  try {
    entries = z.array(PluginEntry).parse(JSON.parse(lines.join('\n')));
  } catch (err) {
    return {
      ok: false,
      reason: `\`${config.zcodeBin} plugins list --json\` printed no plugin list this bridge can read (${(err as Error).message.slice(0, 300)})`,
    };
  }
  const problem = checkPluginEntry(entries, config, locale);
  return problem === undefined ? { ok: true } : { ok: false, reason: problem };
}
