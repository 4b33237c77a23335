/**
 * The bridges of a checkout, discovered: every `packages/<dir>/host.json` (the host descriptor,
 * schema `HostDescriptor` of @agentmail/protocol) becomes one bridge service. Read as data — the
 * CLI never imports or builds a bridge — so adding a host touches only its own package.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';
import {
  HOST_DESCRIPTOR_FILE,
  type HostDescriptor,
  type HostFile,
  type PluginStep as HostPluginStep,
  parseHostDescriptor,
} from '@agentmail/protocol';
import { STOP_GRACE_MS } from '@agentmail/shared-policy';
import { findCheckout } from './checkout.js';
import { CliError } from './errors.js';
import type { BridgeFacts, PluginStep, ServiceName } from './service-platforms.js';

/** The kit's goodbye (`POST /agent/offline`) is bounded by 2 s (bridge-runtime OFFLINE_NOTICE_TIMEOUT_MS). */
const GOODBYE_MS = 2_000;

/** The kit's part of every bridge's stop: abort turns, wait their grace, say goodbye (B-15, H-3). */
const KIT_STOP = {
  ms: STOP_GRACE_MS + GOODBYE_MS,
  words: `turns ${STOP_GRACE_MS / 1000} s, goodbye ${GOODBYE_MS / 1000} s`,
};

function stopBudget(parts: HostDescriptor['service']['stopBudget']): { ms: number; words: string } {
  let ms = 0;
  const words: string[] = [];
  for (const part of parts) {
    if (part === 'kit') {
      ms += KIT_STOP.ms;
      words.push(KIT_STOP.words);
    } else {
      ms += part.ms ?? 0;
      words.push(part.ms === undefined ? part.what : `${part.what} ${part.ms / 1000} s`);
    }
  }
  return { ms, words: words.join(', ') };
}

function pluginStep(step: HostPluginStep, pkg: (p: string) => string): PluginStep {
  switch (step.kind) {
    case 'none':
      return step;
    case 'json-list-entry':
      return { ...step, value: pkg(step.value), variable: step.variable };
    case 'host-command':
      return step;
    case 'env-dir':
      return { ...step, dir: pkg(step.dir) };
  }
}

/** A descriptor as the CLI's facts: package paths made relative to the checkout. */
export function factsOf(host: HostDescriptor, packageDir: string): BridgeFacts {
  const pkg = (p: string) => `${packageDir}/${p}`;
  const { service } = host;
  const budget = stopBudget(service.stopBudget);
  const exec =
    service.exec.kind === 'node-entry'
      ? { kind: 'node-entry' as const, entry: pkg(service.exec.entry) }
      : {
          kind: 'host' as const,
          // A bare name is looked up on PATH; a path is the package's own (pinned) executable.
          defaultBin: service.exec.defaultBin.includes('/')
            ? pkg(service.exec.defaultBin)
            : service.exec.defaultBin,
          args: service.exec.args,
        };
  return {
    service: service.name,
    platform: host.platform,
    displayName: host.displayName,
    defaultAgentName: host.defaultAgentName,
    packageDir,
    descriptorFile: pkg(HOST_DESCRIPTOR_FILE),
    readme: pkg(host.readme),
    description: service.description,
    exec,
    hostBinVariable: service.hostBinVariable,
    ...(service.pinnedHostBin === undefined ? {} : { pinnedHostBin: pkg(service.pinnedHostBin) }),
    supportedHostVersion: service.supportedHostVersion,
    hostPackage: service.hostPackage === undefined ? undefined : pkg(service.hostPackage),
    env: Object.entries(service.env ?? {}),
    bootUrl: service.bootUrl,
    stopBudgetMs: budget.ms,
    stopBudgetWords: budget.words,
    memoryMax: service.memoryMax,
    timeoutStopSec: service.timeoutStopSec,
    plugin: pluginStep(host.plugin, pkg),
    builtFiles: service.builtFiles.map(pkg),
    buildCommand: service.buildCommand,
  };
}

/** What the checkout's descriptors gave: the hosts, and the files that could not be used. */
interface Discovery {
  hosts: ReadonlyMap<ServiceName, BridgeFacts>;
  /** One error per bad descriptor (unreadable, invalid, or clashing with another host). */
  problems: readonly CliError[];
}

const discovered = new Map<string, Discovery>();

/** Read one descriptor; the error names its file and field. */
function readDescriptor(file: string, dir: string): BridgeFacts | CliError {
  try {
    return factsOf(parseHostDescriptor(readFileSync(file, 'utf8'), file), `packages/${dir}`);
  } catch (err) {
    return new CliError('SERVICE_SETUP_FAILED', `bad host descriptor: ${(err as Error).message}`, {
      suggestion: `fix ${file} (its schema: HostDescriptor in packages/protocol/src/host.ts; docs/BRIDGE-CONTRACT.md "Adding a host")`,
      cause: err,
    });
  }
}

/**
 * Every host of `checkout` (each `packages/<dir>/host.json`, in directory order) and the descriptors that
 * could not be used: a bad one leaves the others working (and is said where it is asked for:
 * {@link descriptorProblems}, doctor, an unknown service name). Read once per checkout.
 */
function discover(checkout: string): Discovery {
  const known = discovered.get(checkout);
  if (known !== undefined) return known;
  const packages = join(checkout, 'packages');
  const dirs = existsSync(packages)
    ? readdirSync(packages, { withFileTypes: true })
        .filter(
          (d) =>
            (d.isDirectory() || d.isSymbolicLink()) &&
            existsSync(join(packages, d.name, HOST_DESCRIPTOR_FILE)),
        )
        .map((d) => d.name)
        .sort()
    : [];
  const hosts = new Map<ServiceName, BridgeFacts>();
  const platforms = new Map<string, string>();
  const problems: CliError[] = [];
  for (const dir of dirs) {
    const file = join(packages, dir, HOST_DESCRIPTOR_FILE);
    const facts = readDescriptor(file, dir);
    if (facts instanceof CliError) {
      problems.push(facts);
      continue;
    }
    const byService = hosts.get(facts.service)?.descriptorFile;
    const byPlatform = platforms.get(facts.platform);
    const clash = byService ?? byPlatform;
    if (clash !== undefined) {
      const what = byService !== undefined ? `service "${facts.service}"` : `platform "${facts.platform}"`;
      problems.push(
        new CliError(
          'SERVICE_SETUP_FAILED',
          `bad host descriptor: ${file}: ${what} is also ${join(checkout, clash)}'s`,
          {
            suggestion: 'give each host its own service name and platform id',
          },
        ),
      );
      continue;
    }
    hosts.set(facts.service, facts);
    platforms.set(facts.platform, facts.descriptorFile);
  }
  const found = { hosts, problems };
  discovered.set(checkout, found);
  return found;
}

/** The usable hosts of `checkout`, by service name (see {@link discover}). */
export function bridgesIn(checkout: string): ReadonlyMap<ServiceName, BridgeFacts> {
  return discover(checkout).hosts;
}

/** The descriptors of the CLI's checkout that could not be used (each an error naming file and field). */
export function descriptorProblems(env: NodeJS.ProcessEnv): readonly CliError[] {
  return discover(findCheckout(env)).problems;
}

export function bridges(env: NodeJS.ProcessEnv): ReadonlyMap<ServiceName, BridgeFacts> {
  return bridgesIn(findCheckout(env));
}

/** Every service: the Gateway, then the discovered bridges. */
export function serviceNames(env: NodeJS.ProcessEnv): ServiceName[] {
  return ['gateway', ...bridges(env).keys()];
}

/** The services for a command's help (`gateway | pi | …`); never throws (help works without a checkout). */
export function serviceNamesHelp(env: NodeJS.ProcessEnv): string {
  try {
    return serviceNames(env).join(' | ');
  } catch {
    return 'gateway | <bridge>';
  }
}

/** True when `name` is the Gateway or a discovered bridge. */
export function isServiceName(name: string, env: NodeJS.ProcessEnv): boolean {
  return name === 'gateway' || bridges(env).has(name);
}

/**
 * The facts of bridge `service` in `checkout`.
 * @throws Error when there is no such bridge (callers check the name first: {@link isServiceName}).
 */
export function bridgeFactsIn(checkout: string, service: ServiceName): BridgeFacts {
  const facts = bridgesIn(checkout).get(service);
  if (facts === undefined) throw new Error(`no bridge "${service}" in ${checkout}`);
  return facts;
}

/** The facts of bridge `service` of the CLI's checkout; see {@link bridgeFactsIn}. */
export function bridgeFacts(service: ServiceName, env: NodeJS.ProcessEnv): BridgeFacts {
  return bridgeFactsIn(findCheckout(env), service);
}

/** A host's file in the user's home: `config` = `$XDG_CONFIG_HOME` (absolute) or `~/.config`; `home` = `~`. */
export function hostFilePath(file: HostFile, env: NodeJS.ProcessEnv): string {
  const base =
    file.base === 'home'
      ? (env.HOME ?? '')
      : env.XDG_CONFIG_HOME && isAbsolute(env.XDG_CONFIG_HOME)
        ? env.XDG_CONFIG_HOME
        : join(env.HOME ?? '', '.config');
  return join(base, file.path);
}
