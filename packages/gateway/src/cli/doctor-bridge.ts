/**
 * The doctor's checks of an installed bridge: its host and version, its agent key and the name it
 * is bound to, registration, presence, the plugin in its host, and mode enforcement as its
 * heartbeats told the Gateway (SPEC P-8).
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Contact } from '@agentmail/protocol';
import { GatewayClient } from '@agentmail/shared-policy/client';
import { keyAgentName } from './agent-identity.js';
import type { EnforcementAnswer } from './doctor-gateway.js';
import { PROBE_TIMEOUT_MS, type Report, run } from './doctor-report.js';
import { startCommand, type UnitFacts, writable } from './doctor-units.js';
import { shortTime } from './output.js';
import type { ServiceLayout } from './service-files.js';
import { bridgeFactsIn, hostFilePath } from './service-hosts.js';
import { type BridgeFacts, bridgeDataDirVariable, unitName } from './service-platforms.js';
import { hasPluginEntry } from './service-plugins.js';

async function hostCheck(
  r: Report,
  facts: BridgeFacts,
  settings: Map<string, string>,
  checkout: string,
  env: NodeJS.ProcessEnv,
): Promise<void> {
  const area = facts.service;
  // A host that runs inside our own Node entry with nothing of its own to find (no package, no
  // executable): there is nothing to check, and no `--bin` to suggest.
  if (facts.hostPackage === undefined && facts.hostBinVariable === undefined) {
    r.add(area, 'host', 'ok', 'ops.doctor.host_none', { host: facts.displayName });
    return;
  }
  let version: string | undefined;
  if (facts.hostPackage !== undefined) {
    try {
      version = (
        JSON.parse(await readFile(join(checkout, facts.hostPackage), 'utf8')) as { version?: string }
      ).version;
    } catch {
      version = undefined;
    }
  } else {
    const bin = facts.hostBinVariable ? settings.get(facts.hostBinVariable) : undefined;
    if (bin === undefined || !existsSync(bin)) {
      r.add(
        area,
        'host',
        'fail',
        'ops.doctor.host_missing',
        { host: facts.service, path: bin ?? '-' },
        `install it (see ${facts.readme}), then agentmail service install ${facts.service} --bin <path> --force`,
      );
      return;
    }
    const res = await run(bin, ['--version'], env);
    version = /\d+\.\d+\.\d+[\w.-]*/.exec(res.out)?.[0];
    if (version === undefined && res.timedOut) {
      // Not "not the host": a slow start says nothing about what the binary is.
      r.add(area, 'host', 'warn', 'ops.doctor.host_slow', {
        path: bin,
        seconds: Math.round(PROBE_TIMEOUT_MS / 1000),
      });
      return;
    }
    if (version === undefined) {
      r.add(
        area,
        'host',
        'fail',
        'ops.doctor.host_no_version',
        { host: facts.service, path: bin },
        `is ${bin} really ${facts.service}? agentmail service install ${facts.service} --bin /absolute/path/to/${facts.service} --force`,
      );
      return;
    }
  }
  if (version === undefined) {
    r.add(
      area,
      'host',
      'fail',
      'ops.doctor.host_missing',
      { host: facts.service, path: facts.hostPackage ?? '-' },
      'pnpm install (in the checkout)',
    );
  } else if (facts.supportedHostVersion !== undefined && version !== facts.supportedHostVersion) {
    r.add(
      area,
      'host',
      'warn',
      'ops.doctor.host_version',
      { host: facts.service, version, supported: facts.supportedHostVersion },
      `install ${facts.service} ${facts.supportedHostVersion} (see ${facts.readme})`,
    );
  } else {
    r.add(area, 'host', 'ok', 'ops.doctor.host_ok', { host: facts.service, version });
  }
}

async function pluginCheck(
  r: Report,
  facts: BridgeFacts,
  settings: Map<string, string>,
  checkout: string,
  env: NodeJS.ProcessEnv,
  online: boolean,
  enforcement: { mode_enforcement?: string | null; mode_enforcement_reason?: string | null } | undefined,
  start: string,
  restart: string,
): Promise<void> {
  const area = facts.service;
  const step = facts.plugin;
  const reinstall = `agentmail service install ${facts.service} --force, then ${restart}`;
  let where: string | undefined;
  let present = true;
  switch (step.kind) {
    case 'none':
      r.add(area, 'plugin', 'ok', 'ops.doctor.plugin_builtin', { host: facts.displayName });
      return;
    case 'json-list-entry':
      where = hostFilePath(step.file, env);
      present = await hasPluginEntry(where, step.keyPath, join(checkout, step.value));
      break;
    case 'env-dir':
      where = settings.get(step.variable) ?? join(checkout, step.dir);
      present = existsSync(join(where, step.proof));
      break;
    case 'host-command': {
      const file = hostFilePath(step.check.file, env);
      where = file;
      present = await readFile(file, 'utf8').then(
        (t) => t.includes(step.check.contains),
        () => false,
      );
      break;
    }
  }
  if (!present)
    r.add(
      area,
      'plugin',
      'fail',
      'ops.doctor.plugin_missing',
      { host: facts.service, path: where },
      reinstall,
    );
  else if (!online)
    r.add(
      area,
      'plugin',
      'warn',
      'ops.doctor.plugin_configured',
      { host: facts.service, path: where },
      start,
    );
  // A driver (its own process connects, the plugin runs inside the host) is online even when its
  // host did not load the plugin: only native mode enforcement (the plugin's gate) proves it.
  // The reason is the agent's own, from its last heartbeat (the Gateway keeps it).
  else if (facts.exec.kind === 'node-entry' && enforcement?.mode_enforcement !== 'native')
    r.add(
      area,
      'plugin',
      'warn',
      'ops.doctor.plugin_unproven',
      {
        host: facts.service,
        path: where,
        mode: enforcement?.mode_enforcement ?? r.t('ops.doctor.unknown'),
        reason: enforcement?.mode_enforcement_reason ?? r.t('ops.doctor.unknown'),
      },
      `${reinstall}   (see ${facts.readme})`,
    );
  // The plugin is what connects to the Gateway: an online agent proves its host loaded it.
  else r.add(area, 'plugin', 'ok', 'ops.doctor.plugin_loaded', { host: facts.service, path: where });
}

/** The name a key is bound to (see {@link keyAgentName}); undefined when that cannot be learnt. */
const boundName = (client: GatewayClient): Promise<string | undefined> =>
  keyAgentName(client).catch(() => undefined);

/** One installed bridge as its checks see it: its facts, env settings, agent and fixes. */
interface BridgeUnderCheck {
  layout: ServiceLayout;
  facts: BridgeFacts;
  settings: Map<string, string>;
  /** The area of its lines (the service name). */
  area: string;
  unit: string;
  /** Its agent's name (the env file's, else the platform's default). */
  name: string;
  key: string;
  /** The Gateway URL of its env file, without a trailing `/`. */
  url: string;
  start: string;
  restart: string;
  /** The fix for a missing, refused or misbound key. */
  fixKey: string;
}

/**
 * Every check of one installed bridge, in the order they print: state dir, host, key,
 * registration, presence, plugin, mode enforcement.
 */
export async function bridgeChecks(
  r: Report,
  layout: ServiceLayout,
  unitFacts: UnitFacts,
  env: NodeJS.ProcessEnv,
  checkout: string,
  enforcement: EnforcementAnswer,
): Promise<void> {
  if (layout.service === 'gateway') return;
  const { settings } = unitFacts;
  const facts = bridgeFactsIn(checkout, layout.service);
  const name = settings.get('AGENTMAIL_AGENT_NAME') || facts.defaultAgentName;
  const restart = startCommand(layout, unitFacts, 'restart');
  const b: BridgeUnderCheck = {
    layout,
    facts,
    settings,
    area: facts.service,
    unit: unitName(facts.service),
    name,
    key: settings.get('AGENTMAIL_AGENT_KEY') || settings.get('AGENTMAIL_AGENT_SECRET') || '',
    url: (settings.get('AGENTMAIL_GATEWAY_URL') ?? '').replace(/\/+$/, ''),
    start: startCommand(layout, unitFacts, 'start'),
    restart,
    fixKey: `agentmail service install ${facts.service} --issue-key --force   (or --agent-key <key from: agentmail agent key ${name}>), then ${restart}`,
  };
  await writable(r, b.area, settings.get(bridgeDataDirVariable(facts)) ?? layout.stateDir);
  await hostCheck(r, facts, settings, checkout, env);
  const contacts = await agentChecks(r, b);
  const online = contacts?.find((c) => c.name === name)?.online === true;
  const said = enforcement.asked ? enforcement.agents.get(name) : undefined;
  await pluginCheck(r, facts, settings, checkout, env, online, said, b.start, restart);
  enforcementCheck(r, b, enforcement);
}

/**
 * The agent key, the name it is bound to, registration and presence, asked of the Gateway in the
 * bridge's env file with the bridge's own key.
 * @returns the contacts the key sees, undefined when the key could not be used
 */
async function agentChecks(r: Report, b: BridgeUnderCheck): Promise<Contact[] | undefined> {
  const { area, layout, url, fixKey } = b;
  if (b.key === '' || !/^https?:\/\//.test(url)) {
    r.add(
      area,
      'key',
      'fail',
      'ops.doctor.key_missing',
      { path: b.key === '' ? layout.keyFile : layout.envFile },
      fixKey,
    );
    return undefined;
  }
  const client = new GatewayClient({ baseUrl: url, key: b.key, timeoutMs: PROBE_TIMEOUT_MS });
  let contacts: Contact[] | undefined;
  try {
    contacts = (await client.contacts()).contacts;
    r.add(area, 'key', 'ok', 'ops.doctor.key_ok', { url });
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (status === 401 || status === 403)
      r.add(area, 'key', 'fail', 'ops.doctor.key_refused', { path: layout.keyFile, url }, fixKey);
    else
      r.add(
        area,
        'key',
        'fail',
        'ops.doctor.key_unchecked',
        { url, error: (err as Error).message },
        'agentmail doctor, once the Gateway answers',
      );
  }
  const self = contacts?.find((c) => c.kind === 'agent' && c.name === b.name);
  if (contacts !== undefined && self === undefined) await unregisteredCheck(r, b, client);
  else if (self !== undefined) {
    await registeredCheck(r, b, client, self);
    onlineCheck(r, b, self);
  }
  return contacts;
}

/** The key's agent is not among the contacts: bound to another name, or never registered. */
async function unregisteredCheck(r: Report, b: BridgeUnderCheck, client: GatewayClient): Promise<void> {
  const { area, name } = b;
  const bound = await boundName(client);
  if (bound !== undefined && bound !== name)
    r.add(
      area,
      'registered',
      'fail',
      'ops.doctor.key_other_name',
      { name, bound },
      `agentmail service install ${b.facts.service} --agent-name ${bound} --force   (the key's name; or a key for ${name}: --issue-key), then ${b.restart}`,
    );
  else
    r.add(
      area,
      'registered',
      'fail',
      'ops.doctor.not_registered',
      { name },
      `${b.start}; its log: journalctl --user -u ${b.unit} -e`,
    );
}

/** Registering is idempotent for a registered name; a key bound to another name is refused with that name. */
async function registeredCheck(
  r: Report,
  b: BridgeUnderCheck,
  client: GatewayClient,
  self: Contact,
): Promise<void> {
  const { area, name } = b;
  try {
    await client.register({ name, platform: self.platform });
    r.add(area, 'registered', 'ok', 'ops.doctor.registered', { name, platform: self.platform });
  } catch (err) {
    const bound = (err as { body?: { bound_name?: unknown } }).body?.bound_name;
    r.add(
      area,
      'registered',
      'fail',
      'ops.doctor.key_other_name',
      { name, bound: typeof bound === 'string' ? bound : '?' },
      b.fixKey,
    );
  }
}

function onlineCheck(r: Report, b: BridgeUnderCheck, self: Contact): void {
  const { area, name } = b;
  if (self.online)
    r.add(area, 'online', 'ok', 'ops.doctor.online', { name, last_seen: shortTime(self.last_seen) });
  else
    r.add(
      area,
      'online',
      'fail',
      self.last_seen === null ? 'ops.doctor.never_online' : 'ops.doctor.offline',
      {
        name,
        last_seen: shortTime(self.last_seen),
      },
      `${b.restart}; why it stopped: journalctl --user -u ${b.unit} -e`,
    );
}

/** Mode enforcement as the agent's last heartbeat told the Gateway (SPEC P-8), or why it is not known. */
function enforcementCheck(r: Report, b: BridgeUnderCheck, enforcement: EnforcementAnswer): void {
  const { area, name } = b;
  const said = enforcement.asked ? enforcement.agents.get(name) : undefined;
  if (!enforcement.asked)
    r.add(area, 'mode_enforcement', 'warn', enforcement.key, enforcement.params, enforcement.fix);
  else if (said?.mode_enforcement === 'native')
    r.add(area, 'mode_enforcement', 'ok', 'ops.doctor.enforcement_native');
  else if (said?.mode_enforcement === 'advisory')
    r.add(
      area,
      'mode_enforcement',
      'warn',
      'ops.doctor.enforcement_advisory',
      { reason: said.mode_enforcement_reason ?? '-' },
      `see ${b.facts.readme}`,
    );
  else
    r.add(
      area,
      'mode_enforcement',
      'warn',
      'ops.doctor.enforcement_unknown',
      { name },
      `${b.start}; its log: journalctl --user -u ${b.unit} -e`,
    );
  // The workspace sandbox (P-12) as the bridge's last heartbeat said it; unverified is the normal
  // state of a host whose tools cannot be wrapped: guarded tools then ask per call (P-1).
  if (said?.sandbox === 'verified') r.add(area, 'sandbox', 'ok', 'ops.doctor.sandbox_verified');
  else if (said?.sandbox)
    r.add(area, 'sandbox', 'ok', 'ops.doctor.sandbox_unverified', {
      reason: said.sandbox.replace(/^unverified:\s*/, ''),
    });
}
