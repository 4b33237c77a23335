/**
 * The command line of the ZCode stand-in, as ZCode's CLI v3.15.1 parses it (jimpablo/ZCode
 * `apps/zcode-cli/packages/cli/src/{arguments,run}.ts`): `node:util` `parseArgs` with `strict:
 * true` over the real option set, so an unknown flag (`--model`, `--max-turns`, `--settings`,
 * `--permission-mode`, `--allowed-tools`: rejected at runtime too, Q00/ouroboros and a CLI 0.16.5
 * report) prints the error and the help to stderr and exits 1; `--disallowedTools` is taken out
 * before parsing; `--mode` is `build|edit|plan|yolo|guarded` (case folded) and **defaults to
 * `yolo` with `--prompt`** (`DEFAULT_HEADLESS_PROMPT_MODE`); `--output-format` is
 * `text|json|stream-json` (`--json` = json); `--resume` and `--continue` exclude each other.
 * Commands: `--prompt` (prompt-run.ts), `plugins list [--json]` (the output of yeyuan98/ZCode
 * `cli/src/plugins-command-format.ts`), `--version`, `--help`. `app-server` exists in ZCode but is
 * not emulated (exit 1 saying so).
 */
import { parseArgs } from 'node:util';
import { ConfigError, loadConfig } from './config.js';
import type { CollaborationMode } from './permissions.js';
import { type LoadedPlugin, loadPlugins, type PluginDiagnostic } from './plugins.js';
import { runPrompt } from './prompt-run.js';

/** The version the stand-in reports: the ZCode version whose contract it follows. */
export const ZCODE_STANDIN_VERSION = '3.15.1-agentmail-standin';

const OPTIONS = {
  help: { short: 'h', type: 'boolean' },
  json: { type: 'boolean' },
  'output-format': { type: 'string' },
  'no-color': { type: 'boolean' },
  'no-browser': { type: 'boolean' },
  'browser-use': { type: 'string' },
  'browser-executable': { type: 'string' },
  prompt: { short: 'p', type: 'string' },
  'memory-bench': { type: 'boolean' },
  attach: { multiple: true, type: 'string' },
  cwd: { type: 'string' },
  locale: { type: 'string' },
  resume: { type: 'string' },
  target: { type: 'string' },
  'target-replace': { type: 'boolean' },
  continue: { short: 'c', type: 'boolean' },
  force: { short: 'f', type: 'boolean' },
  'force-mcs': { type: 'boolean' },
  mode: { type: 'string' },
  verbose: { type: 'boolean' },
  version: { short: 'v', type: 'boolean' },
  'prepare-storage': { type: 'boolean' },
  stdio: { type: 'boolean' },
  surface: { type: 'string' },
  'workflow-mode': { type: 'string' },
  all: { short: 'a', type: 'boolean' },
  available: { type: 'boolean' },
  'keep-data': { type: 'boolean' },
  scope: { short: 's', type: 'string' },
  sparse: { multiple: true, type: 'string' },
} as const;

const HELP = `Usage: zcode [options] [command]

Options:
  -p, --prompt <text>        Run one prompt headless and exit
  --mode <mode>              build | edit | plan | yolo | guarded (default: yolo for --prompt)
  --output-format <format>   text | json | stream-json
  --json                     Same as --output-format json
  --cwd <dir>                Working directory
  --resume <sess_…>          Resume a session
  -c, --continue             Continue the latest session of the directory
  --disallowedTools <tools…> Tools that may not run
  --verbose                  More output on errors
  -v, --version              Print the version

Commands:
  plugins list [--json]      List the plugins and their hooks and MCP servers
  app-server --stdio         The desktop protocol (not emulated by this stand-in)
`;

/** Where the CLI writes, and its environment. */
export interface CliIo {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
}

function extractDisallowedTools(argv: readonly string[]): { args: string[]; tools: string[] } {
  const args: string[] = [];
  const tools: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? '';
    const eq = /^--(?:disallowedTools|disallowed-tools)=(.*)$/.exec(arg);
    if (eq) {
      tools.push(...(eq[1] ?? '').split(/[ ,]+/).filter(Boolean));
      continue;
    }
    if (arg !== '--disallowedTools' && arg !== '--disallowed-tools') {
      args.push(arg);
      continue;
    }
    let consumed = false;
    while (i + 1 < argv.length && !/^-/.test(argv[i + 1] ?? '')) {
      tools.push(...(argv[++i] ?? '').split(/[ ,]+/).filter(Boolean));
      consumed = true;
    }
    if (!consumed) throw new Error(`${arg} requires at least one tool.`);
  }
  return { args, tools };
}

function normalizeMode(value: string | undefined): CollaborationMode | undefined {
  if (value === undefined) return undefined;
  const mode = value.toLowerCase();
  if (mode === 'build' || mode === 'plan' || mode === 'edit' || mode === 'yolo' || mode === 'guarded')
    return mode;
  throw new Error(`Unsupported --mode value: ${value}. Supported modes: build, edit, plan, yolo, guarded.`);
}

function pluginJson(plugin: LoadedPlugin, diagnostics: readonly PluginDiagnostic[]): Record<string, unknown> {
  return {
    commandRootCount: plugin.commandRootCount,
    dataPath: plugin.dataPath,
    enabled: plugin.enabled,
    id: plugin.id,
    manifestPath: plugin.manifestPath,
    marketplace: plugin.marketplace,
    declaredMcpServerNames: plugin.declaredMcpServerNames,
    mcpServerNames: plugin.mcpServers.map((s) => s.name.split(':').slice(2).join(':')),
    hookDetails: plugin.hooks.map((h) => ({
      command: h.command,
      event: h.event,
      runnable: h.runnable,
      sourcePath: h.sourcePath,
      type: h.type,
      ...(h.args ? { args: h.args } : {}),
      ...(h.matcher !== undefined ? { matcher: h.matcher } : {}),
      ...(h.statusMessage !== undefined ? { statusMessage: h.statusMessage } : {}),
      ...(h.timeout !== undefined ? { timeout: h.timeout } : {}),
      ...(h.timeoutMs !== undefined ? { timeoutMs: h.timeoutMs } : {}),
    })),
    name: plugin.name,
    rootPath: plugin.rootPath,
    skillCount: plugin.skillCount,
    skillRootCount: 0,
    source: plugin.source,
    diagnostics: diagnostics.filter((d) => d.pluginId === plugin.id),
    ...(plugin.description ? { description: plugin.description } : {}),
    ...(plugin.version ? { version: plugin.version } : {}),
  };
}

function pluginsList(cwd: string, json: boolean, verbose: boolean, io: CliIo): number {
  const home = io.env.HOME ?? '/';
  const config = loadConfig(home, cwd);
  const { plugins, diagnostics } = config.plugins.enabled
    ? loadPlugins({
        dirs: config.plugins.dirs,
        enabledPlugins: config.plugins.enabledPlugins,
        options: config.plugins.options,
        home,
        cwd,
        env: io.env,
      })
    : { plugins: [], diagnostics: [] };
  if (json) {
    io.stdout(
      `${JSON.stringify(
        plugins.map((p) => pluginJson(p, diagnostics)),
        null,
        2,
      )}\n`,
    );
    return 0;
  }
  const warnings = diagnostics.filter((d) => d.severity !== 'error');
  for (const d of warnings)
    io.stderr(`- [${d.severity}]${d.pluginId ? ` ${d.pluginId}` : ''} ${d.code}: ${d.message}\n`);
  if (plugins.length === 0) {
    io.stdout('No plugins found.\n');
    return 0;
  }
  const lines = [`Plugins (${plugins.length})`];
  for (const p of plugins) {
    const mcp =
      p.mcpServers.length > 0
        ? p.mcpServers.map((s) => s.name.split(':').slice(2).join(':')).join(', ')
        : 'none';
    lines.push(`- ${p.id} [${p.enabled ? 'enabled' : 'disabled'}]`);
    lines.push(`  ${p.source}/${p.marketplace}: ${p.rootPath}`);
    lines.push(
      `  skills: ${p.skillCount}, commands: ${p.commandRootCount}, hooks: ${p.hooks.length}, mcp: ${mcp}`,
    );
  }
  if (verbose && diagnostics.length > 0) {
    lines.push('', `Diagnostics (${diagnostics.length})`);
    for (const d of diagnostics)
      lines.push(`- [${d.severity}]${d.pluginId ? ` ${d.pluginId}` : ''} ${d.code}: ${d.message}`);
  }
  io.stdout(`${lines.join('\n')}\n`);
  return 0;
}

/** Run the stand-in CLI with `argv` (without `node` and the script); resolves with the exit code. */
export async function runZcodeCli(argv: readonly string[], io: CliIo): Promise<number> {
  let parsed: ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true; strict: true }>>;
  let disallowedTools: string[];
  try {
    const extracted = extractDisallowedTools(argv);
    disallowedTools = extracted.tools;
    parsed = parseArgs({ args: extracted.args, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (err) {
    io.stderr(`${(err as Error).message}\n\n${HELP}`);
    return 1;
  }
  const v = parsed.values;
  let mode: CollaborationMode | undefined;
  let outputFormat: 'text' | 'json' | 'stream-json' | undefined;
  try {
    mode = normalizeMode(v.mode);
    if (v['output-format'] !== undefined) {
      if (!['text', 'json', 'stream-json'].includes(v['output-format']))
        throw new Error(
          `--output-format must be one of text, json, stream-json (received: ${v['output-format']}).`,
        );
      outputFormat = v['output-format'] as 'text' | 'json' | 'stream-json';
    }
  } catch (err) {
    io.stderr(`${(err as Error).message}\n`);
    return 1;
  }
  if (v.continue === true && v.resume) {
    io.stderr('--resume and --continue cannot be used together.\n');
    return 1;
  }
  if (v.help === true) {
    io.stdout(HELP);
    return 0;
  }
  if (v.version === true) {
    io.stdout(`${ZCODE_STANDIN_VERSION}\n`);
    return 0;
  }
  if (typeof v.prompt === 'string')
    return runPrompt(
      {
        prompt: v.prompt,
        mode: mode ?? 'yolo',
        outputFormat: outputFormat ?? (v.json === true ? 'json' : 'text'),
        cwd: v.cwd,
        resume: v.resume,
        continueSession: v.continue === true,
        verbose: v.verbose === true,
        disallowedTools,
      },
      io,
    );
  const [command = 'tui', sub] = parsed.positionals;
  try {
    if ((command === 'plugins' || command === 'plugin') && (sub ?? 'list') === 'list')
      return pluginsList(v.cwd ?? process.cwd(), v.json === true, v.verbose === true, io);
  } catch (err) {
    io.stderr(`Error: ${err instanceof ConfigError ? err.message : String(err)}\n`);
    return 1;
  }
  if (command === 'app-server' || command === 'agent-server' || command === 'tui') {
    io.stderr(
      `Error: ${command} is not emulated by the ZCode stand-in (headless --prompt and plugins list are)\n`,
    );
    return 1;
  }
  io.stderr(`Unknown command: ${command}\n\n${HELP}`);
  return 1;
}
