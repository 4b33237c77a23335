/**
 * `agentmail doctor` against a real Gateway on loopback and real bridge configs written by
 * `agentmail service install` into temp homes: a wrong key, an unregistered agent, a key bound to
 * another name, an offline agent and a host without the plugin each give their fail line and
 * fix; a healthy pi bridge is all green. Mode enforcement is what the agent's heartbeats told the
 * Gateway (SPEC P-8); journald is not running here, and a journal stand-in
 * (`AGENTMAIL_JOURNALCTL`) that says otherwise proves doctor does not read it.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GatewayClient } from '@agentmail/shared-policy/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { DoctorCheck } from '../src/cli/doctor.js';
import { HumanApi } from '../src/cli/http.js';
import { findCheckout, serviceLayout } from '../src/cli/service-files.js';
import { callApi, PROCESS_TEST_TIMEOUT_MS } from './helpers/processes.js';
import { cliRun, spoolPiReport, tempHome } from './helpers/service-env.js';
import { startGateway, type TestGateway, tempDir } from './helpers.js';

// Each test runs several real processes (the CLI, `opencode --version`, `systemd-analyze`): one
// took over 30 s (the default) beside the other test files on 2 cores. Every probe is bounded by
// the doctor's own PROBE_TIMEOUT_MS; this is the backstop.
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

const CHECKOUT = findCheckout(process.env);
const OPENCODE_BIN = join(
  CHECKOUT,
  'node_modules/.pnpm/opencode-linux-x64@1.18.33/node_modules/opencode-linux-x64/bin/opencode',
);

const PI_ENTRY = join(CHECKOUT, 'packages/bridge-pi/dist/daemon-main.js');

let gw: TestGateway;
let admin: HumanApi;
beforeAll(async () => {
  gw = await startGateway();
  admin = new HumanApi({ baseUrl: gw.url, token: gw.adminToken });
});
afterAll(() => gw.close());

/** A journal stand-in that prints one line of the bridge's log. */
function journal(line: string): string {
  const file = join(tempDir(), 'journalctl');
  writeFileSync(file, `#!/bin/sh\necho '${line}'\n`, { mode: 0o755 });
  return file;
}

function home(extra: Readonly<Record<string, string>> = {}): NodeJS.ProcessEnv {
  return tempHome({ AGENTMAIL_GATEWAY_URL: gw.url, AGENTMAIL_TOKEN: gw.adminToken, ...extra }).env;
}

async function key(name: string, state: 'issued' | 'registered' | 'online' | 'offline'): Promise<string> {
  const issued = (await admin.issueAgentKey(name)).key;
  const agent = new GatewayClient({ baseUrl: gw.url, key: issued });
  if (state !== 'issued') await agent.register({ name, platform: 'pi' });
  if (state === 'online' || state === 'offline') await agent.heartbeat({ mode_enforcement: 'native' });
  if (state === 'offline')
    expect(
      (await callApi(gw.url, 'POST', '/api/v1/agent/offline', issued, { reason: 'shutdown' })).status,
    ).toBe(200);
  return issued;
}

async function install(env: NodeJS.ProcessEnv, args: readonly string[]): Promise<void> {
  const r = await cliRun(['service', 'install', ...args], env);
  expect(r.code, r.stderr).toBe(0);
}

/** `doctor --json`, and (`text`) the lines a person reads; both end with the same exit code. */
async function doctor(
  env: NodeJS.ProcessEnv,
  text = false,
): Promise<{ code: number; checks: DoctorCheck[]; text: string }> {
  const json = await cliRun(['--json', 'doctor'], env);
  const checks = (JSON.parse(json.stdout) as { checks: DoctorCheck[] }).checks;
  if (!text) return { code: json.code, checks, text: '' };
  const words = await cliRun(['doctor'], env);
  expect(words.code).toBe(json.code);
  return { code: json.code, checks, text: words.stdout };
}

function find(checks: DoctorCheck[], area: string, check: string): DoctorCheck | undefined {
  return checks.find((c) => c.area === area && c.check === check);
}

describe('agentmail doctor', () => {
  it('a healthy pi bridge: every line ok, exit 0', async () => {
    const env = home();
    await install(env, ['pi', '--agent-name', 'pi-ok', '--agent-key', await key('pi-ok', 'online')]);
    const { code, checks, text } = await doctor(env, true);
    // CI runs on sources: the bridge's entry is there only after a build (its own check says so).
    const built = existsSync(PI_ENTRY);
    expect(checks.filter((c) => c.status !== 'ok' && !(c.check === 'program' && !built))).toEqual([]);
    expect(code).toBe(built ? 0 : 1);
    expect(checks.map((c) => `${c.area}/${c.check}`)).toEqual(
      expect.arrayContaining([
        'node/version',
        'gateway/reachable',
        'token/valid',
        'pi/unit',
        'pi/program',
        'pi/env_file',
        'pi/state_dir',
        'pi/host',
        'pi/key',
        'pi/registered',
        'pi/online',
        'pi/plugin',
        'pi/mode_enforcement',
      ]),
    );
    expect(find(checks, 'gateway', 'reachable')?.message).toMatch(/version \d+\.\d+\.\d+/);
    expect(find(checks, 'pi', 'host')?.message).toBe('pi 1.6.0 is installed');
    expect(text).toMatch(/^ok {4}pi {7}agent pi-ok is online, last heartbeat /m);
  });

  it('a wrong key: fail, and the fix issues a new one', async () => {
    const env = home();
    await install(env, ['pi', '--agent-key', 'amk_not_a_key_of_this_gateway']);
    const { code, checks, text } = await doctor(env, true);
    expect(code).toBe(1);
    expect(find(checks, 'pi', 'key')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('refuses the agent key'),
      fix: expect.stringContaining('agentmail service install pi --issue-key --force'),
    });
    expect(text).toContain('fix: agentmail service install pi --issue-key --force');
  });

  it('a unit systemd cannot use: fail with the reinstall, with or without a login session', async () => {
    const env = home();
    await install(env, ['pi', '--agent-key', await key('pi-unit', 'issued')]);
    const unitFile = serviceLayout('pi', 'user', env).unitFile;
    writeFileSync(
      unitFile,
      readFileSync(unitFile, 'utf8').replace(/^ExecStart=\S+/m, 'ExecStart=/no/such/node'),
    );
    expect(find((await doctor(env)).checks, 'pi', 'unit')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('/no/such/node'),
      fix: 'agentmail service install pi --user --force',
    });
    // No user manager (no login session): verified in system mode, so the broken unit still fails.
    const { XDG_RUNTIME_DIR: _, ...noSession } = env;
    expect(find((await doctor(noSession)).checks, 'pi', 'unit')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('/no/such/node'),
    });
  });

  it('regression (issue 20): without a user manager a unit is verified in system mode and the line says so; without systemd-analyze it says that', async () => {
    const env = home();
    await install(env, [
      'pi',
      '--agent-name',
      'pi-nosession',
      '--agent-key',
      await key('pi-nosession', 'issued'),
    ]);
    const unitFile = serviceLayout('pi', 'user', env).unitFile;
    const { XDG_RUNTIME_DIR: _, ...noSession } = env;
    expect(find((await doctor(noSession)).checks, 'pi', 'unit')).toMatchObject({
      status: 'ok',
      message: `unit ${unitFile} is valid (systemd-analyze verify in system mode: there is no user manager here, no login session)`,
    });
    // A runtime directory that is not there (a stale XDG_RUNTIME_DIR): the same.
    const stale = { ...env, XDG_RUNTIME_DIR: join(tempDir(), 'gone') };
    expect(find((await doctor(stale)).checks, 'pi', 'unit')?.message).toContain('in system mode');
    // The fixes that start the bridge say what works without a user manager, not systemctl --user alone.
    const registered = find((await doctor(noSession)).checks, 'pi', 'registered');
    expect(registered?.fix).not.toMatch(/^systemctl --user start/);
    expect(registered?.fix).toContain('loginctl enable-linger $USER');
    const execStart = /^ExecStart=(.*)$/m.exec(readFileSync(unitFile, 'utf8'))?.[1];
    expect(registered?.fix).toContain(
      `run it by hand: (cd ~ && set -a && . ${serviceLayout('pi', 'user', env).envFile} && set +a && AGENTMAIL_AGENT_KEY_FILE=${serviceLayout('pi', 'user', env).keyFile} exec ${execStart})`,
    );
    // With a session the fix stays the plain systemctl command.
    expect(find((await doctor(env)).checks, 'pi', 'registered')?.fix).toMatch(
      /^systemctl --user start agentmail-pi\.service;/,
    );
    const noAnalyze = { ...env, PATH: tempDir() };
    expect(find((await doctor(noAnalyze)).checks, 'pi', 'unit')).toMatchObject({
      status: 'warn',
      message: `unit ${unitFile} is present; it could not be verified here: systemd-analyze is not installed`,
      fix: expect.stringContaining('apt-get install systemd'),
    });
  });

  it('regression (issue 20): a unit whose program file is missing (the bridge not built) fails with the build command; an existing one is ok', async () => {
    const env = home();
    await install(env, ['pi', '--agent-key', await key('pi-unbuilt', 'issued')]);
    const unitFile = serviceLayout('pi', 'user', env).unitFile;
    const unit = readFileSync(unitFile, 'utf8');
    // A path of the bridge's package that no build made (the real entry may be built here).
    const absent = join(CHECKOUT, 'packages/bridge-pi/dist/unbuilt/daemon-main.js');
    writeFileSync(unitFile, unit.replace(PI_ENTRY, absent));
    expect(find((await doctor(env)).checks, 'pi', 'program')).toEqual({
      area: 'pi',
      check: 'program',
      status: 'fail',
      message: `the unit starts ${absent}, which does not exist (not built yet?): the service cannot start`,
      fix: expect.stringContaining('pnpm --filter @agentmail/bridge-pi build'),
    });
    // A program that is there: ok (this test file stands in for a built entry).
    writeFileSync(unitFile, unit.replace(PI_ENTRY, join(CHECKOUT, 'packages/gateway/test/doctor.test.ts')));
    expect(find((await doctor(env)).checks, 'pi', 'program')?.status).toBe('ok');
  });

  it('an unregistered agent: fail, and the fix starts its bridge', async () => {
    const env = home();
    await install(env, ['pi', '--agent-name', 'pi-new', '--agent-key', await key('pi-new', 'issued')]);
    const { checks } = await doctor(env);
    expect(find(checks, 'pi', 'registered')).toMatchObject({
      status: 'fail',
      message: 'agent pi-new is not registered: its bridge has not started with this key yet',
      fix: expect.stringContaining('systemctl --user start agentmail-pi.service'),
    });
  });

  it('a key bound to another agent name: fail naming the bound name', async () => {
    const env = home();
    await key('pi-named', 'registered');
    await install(env, ['pi', '--agent-name', 'pi-named', '--agent-key', await key('zed', 'registered')]);
    const { checks } = await doctor(env);
    expect(find(checks, 'pi', 'registered')).toMatchObject({
      status: 'fail',
      message: 'the key is bound to the agent "zed", not "pi-named"',
      fix: expect.stringContaining('--issue-key'),
    });
  });

  it('an offline agent: fail with its last heartbeat, and the fix restarts it and shows why it stopped', async () => {
    const env = home();
    await install(env, ['pi', '--agent-name', 'pi-off', '--agent-key', await key('pi-off', 'offline')]);
    const { checks } = await doctor(env);
    expect(find(checks, 'pi', 'online')).toMatchObject({
      status: 'fail',
      message: expect.stringMatching(/^agent pi-off is offline, last heartbeat /),
      fix: expect.stringContaining('journalctl --user -u agentmail-pi.service -e'),
    });
    // Its last heartbeat said native: an offline agent keeps what it said.
    expect(find(checks, 'pi', 'mode_enforcement')?.status).toBe('ok');
    // A crash report still waiting in the spool is a warning with the command that sends it.
    const layout = serviceLayout('pi', 'user', env);
    await spoolPiReport(layout.stateDir);
    expect(find((await doctor(env)).checks, 'pi', 'crash_reports')).toMatchObject({
      status: 'warn',
      message: '1 crash report(s) wait to be mailed, the oldest from 2026-12-01T10:00:00.000Z',
      fix: expect.stringContaining(`agentmail service flush pi --state-dir ${layout.stateDir}`),
    });
  });

  it('a host without the plugin (opencode.json lost its entry): fail, and the fix puts it back', async () => {
    const env = home();
    await install(env, [
      'opencode',
      '--agent-name',
      'oc',
      '--agent-key',
      await key('oc', 'online'),
      '--bin',
      OPENCODE_BIN,
    ]);
    const configFile = join(env.XDG_CONFIG_HOME ?? '', 'opencode', 'opencode.json');
    const before = await doctor(env);
    expect(find(before.checks, 'opencode', 'plugin')?.status).toBe('ok');
    expect(find(before.checks, 'opencode', 'host')?.message).toBe('opencode 1.18.33 is installed');
    writeFileSync(
      configFile,
      JSON.stringify({ ...JSON.parse(readFileSync(configFile, 'utf8')), plugin: [] }),
    );
    const { checks } = await doctor(env);
    expect(find(checks, 'opencode', 'plugin')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('plugin is not configured for opencode'),
      fix: expect.stringContaining('agentmail service install opencode --force'),
    });
    // The fix works: the plugin is back and the line is ok again.
    await install(env, ['opencode', '--force']);
    expect(find((await doctor(env)).checks, 'opencode', 'plugin')?.status).toBe('ok');
  });

  it('no Gateway at the URL: fail with the command that starts it; a bad token: fail with login', async () => {
    const down = home();
    const r = await doctor({ ...down, AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:9' });
    expect(r.code).toBe(1);
    expect(find(r.checks, 'gateway', 'reachable')).toMatchObject({
      status: 'fail',
      fix: expect.stringContaining('systemctl --user start agentmail-gateway.service'),
    });
    // In the person's locale (the text catalogue): the same check in Simplified Chinese.
    const zh = await doctor({
      ...down,
      AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:9',
      AGENTMAIL_LOCALE: 'zh-CN',
    });
    expect(find(zh.checks, 'gateway', 'reachable')?.message).toContain(
      'http://127.0.0.1:9 上没有 Gateway 响应',
    );
    // Which Gateway, and where its URL and the token came from (issue 20).
    expect(find(r.checks, 'gateway', 'reachable')?.message).toContain(
      'no Gateway answers at http://127.0.0.1:9 (the URL from AGENTMAIL_GATEWAY_URL)',
    );
    const bad = await doctor({ ...down, AGENTMAIL_TOKEN: 'amu_wrong' });
    expect(find(bad.checks, 'token', 'valid')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining(
        `your token (from AGENTMAIL_TOKEN) is refused: the Gateway at ${gw.url} does not accept your token`,
      ),
      fix: expect.stringContaining('agentmail login'),
    });
    expect(find(bad.checks, 'gateway', 'reachable')?.message).toContain(
      `Gateway at ${gw.url} (the URL from AGENTMAIL_GATEWAY_URL) answers`,
    );
  });

  it('a state dir that is a regular file: fail, not "writable"', async () => {
    const env = home();
    await install(env, ['pi', '--agent-key', await key('pi-file', 'issued')]);
    const layout = serviceLayout('pi', 'user', env);
    rmSync(layout.stateDir, { recursive: true });
    writeFileSync(layout.stateDir, 'x');
    expect(find((await doctor(env)).checks, 'pi', 'state_dir')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('is a file, not a directory'),
      fix: expect.stringContaining(`mv ${layout.stateDir}`),
    });
  });

  it("the Gateway's own crash-report key: missing is a warning, refused a fail, a good one ok", async () => {
    const port = new URL(gw.url).port;
    const run = async (extra: string[]) => {
      const env = home();
      await install(env, ['gateway', '--port', port, ...extra]);
      return find((await doctor(env)).checks, 'gateway', 'report_key');
    };
    expect(await run([])).toMatchObject({
      status: 'warn',
      fix: expect.stringContaining('agentmail service install gateway --issue-key --force'),
    });
    expect(await run(['--agent-key', 'amk_wrong'])).toMatchObject({
      status: 'fail',
      message: expect.stringContaining('refuses the key for its own crash reports'),
      fix: expect.stringContaining('--issue-key --force'),
    });
    expect((await run(['--agent-key', await key('gateway', 'issued')]))?.status).toBe('ok');
  });

  it('an env name other than the key\'s (unregistered): the binding is diagnosed, not "start it"', async () => {
    const env = home();
    await install(env, ['pi', '--agent-name', 'pi-x', '--agent-key', await key('pi-bound', 'issued')]);
    expect(find((await doctor(env)).checks, 'pi', 'registered')).toMatchObject({
      status: 'fail',
      message: 'the key is bound to the agent "pi-bound", not "pi-x"',
      fix: expect.stringContaining('agentmail service install pi --agent-name pi-bound --force'),
    });
  });

  it('a host binary that prints no version: says so and names --bin', async () => {
    const env = home();
    await install(env, ['opencode', '--agent-key', await key('oc-true', 'issued'), '--bin', '/bin/true']);
    expect(find((await doctor(env)).checks, 'opencode', 'host')).toMatchObject({
      status: 'fail',
      message: '/bin/true --version printed no version: it does not look like opencode',
      fix: expect.stringContaining('--bin'),
    });
  });

  it('mode enforcement is what the heartbeats told the Gateway, not the journal: advisory with its reason, native, not yet said; an unreachable Gateway is named', async () => {
    // The journal says native: doctor must not believe it (the Gateway knows better).
    const env = home({
      AGENTMAIL_JOURNALCTL: journal('{"level":30,"event":"enforcement","mode":"native","msg":"x"}'),
    });
    const issued = await key('pi-adv', 'registered');
    await install(env, ['pi', '--agent-name', 'pi-adv', '--agent-key', issued]);
    const enforcement = async (e: NodeJS.ProcessEnv = env) =>
      find((await doctor(e)).checks, 'pi', 'mode_enforcement');
    // Registered, no heartbeat yet: not known, and the fix starts the bridge.
    expect(await enforcement()).toMatchObject({
      status: 'warn',
      message: 'mode enforcement is not known: no heartbeat of agent pi-adv has said it yet',
      fix: expect.stringContaining('systemctl --user start agentmail-pi.service'),
    });
    const agent = new GatewayClient({ baseUrl: gw.url, key: issued });
    await agent.heartbeat({
      mode_enforcement: 'advisory',
      mode_enforcement_reason: 'the extension did not load',
    });
    expect(await enforcement()).toMatchObject({
      status: 'warn',
      message: 'permission modes are advisory only: the extension did not load',
      fix: expect.stringContaining('packages/bridge-pi/README.md'),
    });
    // A later heartbeat that says native replaces the mode and its reason.
    await agent.heartbeat({ mode_enforcement: 'native' });
    expect(await enforcement()).toMatchObject({
      status: 'ok',
      message: 'permission modes are enforced natively',
    });
    expect((await admin.agents()).agents.find((a) => a.name === 'pi-adv')).toMatchObject({
      mode_enforcement: 'native',
      mode_enforcement_reason: null,
    });
    // The workspace sandbox (SPEC P-12), as the heartbeats say it: no line before one says it.
    const sandbox = async () => find((await doctor(env)).checks, 'pi', 'sandbox');
    expect(await sandbox()).toBeUndefined();
    await agent.heartbeat({
      mode_enforcement: 'native',
      sandbox: 'unverified: canary egress failed: connected',
    });
    expect(await sandbox()).toMatchObject({
      status: 'ok',
      message:
        'workspace sandbox unverified (canary egress failed: connected): guarded tools in workspace mode ask per call',
    });
    await agent.heartbeat({ mode_enforcement: 'native', sandbox: 'verified' });
    expect((await sandbox())?.message).toMatch(/^workspace sandbox verified/);
    // The person's Gateway does not answer: the line says which URL, and where it came from.
    expect(await enforcement({ ...env, AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:9' })).toMatchObject({
      status: 'warn',
      message: expect.stringContaining(
        'mode enforcement is not known: the Gateway at http://127.0.0.1:9 (the URL from AGENTMAIL_GATEWAY_URL) could not be asked: ',
      ),
      fix: 'agentmail doctor, once the Gateway answers',
    });
    // Without a user token the Gateway is not asked, and the line says so.
    const { AGENTMAIL_TOKEN: _, ...noToken } = env;
    expect(await enforcement(noToken)).toMatchObject({
      status: 'warn',
      message: `mode enforcement is not known: without a user token the Gateway at ${gw.url} (the URL from AGENTMAIL_GATEWAY_URL) was not asked`,
      fix: expect.stringContaining('agentmail login'),
    });
  });

  it("zcode: an online driver alone does not prove the plugin loaded; native mode enforcement does; the warning gives the agent's own reason, not a journal search", async () => {
    const plugin = async (mode: 'advisory' | 'native') => {
      const env = home();
      const zcode = join(tempDir(), 'zcode');
      writeFileSync(zcode, '#!/bin/sh\necho 3.15.1\n', { mode: 0o755 });
      const name = `zc-${mode}`;
      const issued = (await admin.issueAgentKey(name)).key;
      const agent = new GatewayClient({ baseUrl: gw.url, key: issued });
      await agent.register({ name, platform: 'zcode' });
      await agent.heartbeat({
        mode_enforcement: mode,
        ...(mode === 'advisory' ? { mode_enforcement_reason: 'its hooks did not load' } : {}),
      });
      await install(env, ['zcode', '--agent-name', name, '--agent-key', issued, '--bin', zcode]);
      return find((await doctor(env)).checks, 'zcode', 'plugin');
    };
    expect(await plugin('advisory')).toMatchObject({
      status: 'warn',
      message: expect.stringContaining('mode enforcement is advisory, not native (its hooks did not load)'),
      fix: expect.stringMatching(/^agentmail service install zcode --force, then .*README/),
    });
    expect((await plugin('native'))?.status).toBe('ok');
  });
});
