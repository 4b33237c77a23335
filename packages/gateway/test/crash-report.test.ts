/**
 * Crash report by mail (SPEC B-19): the real `agentmail service report` (the unit's ExecStopPost)
 * as a child process with the environment systemd gives it, against a real Gateway on loopback:
 * exactly one report mail per failing SERVICE_RESULT, none for `success`; with the Gateway down
 * the report is spooled, and `agentmail service flush` (ExecStartPost) sends it exactly once.
 * journald is not running here: its reader is a stand-in script (`AGENTMAIL_JOURNALCTL`) that
 * prints fixed lines and the arguments it was given.
 */
import { existsSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayClient } from '@agentmail/shared-policy/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { SERVICE_RESULTS, SPOOL_DIR } from '../src/cli/crash-report.js';
import { HumanApi } from '../src/cli/http.js';
import { serviceLayout } from '../src/cli/service-files.js';
import { buildCli } from './helpers/cli-build.js';
import { PROCESS_TEST_TIMEOUT_MS, run } from './helpers/processes.js';
import { cliRun, spoolPiReport, tempHome } from './helpers/service-env.js';
import { startGateway, type TestGateway, tempDir } from './helpers.js';

vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

let mainJs = '';
let removeBuild: () => Promise<void> = async () => {};
beforeAll(async () => {
  const built = await buildCli('crash-report');
  mainJs = built.mainJs;
  removeBuild = built.remove;
});
afterAll(() => removeBuild());

/** A stand-in for journalctl: the unit's "last log lines", and the arguments it got. */
function fakeJournal(dir: string): string {
  const file = join(dir, 'journalctl');
  writeFileSync(
    file,
    '#!/bin/sh\necho \'{"level":50,"event":"start_failed","msg":"boom"}\'\necho "args: $*"\n',
    { mode: 0o755 },
  );
  return file;
}

interface Agent {
  key: string;
  name: string;
}

async function agent(gw: TestGateway, name: string, register = true): Promise<Agent> {
  const admin = new HumanApi({ baseUrl: gw.url, token: gw.adminToken });
  const { key } = await admin.issueAgentKey(name);
  if (register) await new GatewayClient({ baseUrl: gw.url, key }).register({ name, platform: 'pi' });
  return { key, name };
}

async function reportMails(gw: TestGateway, unit: string): Promise<Array<{ subject: string; id: string }>> {
  const admin = new HumanApi({ baseUrl: gw.url, token: gw.adminToken });
  const { mails } = await admin.inbox({ status: 'all', limit: 100 });
  return mails
    .filter((m) => m.subject.startsWith(`${unit} on `))
    .map((m) => ({ subject: m.subject, id: m.id }));
}

function hookEnv(
  home: NodeJS.ProcessEnv,
  url: string,
  a: Agent,
  result: Record<string, string>,
): NodeJS.ProcessEnv {
  return {
    ...home,
    AGENTMAIL_GATEWAY_URL: url,
    AGENTMAIL_AGENT_NAME: a.name,
    AGENTMAIL_AGENT_KEY: a.key,
    AGENTMAIL_REPORT_TO: 'admin',
    ...result,
  };
}

async function report(service: string, stateDir: string, env: NodeJS.ProcessEnv, unit: string) {
  const r = await run(
    process.execPath,
    [mainJs, '--json', 'service', 'report', service, '--unit', unit, '--state-dir', stateDir, '--user'],
    { env },
  );
  expect(r.code, r.stderr).toBe(0);
  return JSON.parse(r.stdout) as { status: string; id?: string; file?: string };
}

async function flush(service: string, stateDir: string, env: NodeJS.ProcessEnv, waitMs = 5_000, code = 0) {
  const r = await run(
    process.execPath,
    [mainJs, '--json', 'service', 'flush', service, '--state-dir', stateDir, '--wait-ms', String(waitMs)],
    { env },
  );
  expect(r.code, r.stderr).toBe(code);
  // Reports left in the spool end in a non-zero exit that says so.
  if (code !== 0) expect(JSON.parse(r.stderr)).toMatchObject({ code: 'AM_CLI_REPORTS_SPOOLED' });
  return (JSON.parse(r.stdout) as { outcomes: Array<{ status: string }> }).outcomes;
}

describe('service report (ExecStopPost) against a real Gateway', () => {
  it('mails exactly one report for each failing SERVICE_RESULT and none for success', async () => {
    const gw = await startGateway();
    const { home, env } = tempHome({ AGENTMAIL_JOURNALCTL: fakeJournal(tempDir()) });
    try {
      const pi = await agent(gw, 'pi');
      const stateDir = join(home, 'state');
      const unit = 'agentmail-pi.service';
      const failures = SERVICE_RESULTS.filter((r) => r !== 'success');
      expect(failures).toEqual(
        expect.arrayContaining([
          'exit-code',
          'signal',
          'core-dump',
          'oom-kill',
          'timeout',
          'watchdog',
          'start-limit-hit',
        ]),
      );
      for (const [i, result] of SERVICE_RESULTS.entries()) {
        const exit =
          result === 'signal' || result === 'core-dump' || result === 'oom-kill'
            ? { EXIT_CODE: 'killed', EXIT_STATUS: 'KILL' }
            : { EXIT_CODE: 'exited', EXIT_STATUS: '1' };
        const outcome = await report(
          'pi',
          stateDir,
          hookEnv(env, gw.url, pi, { SERVICE_RESULT: result, INVOCATION_ID: `inv${i}`, ...exit }),
          unit,
        );
        expect(outcome.status, result).toBe(result === 'success' ? 'not_a_failure' : 'sent');
      }
      // A normal stop or restart (success, EXIT_CODE=killed/TERM) sends nothing either.
      const stop = await report(
        'pi',
        stateDir,
        hookEnv(env, gw.url, pi, { SERVICE_RESULT: 'success', EXIT_CODE: 'killed', EXIT_STATUS: 'TERM' }),
        unit,
      );
      expect(stop.status).toBe('not_a_failure');
      // The hook run twice for one invocation is still one mail (relay key).
      const again = await report(
        'pi',
        stateDir,
        hookEnv(env, gw.url, pi, {
          SERVICE_RESULT: 'oom-kill',
          INVOCATION_ID: `inv${SERVICE_RESULTS.indexOf('oom-kill')}`,
        }),
        unit,
      );
      expect(again.status).toBe('sent');

      const mails = await reportMails(gw, unit);
      expect(mails.map((m) => m.subject.replace(/^.* stopped: /, '')).sort()).toEqual([...failures].sort());
      const admin = new HumanApi({ baseUrl: gw.url, token: gw.adminToken });
      const oom = mails.find((m) => m.subject.endsWith('oom-kill'));
      const body = (await admin.mail(oom?.id ?? '')).mail.body;
      expect(body).toContain('out of memory');
      expect(body).toContain('"event":"start_failed"'); // the last log lines
      expect(body).toContain('args: --user -u agentmail-pi.service -n 30 -o cat --no-pager');
      expect(body).toContain('systemctl --user status agentmail-pi.service');
      expect(existsSync(join(stateDir, SPOOL_DIR))).toBe(false);
    } finally {
      await gw.close();
    }
  });

  it('OnFailure (the unit given up, start-limit-hit): one report from the MONITOR_* variables; a crash reported by both hooks is one mail', async () => {
    const gw = await startGateway();
    const { home, env } = tempHome({ AGENTMAIL_JOURNALCTL: fakeJournal(tempDir()) });
    try {
      const pi = await agent(gw, 'pi');
      const unit = 'agentmail-pi.service';
      // The report unit has no --state-dir: the env file names it.
      const base = { ...hookEnv(env, gw.url, pi, {}), AGENTMAIL_SERVICE_STATE_DIR: join(home, 'state') };
      const monitor = async (vars: Record<string, string>) => {
        const r = await run(
          process.execPath,
          [mainJs, '--json', 'service', 'report', 'pi', '--monitor', '--user'],
          {
            env: { ...base, ...vars, MONITOR_UNIT: unit },
          },
        );
        expect(r.code, r.stderr).toBe(0);
        return (JSON.parse(r.stdout) as { status: string }).status;
      };
      expect(
        await monitor({
          MONITOR_SERVICE_RESULT: 'start-limit-hit',
          MONITOR_EXIT_CODE: 'exited',
          MONITOR_EXIT_STATUS: '1',
          MONITOR_INVOCATION_ID: 'm1',
        }),
      ).toBe('sent');
      // The report unit's own SERVICE_RESULT (it is starting: unset) is not what counts.
      expect(await monitor({ MONITOR_SERVICE_RESULT: 'success', SERVICE_RESULT: 'exit-code' })).toBe(
        'not_a_failure',
      );
      // One crash, reported by ExecStopPost and then by OnFailure: the same invocation, one mail.
      await report(
        'pi',
        join(home, 'state'),
        hookEnv(env, gw.url, pi, { SERVICE_RESULT: 'core-dump', INVOCATION_ID: 'c1' }),
        unit,
      );
      expect(await monitor({ MONITOR_SERVICE_RESULT: 'core-dump', MONITOR_INVOCATION_ID: 'c1' })).toBe(
        'sent',
      );
      const subjects = (await reportMails(gw, unit)).map((m) => m.subject.replace(/^.* stopped: /, ''));
      expect(subjects.sort()).toEqual(['core-dump', 'start-limit-hit']);
    } finally {
      await gw.close();
    }
  });

  it('with the Gateway down the report is spooled; the start hook flushes it exactly once', async () => {
    const gw = await startGateway();
    const { home, env } = tempHome({ AGENTMAIL_JOURNALCTL: fakeJournal(tempDir()) });
    const stateDir = join(home, 'state');
    const unit = 'agentmail-pi.service';
    const pi = await agent(gw, 'pi');
    const down = gw.url;
    await gw.stop();
    const spooled = await report(
      'pi',
      stateDir,
      hookEnv(env, down, pi, {
        SERVICE_RESULT: 'exit-code',
        EXIT_CODE: 'exited',
        EXIT_STATUS: '3',
        INVOCATION_ID: 'a1',
      }),
      unit,
    );
    expect(spooled.status).toBe('spooled');
    expect(readdirSync(join(stateDir, SPOOL_DIR))).toHaveLength(1);
    // Still down at the next start: kept for later.
    expect((await flush('pi', stateDir, hookEnv(env, down, pi, {}), 0, 1)).map((o) => o.status)).toEqual([
      'spooled',
    ]);
    expect(readdirSync(join(stateDir, SPOOL_DIR))).toHaveLength(1);

    const up = await startGateway({ dataDir: gw.dataDir });
    try {
      const env2 = hookEnv(env, up.url, pi, {});
      expect((await flush('pi', stateDir, env2)).map((o) => o.status)).toEqual(['sent']);
      expect(await flush('pi', stateDir, env2)).toEqual([]);
      // opencode's start hook first boots serve's instance (any URL that answers 2xx), then flushes.
      const boot = await run(
        process.execPath,
        [
          mainJs,
          '--json',
          'service',
          'flush',
          'opencode',
          '--state-dir',
          stateDir,
          '--boot-url',
          `${up.url}/healthz`,
        ],
        { env: env2 },
      );
      expect(JSON.parse(boot.stdout)).toEqual({ outcomes: [], booted: true });
      expect(readdirSync(join(stateDir, SPOOL_DIR))).toHaveLength(0);
      const mails = await reportMails({ ...up, adminToken: gw.adminToken }, unit);
      expect(mails.map((m) => m.subject)).toEqual([expect.stringContaining('stopped: exit-code')]);
    } finally {
      await up.close();
    }
  });

  it("the Gateway's own crash: spooled while it is down, mailed by its reporter agent once it is back", async () => {
    const gw = await startGateway();
    const { home, env } = tempHome({ AGENTMAIL_JOURNALCTL: fakeJournal(tempDir()) });
    const stateDir = join(home, 'gateway-state');
    const unit = 'agentmail-gateway.service';
    // Never registered: the hook registers its reporter (idempotent) before sending.
    const reporter = await agent(gw, 'gateway', false);
    await gw.stop();
    const e = hookEnv(env, gw.url, reporter, {
      SERVICE_RESULT: 'signal',
      EXIT_CODE: 'killed',
      EXIT_STATUS: 'SEGV',
      INVOCATION_ID: 'g1',
    });
    expect((await report('gateway', stateDir, e, unit)).status).toBe('spooled');
    const up = await startGateway({ dataDir: gw.dataDir });
    try {
      expect(
        (await flush('gateway', stateDir, { ...e, AGENTMAIL_GATEWAY_URL: up.url })).map((o) => o.status),
      ).toEqual(['sent']);
      const mails = await reportMails({ ...up, adminToken: gw.adminToken }, unit);
      expect(mails).toHaveLength(1);
    } finally {
      await up.close();
    }
  });

  it("flush pasted into a shell (doctor's fix) reads the service's env file: the key, the URL, the state dir", async () => {
    const gw = await startGateway();
    try {
      const { env } = tempHome({ AGENTMAIL_JOURNALCTL: fakeJournal(tempDir()) });
      const pi = await agent(gw, 'pi-pasted');
      const installed = await cliRun(
        ['--url', gw.url, 'service', 'install', 'pi', '--agent-name', pi.name, '--agent-key', pi.key],
        env,
      );
      expect(installed.code, installed.stderr).toBe(0);
      const layout = serviceLayout('pi', 'user', env);
      await spoolPiReport(layout.stateDir, { id: 'agentmail-pi.service:pasted', result: 'exit-code' });
      // The shell has no AGENTMAIL_AGENT_KEY nor URL: only what doctor prints.
      const r = await run(process.execPath, [mainJs, '--json', 'service', 'flush', 'pi', '--wait-ms', '0'], {
        env,
      });
      expect(r.code, r.stderr).toBe(0);
      expect(
        (JSON.parse(r.stdout) as { outcomes: Array<{ status: string }> }).outcomes.map((o) => o.status),
      ).toEqual(['sent']);
      expect(readdirSync(join(layout.stateDir, SPOOL_DIR))).toHaveLength(0);
    } finally {
      await gw.close();
    }
  });
});
