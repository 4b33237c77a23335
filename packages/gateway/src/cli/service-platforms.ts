/**
 * What `agentmail service`, the crash report and `agentmail doctor` know about each service: the
 * Gateway and one bridge per coding-agent host (SPEC §8). A bridge is described by its package's
 * host descriptor (`packages/<bridge>/host.json`, discovered by service-hosts.ts); this module
 * holds the shapes the CLI works with and the Gateway's own facts. No host is named here.
 */
import type { HostFile } from '@agentmail/protocol';
import { dataDirVariable } from '@agentmail/shared-policy';

/** A service `agentmail service install` knows: `gateway` or a discovered bridge's service name. */
export type ServiceName = string;
/** A bridge service (everything but the Gateway). */
export type BridgeServiceName = string;

/**
 * How the plugin reaches its host (the steps the bridge READMEs document), from the descriptor's
 * `plugin` with package paths made relative to the checkout.
 */
export type PluginStep =
  /** The bridge loads its own code: nothing to install. */
  | { readonly kind: 'none' }
  /** `value` (absolute once joined to the checkout) in the JSON list at `keyPath` of `file`. */
  | {
      readonly kind: 'json-list-entry';
      readonly file: HostFile;
      readonly keyPath: readonly string[];
      readonly value: string;
      /** The unit's env names `value` here too (for a driver's host runs). */
      readonly variable: string | undefined;
    }
  /** The host executable run with `args` (`{package}`: the bridge package's absolute dir). */
  | {
      readonly kind: 'host-command';
      readonly args: readonly string[];
      readonly failureHint: string;
      readonly check: { readonly file: HostFile; readonly contains: string };
    }
  /** The plugin dir in the unit's env `variable`; `dir/proof` proves it is built. */
  | { readonly kind: 'env-dir'; readonly dir: string; readonly variable: string; readonly proof: string };

/** Facts about one bridge service (its descriptor, paths relative to the checkout). */
export interface BridgeFacts {
  readonly service: BridgeServiceName;
  /** The platform name the bridge registers with (and its data-dir variable is named after). */
  readonly platform: string;
  /** Human name of the host. */
  readonly displayName: string;
  /** Default agent name of the bridge. */
  readonly defaultAgentName: string;
  /** The bridge package, relative to the checkout (`packages/bridge-pi`). */
  readonly packageDir: string;
  /** The descriptor file, relative to the checkout. */
  readonly descriptorFile: string;
  /** README of the bridge package, relative to the checkout. */
  readonly readme: string;
  /** `[Unit] Description=`. */
  readonly description: string;
  /** What the unit runs: a Node entry of ours, or a host executable with arguments. */
  readonly exec:
    | { readonly kind: 'node-entry'; readonly entry: string }
    | { readonly kind: 'host'; readonly defaultBin: string; readonly args: readonly string[] };
  /** Env-file variable naming the host executable (for the unit, the driver and doctor). */
  readonly hostBinVariable: string | undefined;
  /**
   * The pinned host executable `pnpm install` puts in the checkout (relative to it), which install
   * takes before the host on PATH when no `--bin` is given.
   */
  readonly pinnedHostBin?: string;
  /** The host version this bridge is tested against (doctor warns on another one). */
  readonly supportedHostVersion: string | undefined;
  /** A host without an executable: the `package.json` whose version doctor reads (relative to the checkout). */
  readonly hostPackage: string | undefined;
  /** Fixed env-file settings the host needs. */
  readonly env: ReadonlyArray<readonly [string, string]>;
  /** A URL the unit's start hook requests once the host is up, if any. */
  readonly bootUrl: string | undefined;
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
