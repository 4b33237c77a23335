/**
 * What `agentmail service`, the crash report and `agentmail doctor` know about each service: the
 * Gateway and one bridge per coding-agent host (SPEC §8). Paths are relative to the AgentMail
 * checkout; everything host-specific (bins, data-dir variables, plugin steps, versions) is here
 * and nowhere else.
 */
import { dataDirVariable, STOP_GRACE_MS } from '@agentmail/shared-policy';

/** The services `agentmail service install` knows. */
export const SERVICE_NAMES = ['gateway', 'pi', 'opencode', 'dsh', 'claude', 'zcode'] as const;
/** One of {@link SERVICE_NAMES}. */
export type ServiceName = (typeof SERVICE_NAMES)[number];
/** A bridge service (everything but the Gateway). */
export type BridgeServiceName = Exclude<ServiceName, 'gateway'>;

/** How the plugin reaches its host (the steps the bridge READMEs document). */
export type PluginStep =
  /** pi: the daemon loads its own extension; nothing to install. */
  | { kind: 'none' }
  /** opencode: an entry (absolute path) in the `plugin` array of `$XDG_CONFIG_HOME/opencode/opencode.json`. */
  | { kind: 'opencode-config'; pluginPath: string }
  /** DSH: `dsh plugin --profile <profile> add <package dir>`. */
  | { kind: 'dsh-plugin-add'; packageDir: string; profile: string }
  /** Claude Code: the driver gives the plugin dir to every run (`--plugin-dir`, `AGENTMAIL_CLAUDE_PLUGIN_DIR`). */
  | { kind: 'plugin-dir-env'; pluginDir: string; variable: string }
  /** ZCode: the plugin dir in `plugins.dirs` of `~/.zcode/cli/config.json`, and in the driver's env. */
  | { kind: 'zcode-config'; pluginDir: string; variable: string };

/** Facts about one bridge service. */
export interface BridgeFacts {
  readonly service: BridgeServiceName;
  /** The platform name the bridge registers with (and its data-dir variable is named after). */
  readonly platform: string;
  /** Default agent name of the bridge. */
  readonly defaultAgentName: string;
  /** README of the bridge package, relative to the checkout. */
  readonly readme: string;
  /** `[Unit] Description=`. */
  readonly description: string;
  /** What the unit runs: a Node entry of ours, or a host executable with arguments. */
  readonly exec:
    | { kind: 'node-entry'; entry: string }
    | { kind: 'host'; defaultBin: string; args: readonly string[] };
  /** Env-file variable naming the host executable (for the unit, the driver and doctor). */
  readonly hostBinVariable: string | undefined;
  /**
   * The pinned host executable `pnpm install` puts in the checkout (relative to it), which install
   * takes before the host on PATH when no `--bin` is given.
   */
  readonly pinnedHostBin?: string;
  /** The host version this bridge is tested against (doctor warns on another one). */
  readonly supportedHostVersion: string | undefined;
  /** For pi: the host package whose `package.json` version doctor reads (no executable). */
  readonly hostPackage: string | undefined;
  /** The bridge's own shutdown budget in ms (B-15); `TimeoutStopSec` is longer (tested). */
  readonly stopBudgetMs: number;
  /** Words for the budget, for the unit's comment. */
  readonly stopBudgetWords: string;
  /** `MemoryMax=` default. */
  readonly memoryMax: string;
  /** `TimeoutStopSec=` in seconds. */
  readonly timeoutStopSec: number;
  /** How the plugin is made known to the host. */
  readonly plugin: PluginStep;
  /** Files of ours the unit needs (relative to the checkout): missing means "not built". */
  readonly builtFiles: readonly string[];
  /** The build command that makes {@link builtFiles}. */
  readonly buildCommand: string;
}

/** The kit's goodbye (`POST /agent/offline`) is bounded by 2 s (bridge-runtime OFFLINE_NOTICE_TIMEOUT_MS). */
const GOODBYE_MS = 2_000;
/** The kit's stop: abort turns, wait their grace, say goodbye (B-15, H-3). */
const KIT_STOP_MS = STOP_GRACE_MS + GOODBYE_MS;
/** pi's workers get their own 5 s grace before the kit's stop (bridge-pi WORKER_STOP_GRACE_MS). */
const PI_WORKER_GRACE_MS = 5_000;
/** A driver stops its host run with SIGTERM, then SIGKILL after 5 s (bridge-claude/-zcode README). */
const DRIVER_RUN_STOP_MS = 5_000;

/** Port `opencode serve` listens on in the unit; the start hook boots its instance there. */
export const OPENCODE_SERVE_PORT = 4096;
/** DSH profile the unit runs (created by `dsh plugin --profile agentmail add`). */
export const DSH_PROFILE = 'agentmail';

/** Every bridge service. */
export const BRIDGES: Readonly<Record<BridgeServiceName, BridgeFacts>> = {
  pi: {
    service: 'pi',
    platform: 'pi',
    defaultAgentName: 'pi',
    readme: 'packages/bridge-pi/README.md',
    description: 'AgentMail bridge for pi (agentmail-pi daemon)',
    exec: { kind: 'node-entry', entry: 'packages/bridge-pi/dist/daemon-main.js' },
    hostBinVariable: undefined,
    supportedHostVersion: '1.6.0',
    hostPackage: 'packages/bridge-pi/node_modules/@earendil-works/pi-coding-agent/package.json',
    stopBudgetMs: PI_WORKER_GRACE_MS + KIT_STOP_MS,
    stopBudgetWords: 'workers 5 s, turns 5 s, goodbye 2 s',
    memoryMax: '4G',
    timeoutStopSec: 30,
    plugin: { kind: 'none' },
    builtFiles: ['packages/bridge-pi/dist/daemon-main.js'],
    buildCommand: 'pnpm --filter @agentmail/bridge-pi build',
  },
  opencode: {
    service: 'opencode',
    platform: 'opencode',
    defaultAgentName: 'opencode',
    readme: 'packages/bridge-opencode/README.md',
    description: 'AgentMail bridge for opencode (opencode serve with the AgentMail plugin)',
    exec: { kind: 'host', defaultBin: 'opencode', args: ['serve', '--port', String(OPENCODE_SERVE_PORT)] },
    hostBinVariable: 'AGENTMAIL_OPENCODE_BIN',
    supportedHostVersion: '1.18.33',
    hostPackage: undefined,
    stopBudgetMs: KIT_STOP_MS,
    stopBudgetWords: 'turns 5 s, goodbye 2 s, opencode itself',
    memoryMax: '4G',
    timeoutStopSec: 30,
    plugin: { kind: 'opencode-config', pluginPath: 'packages/bridge-opencode/dist/plugin.js' },
    builtFiles: ['packages/bridge-opencode/dist/plugin.js'],
    buildCommand: 'pnpm --filter @agentmail/bridge-opencode build',
  },
  dsh: {
    service: 'dsh',
    platform: 'dsh',
    defaultAgentName: 'dsh',
    readme: 'packages/bridge-dsh/README.md',
    description: 'AgentMail bridge for DeepSeek Harness (a long-lived dsh profile with the bundle)',
    exec: {
      kind: 'host',
      defaultBin: 'packages/bridge-dsh/node_modules/.bin/dsh',
      args: ['--profile', DSH_PROFILE],
    },
    hostBinVariable: 'AGENTMAIL_DSH_BIN',
    supportedHostVersion: '0.1.0-rc.8',
    hostPackage: undefined,
    stopBudgetMs: KIT_STOP_MS,
    stopBudgetWords: 'turns 5 s, goodbye 2 s, dsh disposing its agents',
    memoryMax: '4G',
    timeoutStopSec: 30,
    plugin: { kind: 'dsh-plugin-add', packageDir: 'packages/bridge-dsh', profile: DSH_PROFILE },
    builtFiles: ['packages/bridge-dsh/dist/plugin.js'],
    buildCommand: 'pnpm --filter @agentmail/bridge-dsh build',
  },
  claude: {
    service: 'claude',
    platform: 'claude-code',
    defaultAgentName: 'claude-code',
    readme: 'packages/bridge-claude/README.md',
    description: 'AgentMail bridge for Claude Code (agentmail-claude driver)',
    exec: { kind: 'node-entry', entry: 'packages/bridge-claude/dist/daemon-main.js' },
    hostBinVariable: 'AGENTMAIL_CLAUDE_BIN',
    // Claude Code's own bin: its postinstall (allowed in pnpm-workspace.yaml) links the platform
    // binary there; the driver's default (bridge-claude src/claude-bin.ts) is the same binary.
    pinnedHostBin: 'packages/bridge-claude/node_modules/.bin/claude',
    supportedHostVersion: '2.1.328',
    hostPackage: undefined,
    stopBudgetMs: DRIVER_RUN_STOP_MS + KIT_STOP_MS,
    stopBudgetWords: 'the claude run 5 s, turns 5 s, goodbye 2 s',
    memoryMax: '4G',
    timeoutStopSec: 30,
    plugin: {
      kind: 'plugin-dir-env',
      pluginDir: 'packages/bridge-claude/plugin',
      variable: 'AGENTMAIL_CLAUDE_PLUGIN_DIR',
    },
    builtFiles: ['packages/bridge-claude/dist/daemon-main.js', 'packages/bridge-claude/plugin/dist/hook.js'],
    buildCommand: 'pnpm --filter @agentmail/bridge-claude build',
  },
  zcode: {
    service: 'zcode',
    platform: 'zcode',
    defaultAgentName: 'zcode',
    readme: 'packages/bridge-zcode/README.md',
    description: 'AgentMail bridge for ZCode (agentmail-zcode driver)',
    exec: { kind: 'node-entry', entry: 'packages/bridge-zcode/dist/daemon-main.js' },
    hostBinVariable: 'AGENTMAIL_ZCODE_BIN',
    supportedHostVersion: undefined,
    hostPackage: undefined,
    stopBudgetMs: DRIVER_RUN_STOP_MS + KIT_STOP_MS,
    stopBudgetWords: 'the zcode run 5 s, turns 5 s, goodbye 2 s',
    memoryMax: '4G',
    timeoutStopSec: 30,
    plugin: {
      kind: 'zcode-config',
      pluginDir: 'packages/bridge-zcode/plugin',
      variable: 'AGENTMAIL_ZCODE_PLUGIN_DIR',
    },
    builtFiles: ['packages/bridge-zcode/dist/daemon-main.js'],
    buildCommand: 'pnpm --filter @agentmail/bridge-zcode build',
  },
};

/** Facts about the Gateway service. */
export const GATEWAY_FACTS = {
  cli: 'packages/gateway/dist/cli/main.js',
  buildCommand: 'pnpm build:cli',
  memoryMax: '1G',
  /** SIGTERM closes streams and the store at once; 15 s leaves room for a slow disk. */
  timeoutStopSec: 15,
  /** Data directory of the system service (`StateDirectory=agentmail`). */
  systemStateDir: '/var/lib/agentmail',
  /** Config directory of the system service. */
  systemConfigDir: '/etc/agentmail/gateway',
} as const;

/** Unit file name of a service: `agentmail-<service>.service`. */
export function unitName(service: ServiceName): string {
  return `agentmail-${service}.service`;
}

/** The data-directory variable of a bridge (`AGENTMAIL_CLAUDE_CODE_DATA_DIR` for claude): the kit's own rule. */
export function bridgeDataDirVariable(facts: BridgeFacts): string {
  return dataDirVariable(facts.platform);
}

/** True when `name` is one of {@link SERVICE_NAMES}. */
export function isServiceName(name: string): name is ServiceName {
  return (SERVICE_NAMES as readonly string[]).includes(name);
}
