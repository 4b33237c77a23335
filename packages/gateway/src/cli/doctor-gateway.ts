/**
 * The doctor's checks of this machine and the Gateway: Node.js, the person's Gateway and token,
 * what the Gateway knows of each agent's mode enforcement (SPEC P-8), and the key the Gateway's
 * own crash reports are mailed with.
 */
import type { AgentView } from '@agentmail/protocol';
import type { TextKey, TextParams } from '@agentmail/shared-policy';
import { GatewayClient } from '@agentmail/shared-policy/client';
import type { Command } from 'commander';
import { apiFor, type CliContext } from './context.js';
import { NODE_MIN, PROBE_TIMEOUT_MS, type Report } from './doctor-report.js';
import { isCliError } from './errors.js';
import type { HumanApi } from './http.js';
import type { ServiceLayout } from './service-files.js';

/** Node.js is new enough (`engines.node`). */
export function nodeCheck(r: Report): void {
  const [major = 0, minor = 0] = process.versions.node.split('.').map(Number);
  const ok = major > NODE_MIN[0] || (major === NODE_MIN[0] && minor >= NODE_MIN[1]);
  r.add(
    'node',
    'version',
    ok ? 'ok' : 'fail',
    ok ? 'ops.doctor.node_ok' : 'ops.doctor.node_old',
    {
      version: process.versions.node,
      min: NODE_MIN.join('.'),
    },
    ok ? undefined : 'source scripts/env.sh (in the checkout), or install Node.js 22.19 or newer',
  );
}

/**
 * The person's Gateway as the first checks found it: the client when the token works, else why
 * not (`error` undefined: no token), with the URL and where it came from for later lines.
 */
export interface GatewayAnswer {
  api: HumanApi | undefined;
  url: string;
  from: string;
  error?: string;
}

export async function gatewayChecks(r: Report, ctx: CliContext, cmd: Command): Promise<GatewayAnswer> {
  const config = await ctx.config(cmd);
  const api = apiFor(config, { timeoutMs: PROBE_TIMEOUT_MS });
  const where = { url: config.url, from: config.urlFrom };
  try {
    const health = await api.health();
    const version = typeof health.version === 'string' ? health.version : r.t('ops.doctor.unknown');
    r.add('gateway', 'reachable', 'ok', 'ops.doctor.gateway_ok', {
      url: config.url,
      from: config.urlFrom,
      version,
    });
  } catch (err) {
    const error = isCliError(err) ? err.message : String(err);
    r.add(
      'gateway',
      'reachable',
      'fail',
      'ops.doctor.gateway_down',
      { url: config.url, from: config.urlFrom, error },
      'systemctl --user start agentmail-gateway.service (or agentmail serve); a remote Gateway: agentmail login --url <url> --token <token>',
    );
    return { api: undefined, ...where, error };
  }
  if (config.token === undefined) {
    r.add(
      'token',
      'valid',
      'warn',
      'ops.doctor.token_none',
      {},
      'agentmail login --url <url> --token <token>',
    );
    return { api: undefined, ...where };
  }
  try {
    await api.inbox({ status: 'unread', limit: 1 });
    r.add('token', 'valid', 'ok', 'ops.doctor.token_ok');
    return { api, ...where };
  } catch (err) {
    const error = isCliError(err) ? err.message : String(err);
    r.add(
      'token',
      'valid',
      'fail',
      'ops.doctor.token_bad',
      { from: config.tokenFrom ?? '', error },
      'agentmail login --url <url> --token <token>   (a lost admin token: agentmail admin reset-token --data-dir <dir>)',
    );
    return { api: undefined, ...where, error };
  }
}

/** What an agent's last heartbeat told the Gateway about mode enforcement (SPEC P-8). */
type HeartbeatMode = Pick<AgentView, 'mode_enforcement' | 'mode_enforcement_reason' | 'sandbox'>;

/**
 * The Gateway's answer on every agent's mode enforcement (`GET /me/agents`, as the person sees
 * it), or the line to print for each bridge when it could not be asked.
 */
export type EnforcementAnswer =
  | { asked: true; agents: ReadonlyMap<string, HeartbeatMode> }
  | { asked: false; key: TextKey; params: TextParams; fix: string };

export async function askEnforcement(gw: GatewayAnswer): Promise<EnforcementAnswer> {
  const where = { url: gw.url, from: gw.from };
  const unasked = (error: string): EnforcementAnswer => ({
    asked: false,
    key: 'ops.doctor.enforcement_unasked',
    params: { ...where, error },
    fix: 'agentmail doctor, once the Gateway answers',
  });
  if (gw.api === undefined)
    return gw.error === undefined
      ? {
          asked: false,
          key: 'ops.doctor.enforcement_no_token',
          params: where,
          fix: 'agentmail login --url <url> --token <token>',
        }
      : unasked(gw.error);
  try {
    const { agents } = await gw.api.agents();
    return { asked: true, agents: new Map(agents.map((a) => [a.name, a] as const)) };
  } catch (err) {
    return unasked(isCliError(err) ? err.message : String(err));
  }
}

/**
 * The Gateway's own crash reports are mailed with the agent key in its env file: a missing or
 * refused key means its reports stay spooled, unseen.
 */
export async function gatewayReportKeyCheck(
  r: Report,
  layout: ServiceLayout,
  settings: Map<string, string>,
): Promise<void> {
  const flag = layout.scope === 'system' ? ' --system' : '';
  const fix = `agentmail service install gateway${flag} --issue-key --force   (as an admin, with the Gateway running)`;
  // A system unit's env file is root's: unreadable here, nothing to say about its key.
  if (layout.scope === 'system' && settings.size === 0) return;
  const key = settings.get('AGENTMAIL_AGENT_KEY') ?? '';
  const url = (settings.get('AGENTMAIL_GATEWAY_URL') ?? '').replace(/\/+$/, '');
  if (key === '' || !/^https?:\/\//.test(url)) {
    r.add(
      'gateway',
      'report_key',
      'warn',
      'ops.doctor.report_key_missing',
      { path: key === '' ? layout.keyFile : layout.envFile },
      fix,
    );
    return;
  }
  try {
    await new GatewayClient({ baseUrl: url, key, timeoutMs: PROBE_TIMEOUT_MS }).contacts();
    r.add('gateway', 'report_key', 'ok', 'ops.doctor.report_key_ok', { path: layout.keyFile });
  } catch (err) {
    const status = (err as { status?: unknown }).status;
    if (status === 401 || status === 403)
      r.add('gateway', 'report_key', 'fail', 'ops.doctor.report_key_refused', { path: layout.keyFile }, fix);
    else
      r.add(
        'gateway',
        'report_key',
        'warn',
        'ops.doctor.key_unchecked',
        { url, error: (err as Error).message },
        'agentmail doctor, once the Gateway answers',
      );
  }
}
