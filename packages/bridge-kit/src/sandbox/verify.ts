/**
 * The start-time self-check of a sandbox (SPEC P-12): canaries run inside the same confinement the
 * turns use (the turn's own policy builder, the canary workspace in place of a mail's), and the
 * sandbox counts as verified only when every one held.
 */

import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createServer as createNetServer, type Server } from 'node:net';
import { join } from 'node:path';
import { messageOf } from '@agentmail/shared-policy';
import { BWRAP_ENV, findBubblewrap, hostFacts, type SandboxPolicy } from './policy.js';
import { sandboxRun } from './run.js';
import type { BwrapArgsFor, SandboxState } from './sandbox.js';

/** The canaries, in the order they run. */
export const CANARIES = [
  'workspace_writable',
  'write_outside',
  'symlink_out',
  'git_hooks',
  'secrets',
  'egress',
  'host_sockets',
  'pid_namespace',
  'capabilities',
  'kernel_settings',
] as const;
/** One canary. */
export type CanaryId = (typeof CANARIES)[number];

/** How one canary went: `ok` when the confinement held. */
export interface CanaryResult {
  id: CanaryId;
  ok: boolean;
  /** What was tried and what happened. */
  detail: string;
}

/** The self-check's outcome: the state to report, and every canary. */
export interface SandboxCheck {
  state: SandboxState;
  /** The `bwrap` found, when one was. */
  bwrap?: string;
  canaries: CanaryResult[];
}

/** Options of {@link verifySandbox}. */
export interface VerifySandboxOptions {
  /** The policy a turn in `workspace` runs under (the same builder the turns use). */
  policyFor(workspace: string): SandboxPolicy;
  /**
   * A directory on the host's real filesystem, outside every place the policy makes private
   * (`/tmp`, `/run`, `/var/tmp`), where the canaries' workspace and "outside" live for the check.
   * @default `~/.cache/agentmail`
   */
  checkDir?: string;
  /** Secrets that must be unreadable inside (e.g. the agent key file). */
  secrets?: readonly string[];
  /** Where to look for bubblewrap. @default process.env */
  env?: Readonly<Record<string, string | undefined>>;
  /** The whole check's limit, in ms. @default 15_000 */
  timeoutMs?: number;
  /** Tests only: weaken the confinement on purpose (the verifier must catch it). */
  argsFor?: BwrapArgsFor;
}

/** The canary program, run by node inside the sandbox: one JSON line per canary. */
const CANARY_SCRIPT = String.raw`
const fs = require('node:fs'); const net = require('node:net');
const c = JSON.parse(process.argv[1]);
const out = (id, ok, detail) => process.stdout.write(JSON.stringify({ id, ok, detail }) + '\n');
const tryWrite = (p) => { try { fs.writeFileSync(p, 'canary'); return 'written'; } catch (e) { return e.code || String(e); } };
const connect = (o) => new Promise((r) => { const s = net.connect(o); const t = setTimeout(() => { s.destroy(); r('timeout'); }, 1500);
  s.once('connect', () => { clearTimeout(t); s.destroy(); r('connected'); }); s.once('error', (e) => { clearTimeout(t); r(e.code || String(e)); }); });
(async () => {
  const w = tryWrite(c.ws + '/canary-in'); out('workspace_writable', w === 'written', 'write in the workspace: ' + w);
  const o = tryWrite(c.outside + '/canary-out'); out('write_outside', o !== 'written', 'write outside the workspace: ' + o);
  const l = tryWrite(c.ws + '/link-out/canary-link'); out('symlink_out', l !== 'written', 'write through a symlink in the workspace pointing out: ' + l);
  const h = tryWrite(c.ws + '/.git/hooks/pre-commit'); const g = tryWrite(c.ws + '/.git/config');
  const d = tryWrite(c.ws + '/.git/commondir');
  let mv = 'renamed'; try { fs.renameSync(c.ws + '/.git', c.ws + '/.git-moved'); } catch (e) { mv = e.code || String(e); }
  out('git_hooks', [h, g, d, mv].every((r) => r !== 'written' && r !== 'renamed'),
    'write .git/hooks/pre-commit: ' + h + '; .git/config: ' + g + '; .git/commondir: ' + d + '; rename .git: ' + mv);
  const seen = [];
  for (const s of c.secrets) { try { const st = fs.statSync(s); const d = st.isDirectory() ? fs.readdirSync(s) : [];
      const f = st.isFile() ? fs.readFileSync(s, 'utf8') : ''; if (d.length > 0 || f.length > 0) seen.push(s); } catch {} }
  out('secrets', seen.length === 0, seen.length === 0 ? c.secrets.length + ' secret place(s) unreadable or empty' : 'readable: ' + seen.join(', '));
  const e = await connect({ host: '127.0.0.1', port: c.port }); out('egress', e !== 'connected', 'connect to a listener outside the sandbox: ' + e);
  const reached = [];
  for (const p of c.sockets) if ((await connect({ path: p })) === 'connected') reached.push(p);
  out('host_sockets', reached.length === 0, reached.length === 0 ? c.sockets.length + ' host socket(s) unreachable' : 'reachable: ' + reached.join(', '));
  let k = 'ESRCH'; try { process.kill(c.hostPid, 0); k = 'signalled'; } catch (err) { k = err.code || String(err); }
  out('pid_namespace', k !== 'signalled', 'signal 0 to a host process: ' + k);
  const caps = (fs.readFileSync('/proc/self/status', 'utf8').match(/^CapEff:\s*(\S+)/m) || [])[1] || '?';
  out('capabilities', /^0+$/.test(caps), 'effective capabilities: ' + caps);
  let ks = 'opened'; try { fs.closeSync(fs.openSync('/proc/sys/kernel/core_pattern', 'r+')); } catch (e) { ks = e.code || String(e); }
  out('kernel_settings', ks !== 'opened', 'open /proc/sys/kernel/core_pattern for writing: ' + ks);
})();
`;

/** A TCP listener on loopback outside the sandbox (the egress canary's target). */
async function listener(): Promise<{ server: Server; port: number }> {
  const server = createNetServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const address = server.address();
  return { server, port: typeof address === 'object' && address ? address.port : 0 };
}

/** A path socket on the host's read-only root (a stand-in for a Docker or D-Bus socket). */
async function socketAt(path: string): Promise<Server> {
  const server = createNetServer((s) => s.destroy());
  await new Promise<void>((r, j) => {
    server.once('error', j);
    server.listen(path, r);
  });
  return server;
}

const unverified = (reason: string, canaries: CanaryResult[] = [], bwrap?: string): SandboxCheck => ({
  state: { verified: false, reason },
  canaries,
  ...(bwrap ? { bwrap } : {}),
});

/**
 * Run the canaries (SPEC P-12) and say whether the sandbox holds. Never throws: bubblewrap
 * missing, user namespaces refused, a canary that did not hold or did not run — each is
 * `unverified` with its reason.
 * @example const check = await verifySandbox({ policyFor: (ws) => ({ workspace: ws }) });
 */
export async function verifySandbox(options: VerifySandboxOptions): Promise<SandboxCheck> {
  const bwrap = findBubblewrap(options.env);
  const named = options.env?.[BWRAP_ENV]?.trim();
  if (!bwrap)
    return unverified(
      named
        ? `bubblewrap not found at ${BWRAP_ENV}=${named} (an absolute path of an executable)`
        : 'bubblewrap (bwrap) not found on PATH: install Debian package bubblewrap',
    );
  const root = options.checkDir ?? join(hostFacts(options.env).home, '.cache', 'agentmail');
  let base: string | undefined;
  const servers: Server[] = [];
  try {
    await mkdir(root, { recursive: true });
    base = await mkdtemp(join(root, 'sandbox-check-'));
    const ws = join(base, 'ws');
    const outside = join(base, 'outside');
    const secret = join(base, 'secret');
    await mkdir(join(ws, '.git', 'hooks'), { recursive: true });
    await writeFile(join(ws, '.git', 'config'), '[core]\n');
    await mkdir(outside, { recursive: true });
    await mkdir(secret, { recursive: true });
    await writeFile(join(secret, 'key'), `canary-secret-${randomUUID()}`);
    await symlink(outside, join(ws, 'link-out'));
    const tcp = await listener();
    servers.push(tcp.server);
    const sock = join(outside, 'canary.sock');
    servers.push(await socketAt(sock));
    const policy = options.policyFor(ws);
    // The canary program is this node: visible read-only even when it lives in a place the
    // sandbox makes private (a checkout under /tmp); that one file weakens nothing.
    const checked: SandboxPolicy = {
      ...policy,
      hidden: [...(policy.hidden ?? []), secret],
      readOnly: [...(policy.readOnly ?? []), process.execPath],
    };
    const facts = hostFacts(options.env);
    const home = facts.home;
    const secrets = [
      secret,
      ...['.ssh', '.config/agentmail'].map((p) => join(home, p)).filter((p) => existsSync(p)),
      ...(options.secrets ?? []).filter((p) => existsSync(p)),
    ];
    const config = {
      ws,
      outside,
      secrets,
      port: tcp.port,
      sockets: [...new Set([sock, ...facts.sockets])].filter((p) => !p.startsWith(`${ws}/`)),
      hostPid: process.pid,
    };
    let output = '';
    const run = await sandboxRun(
      { bwrap, policy: checked },
      [process.execPath, '-e', CANARY_SCRIPT, JSON.stringify(config)],
      {
        onData: (d) => {
          output += d.toString('utf8');
        },
        timeout: (options.timeoutMs ?? 15_000) / 1000,
        ...(options.argsFor ? { argsFor: options.argsFor } : {}),
      },
    );
    const canaries = parseCanaries(output);
    const outsideWritten = readdirSync(outside).filter((f) => f !== 'canary.sock');
    // The host's own view: nothing landed outside, whatever the program inside said.
    if (outsideWritten.length > 0) {
      for (const c of canaries)
        if (c.id === 'write_outside' || c.id === 'symlink_out')
          c.ok = c.ok && !outsideWritten.includes(c.id === 'write_outside' ? 'canary-out' : 'canary-link');
    }
    const missing = CANARIES.filter((id) => !canaries.some((c) => c.id === id));
    if (missing.length > 0) {
      const said = output.trim().split('\n').slice(-3).join(' ').slice(0, 300);
      return unverified(
        `the self-check did not finish (exit ${run.exitCode}; no result for ${missing.join(', ')})${said ? `: ${said}` : ''}`,
        canaries,
        bwrap,
      );
    }
    const failed = canaries.find((c) => !c.ok);
    if (failed) return unverified(`canary ${failed.id} failed: ${failed.detail}`, canaries, bwrap);
    return { state: { verified: true }, bwrap, canaries };
  } catch (err) {
    return unverified(`the self-check could not run: ${messageOf(err)}`, [], bwrap);
  } finally {
    for (const s of servers) s.close();
    if (base) await rm(base, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** The canary lines of the program's output (anything else ignored). */
function parseCanaries(output: string): CanaryResult[] {
  const results: CanaryResult[] = [];
  for (const line of output.split('\n')) {
    try {
      const v = JSON.parse(line) as Partial<CanaryResult>;
      if (
        typeof v.id === 'string' &&
        (CANARIES as readonly string[]).includes(v.id) &&
        typeof v.ok === 'boolean'
      )
        results.push({ id: v.id as CanaryId, ok: v.ok, detail: String(v.detail ?? '') });
    } catch {
      // not a canary line (bwrap's own words)
    }
  }
  return results;
}
