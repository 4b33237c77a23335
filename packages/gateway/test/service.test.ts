/**
 * `agentmail service install|uninstall` and the units it renders (SPEC §8, B-19): every unit
 * passes `systemd-analyze verify` (Debian's systemd parses units without running one; nothing is
 * booted), and install writes into a temp XDG_CONFIG_HOME / root: files, modes, idempotence,
 * a changed file refused without --force, the plugin entries of opencode and ZCode.
 */
import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { bridgeDataDir, dataDirVariable, STOP_GRACE_MS } from '@agentmail/shared-policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HumanApi } from '../src/cli/http.js';
import { findCheckout, parseEnvFile, renderService, serviceLayout } from '../src/cli/service-files.js';
import { bridges, serviceNames } from '../src/cli/service-hosts.js';
import { type BridgeFacts, bridgeDataDirVariable, unitName } from '../src/cli/service-platforms.js';
import { cliRun, tempHome, verifyUnit } from './helpers/service-env.js';
import { startGateway, type TestGateway, tempDir } from './helpers.js';

const CHECKOUT = findCheckout(process.env);
/** The services and bridges the CLI discovers in this checkout (the five hosts' host.json). */
const SERVICE_NAMES = serviceNames(process.env);
const BRIDGES: Readonly<Record<string, BridgeFacts>> = Object.fromEntries(bridges(process.env));
/** The opencode binary `pnpm install` fetched (the bridge's pinned 1.18.33). */
const OPENCODE_BIN = join(
  CHECKOUT,
  'node_modules/.pnpm/opencode-linux-x64@1.18.33/node_modules/opencode-linux-x64/bin/opencode',
);

/**
 * dsh is a dev dependency of bridge-dsh (on main): its pinned bin once merged, or
 * `AGENTMAIL_TEST_DSH_BIN`; before that a stand-in executable, since the unit only needs a path
 * that exists.
 */
function dshBin(): string {
  const given = process.env.AGENTMAIL_TEST_DSH_BIN;
  if (given) return given;
  const pinned = join(CHECKOUT, 'packages/bridge-dsh/node_modules/.bin/dsh');
  if (existsSync(pinned)) return pinned;
  const standIn = join(tempDir('agentmail-dsh-'), 'dsh');
  writeFileSync(standIn, '#!/bin/sh\necho 0.1.0-rc.8\n', { mode: 0o755 });
  return standIn;
}

/** A systemctl stand-in: `is-active` prints `state` (and `stderr`) and exits with `code`. */
function systemctlSays(state: string, code: number, stderr = ''): string {
  const file = join(tempDir(), 'systemctl');
  writeFileSync(
    file,
    `#!/bin/sh\n${state === '' ? '' : `echo ${state}\n`}${stderr === '' ? '' : `echo '${stderr}' >&2\n`}exit ${code}\n`,
    { mode: 0o755 },
  );
  return file;
}

function setting(unit: string, key: string): string[] {
  return unit
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1));
}

describe('rendered units pass systemd-analyze verify', () => {
  it('renders the Gateway (user and system) and all five bridges, and each verifies without a warning', async () => {
    const { home, env } = tempHome();
    const dsh = dshBin();
    const cases = [
      ...SERVICE_NAMES.map((s) => ({ service: s, scope: 'user' as const })),
      { service: 'gateway' as const, scope: 'system' as const },
    ];
    for (const { service, scope } of cases) {
      const root = scope === 'system' ? join(home, 'root') : '/';
      const layout = serviceLayout(service, scope, env, root);
      const hostBin = service === 'opencode' ? OPENCODE_BIN : service === 'dsh' ? dsh : undefined;
      const rendered = renderService({
        layout,
        checkout: CHECKOUT,
        node: process.execPath,
        systemdVersion: 252,
        hostBin,
        settings: [['AGENTMAIL_GATEWAY_URL', 'http://127.0.0.1:8787']],
      });
      // The unit names its env file by its real path; verify needs it to exist where it says.
      const unitFile = join(home, 'verify', scope, unitName(service));
      mkdirSync(join(home, 'verify', scope), { recursive: true });
      writeFileSync(unitFile, rendered.unit);
      // The report unit its OnFailure= starts, as the instance for this service.
      writeFileSync(join(home, 'verify', scope, 'agentmail-report@.service'), rendered.reportUnit);
      expect(setting(rendered.unit, 'OnFailure')).toEqual([`agentmail-report@${service}.service`]);
      for (const file of [unitFile, join(home, 'verify', scope, `agentmail-report@${service}.service`)]) {
        const result = await verifyUnit(file, scope, env);
        expect({ file, ...result }).toEqual({ file, ok: true, output: '' });
      }
      expect(rendered.reportUnit).toContain(`EnvironmentFile=${layout.configBase}/%i/service.env`);
      expect(`${layout.configBase}/${service}/service.env`).toBe(
        layout.envFile.slice(root === '/' ? 0 : root.length),
      );

      expect(setting(rendered.unit, 'Restart')).toEqual(['on-failure']);
      expect(setting(rendered.unit, 'MemoryMax')).toHaveLength(1);
      expect(setting(rendered.unit, 'ExecStopPost')[0]).toContain('service report');
      expect(setting(rendered.unit, 'ExecStartPost')[0]).toContain('service flush');
      expect(setting(rendered.unit, 'EnvironmentFile')).toEqual([
        layout.envFile.slice(root === '/' ? 0 : root.length),
      ]);
      if (service === 'gateway') {
        for (const key of ['ProtectSystem', 'PrivateTmp', 'NoNewPrivileges'])
          expect(setting(rendered.unit, key), key).toHaveLength(1);
        expect(setting(rendered.unit, 'ReadWritePaths')).toEqual([layout.stateDir]);
      } else {
        const facts = BRIDGES[service] as BridgeFacts;
        // B-15: the stop timeout outlasts the bridge's own shutdown (kit grace + goodbye at least).
        const stopSec = Number(setting(rendered.unit, 'TimeoutStopSec')[0]?.replace(/s$/, ''));
        expect(stopSec * 1000).toBeGreaterThan(facts.stopBudgetMs);
        expect(facts.stopBudgetMs).toBeGreaterThanOrEqual(STOP_GRACE_MS + 2_000);
        // Not sandboxed: the agent works in the person's own projects.
        for (const key of ['ProtectSystem', 'ProtectHome', 'PrivateTmp', 'NoNewPrivileges'])
          expect(setting(rendered.unit, key), key).toEqual([]);
        expect(setting(rendered.unit, 'KillMode')).toEqual(['mixed']);
        // One state dir per platform: no two bridges share one.
        expect(layout.stateDir.endsWith(`/agentmail/${facts.platform}`)).toBe(true);
      }
    }
    const dirs = SERVICE_NAMES.map((s) => serviceLayout(s, 'user', env).stateDir);
    expect(new Set(dirs).size).toBe(dirs.length);
  });

  it('a unit systemd cannot use fails the same check (the check can turn red)', async () => {
    const { home, env } = tempHome();
    const layout = serviceLayout('pi', 'user', env);
    const rendered = renderService({
      layout,
      checkout: CHECKOUT,
      node: join(home, 'no-such-node'),
      systemdVersion: 252,
      settings: [],
    });
    const file = join(home, unitName('pi'));
    writeFileSync(file, rendered.unit.replace('Restart=on-failure', 'Restart=on-failure\nRestartSteps=5'));
    const result = await verifyUnit(file, 'user', env);
    expect(result.ok).toBe(false);
    expect(result.output).toContain('no-such-node');
    expect(result.output).toContain('RestartSteps'); // unknown to systemd 252: rendered only for >= 254
  });

  it("each bridge's state dir and its variable are the kit's own (bridgeDataDir, dataDirVariable)", () => {
    const { home, env } = tempHome();
    for (const facts of Object.values(BRIDGES)) {
      expect(bridgeDataDirVariable(facts)).toBe(dataDirVariable(facts.platform));
      expect(serviceLayout(facts.service, 'user', env).stateDir).toBe(
        bridgeDataDir(facts.platform, { XDG_DATA_HOME: env.XDG_DATA_HOME }, home),
      );
    }
  });

  it('renders the exponential backoff keys only for systemd >= 254', () => {
    const { env } = tempHome();
    const input = {
      layout: serviceLayout('pi', 'user', env),
      checkout: CHECKOUT,
      node: process.execPath,
      settings: [],
    };
    expect(renderService({ ...input, systemdVersion: 254 }).unit).toContain('RestartSteps=');
    expect(renderService({ ...input, systemdVersion: 252 }).unit).not.toContain('RestartSteps=');
    expect(renderService({ ...input, systemdVersion: undefined }).unit).not.toContain('RestartSteps=');
  });
});

function mode(path: string): string {
  return (statSync(path).mode & 0o777).toString(8);
}

describe('agentmail service install / uninstall', () => {
  it('an env file an older install wrote with the key: --force moves the key into the key file (SPEC B-21)', async () => {
    const { env } = tempHome();
    const layout = serviceLayout('pi', 'user', env);
    const args = ['--url', 'http://127.0.0.1:8787', 'service', 'install', 'pi'];
    expect((await cliRun([...args, '--agent-key', 'amk_old1'], env)).code).toBe(0);
    // What an older install wrote: the key in the env file, no key file.
    writeFileSync(layout.envFile, `${readFileSync(layout.envFile, 'utf8')}AGENTMAIL_AGENT_KEY=amk_old1\n`);
    rmSync(layout.keyFile);
    const refused = await cliRun(args, env);
    expect(refused.code, 'the env file differs from what would be written').toBe(2);
    const moved = await cliRun([...args, '--force'], env);
    expect(moved.code, moved.stderr).toBe(0);
    expect(readFileSync(layout.keyFile, 'utf8')).toBe('amk_old1\n');
    expect(readFileSync(layout.envFile, 'utf8')).not.toContain('amk_old1');
  });

  it('writes the unit (0644) and env file (0600, dir 0700), is idempotent, refuses a changed file without --force', async () => {
    const { env } = tempHome();
    const layout = serviceLayout('pi', 'user', env);
    const args = ['--url', 'http://127.0.0.1:8787', 'service', 'install', 'pi', '--agent-key', 'amk_test1'];
    const first = await cliRun(args, env);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toContain(`written   ${layout.unitFile}`);
    expect(first.stdout).toContain('systemctl --user enable --now agentmail-pi.service');
    expect(first.stdout).toContain('loginctl enable-linger');
    expect(mode(layout.unitFile)).toBe('644');
    expect(mode(layout.envFile)).toBe('600');
    expect(mode(layout.keyFile)).toBe('600');
    expect(mode(layout.configDir)).toBe('700');
    expect(mode(layout.stateDir)).toBe('700');
    expect(mode(layout.reportUnitFile)).toBe('644');
    const settings = parseEnvFile(readFileSync(layout.envFile, 'utf8'));
    expect(Object.fromEntries(settings)).toMatchObject({
      AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:8787',
      AGENTMAIL_AGENT_NAME: 'pi',
      AGENTMAIL_PI_DATA_DIR: layout.stateDir,
      AGENTMAIL_REPORT_TO: 'admin',
      AGENTMAIL_SERVICE_STATE_DIR: layout.stateDir,
    });
    // SPEC B-21: the key is in no env file (so in no process's environment), but in the key file
    // the unit loads as systemd's credential.
    expect(settings.has('AGENTMAIL_AGENT_KEY')).toBe(false);
    expect(readFileSync(layout.envFile, 'utf8')).not.toContain('amk_test1');
    expect(readFileSync(layout.keyFile, 'utf8')).toBe('amk_test1\n');
    const unit = readFileSync(layout.unitFile, 'utf8');
    expect(unit).toContain(
      `ExecStart=${process.execPath} ${join(CHECKOUT, 'packages/bridge-pi/dist/daemon-main.js')}`,
    );
    expect(unit).toContain(`\nLoadCredential=agentmail-agent-key:${layout.keyFile}\n`);

    // Idempotent: the same command again changes nothing; the key is kept without --agent-key.
    const again = await cliRun(['--url', 'http://127.0.0.1:8787', 'service', 'install', 'pi'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout.match(/^unchanged/gm)).toHaveLength(4);
    // Settings a person adds to the env file are kept by a later install (still unchanged).
    writeFileSync(
      layout.envFile,
      `${readFileSync(layout.envFile, 'utf8')}AGENTMAIL_REPLY_PROVIDER=p\nAGENTMAIL_REPLY_MODEL=m\n`,
    );
    const kept = await cliRun(['--url', 'http://127.0.0.1:8787', 'service', 'install', 'pi'], env);
    expect(kept.stdout.match(/^unchanged/gm), kept.stderr).toHaveLength(4);
    expect(parseEnvFile(readFileSync(layout.envFile, 'utf8')).get('AGENTMAIL_REPLY_MODEL')).toBe('m');
    // Mode repaired on an unchanged env file.
    chmodSync(layout.envFile, 0o644);
    await cliRun(['--url', 'http://127.0.0.1:8787', 'service', 'install', 'pi', '--json'], env);
    expect(mode(layout.envFile)).toBe('600');

    // A person's edit is kept: refused without --force, and nothing is written.
    const edited = `${unit}# my edit\n`;
    writeFileSync(layout.unitFile, edited);
    const refused = await cliRun([...args, '--json'], env);
    expect(refused.code).toBe(2);
    expect(JSON.parse(refused.stderr)).toMatchObject({ code: 'AM_CLI_SERVICE_FILE_CHANGED' });
    expect(readFileSync(layout.unitFile, 'utf8')).toBe(edited);
    const words = await cliRun(args, env);
    expect(words.stderr).toContain('--force');

    const forced = await cliRun([...args, '--force'], env);
    expect(forced.code, forced.stderr).toBe(0);
    expect(forced.stdout).toContain(`replaced  ${layout.unitFile}`);
    expect(readFileSync(layout.unitFile, 'utf8')).toBe(unit);

    // Other options are a changed env file too.
    const other = await cliRun([...args, '--agent-name', 'pi2'], env);
    expect(other.code).toBe(2);

    const removed = await cliRun(['service', 'uninstall', 'pi'], {
      ...env,
      AGENTMAIL_SYSTEMCTL: systemctlSays('active', 0),
    });
    expect(removed.code, removed.stderr).toBe(0);
    expect(existsSync(layout.unitFile)).toBe(false);
    expect(existsSync(layout.envFile)).toBe(false);
    expect(existsSync(layout.keyFile)).toBe(false);
    expect(existsSync(layout.stateDir)).toBe(true); // its data is kept
    expect(removed.stdout).toContain('systemctl --user stop agentmail-pi.service');
    // Its key stays active on the Gateway: said, with the command that revokes it.
    expect(removed.stdout).toContain('agentmail agent key revoke pi ');
    // The shared report unit went with the last service of the scope.
    expect(existsSync(layout.reportUnitFile)).toBe(false);
  });

  it('a failed install writes nothing: a file where a directory must be is named, no stack, and a good re-run works', async () => {
    const { home, env } = tempHome();
    const blocker = join(home, 'data-is-a-file');
    writeFileSync(blocker, 'x');
    const bad = { ...env, XDG_DATA_HOME: blocker };
    const layout = serviceLayout('gateway', 'user', bad);
    const r = await cliRun(['service', 'install', 'gateway'], bad);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain(`cannot create the directory ${layout.stateDir}`);
    expect(r.stderr).toContain('XDG_DATA_HOME');
    expect(r.stderr).not.toContain('unexpected failure');
    expect(r.stderr).not.toMatch(/^\s+at /m);
    for (const f of [layout.unitFile, layout.envFile, layout.reportUnitFile])
      expect(existsSync(f), f).toBe(false);
    expect(existsSync(layout.configDir)).toBe(false);
    const good = await cliRun(['service', 'install', 'gateway'], env);
    expect(good.code, good.stderr).toBe(0);
    // No key was in its env file: uninstall has no key to tell about.
    const gone = await cliRun(['service', 'uninstall', 'gateway'], env);
    expect(gone.code, gone.stderr).toBe(0);
    expect(gone.stdout).not.toContain('still active');
  });

  it('a step failing after the files were written takes them back (zcode: ~/.zcode is a file)', async () => {
    const { home, env } = tempHome();
    const zcode = join(home, 'zcode');
    writeFileSync(zcode, '#!/bin/sh\necho 3.15.1\n', { mode: 0o755 });
    writeFileSync(join(home, '.zcode'), 'not a dir');
    const layout = serviceLayout('zcode', 'user', env);
    const r = await cliRun(['service', 'install', 'zcode', '--agent-key', 'amk_z', '--bin', zcode], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(join(home, '.zcode'));
    expect(r.stderr).not.toContain('unexpected failure');
    for (const f of [layout.unitFile, layout.envFile, layout.reportUnitFile])
      expect(existsSync(f), f).toBe(false);
  });

  it('dsh plugin add failing: the unit and env file are taken back, and the words say so', async () => {
    const { home, env } = tempHome();
    const dsh = join(home, 'dsh');
    writeFileSync(dsh, '#!/bin/sh\necho "pnpm: not found" >&2\nexit 1\n', { mode: 0o755 });
    const layout = serviceLayout('dsh', 'user', env);
    const r = await cliRun(['service', 'install', 'dsh', '--agent-key', 'amk_d', '--bin', dsh], env);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('pnpm: not found');
    expect(r.stderr).toContain('nothing was kept');
    for (const f of [layout.unitFile, layout.envFile, layout.reportUnitFile])
      expect(existsSync(f), f).toBe(false);
  });

  it('the refusal names every changed file in correct grammar', async () => {
    const { env } = tempHome();
    const layout = serviceLayout('pi', 'user', env);
    const args = ['--url', 'http://127.0.0.1:8787', 'service', 'install', 'pi', '--agent-key', 'amk_test1'];
    expect((await cliRun(args, env)).code).toBe(0);
    writeFileSync(layout.unitFile, `${readFileSync(layout.unitFile, 'utf8')}# edit\n`);
    const one = await cliRun(args, env);
    expect(one.stderr).toContain(`${layout.unitFile} differs from`);
    writeFileSync(layout.envFile, `${readFileSync(layout.envFile, 'utf8')}# edit\n`);
    const two = await cliRun(args, env);
    expect(two.stderr).toContain(`${layout.unitFile} and ${layout.envFile} differ from`);
  });

  it('a bridge without a key, a bridge as a system service, an unknown service: usage errors naming the fix', async () => {
    const { env } = tempHome();
    const noKey = await cliRun(['service', 'install', 'pi'], env);
    expect(noKey.code).toBe(2);
    expect(noKey.stderr).toContain('--issue-key');
    const system = await cliRun(['service', 'install', 'pi', '--system', '--agent-key', 'amk_k'], env);
    expect(system.code).toBe(2);
    expect(system.stderr).toContain('user service only');
    const badName = await cliRun(
      ['service', 'install', 'pi', '--agent-key', 'amk_k', '--agent-name', 'pi laptop'],
      env,
    );
    expect(badName.code).toBe(2);
    expect(badName.stderr).toContain('--agent-name "pi laptop" is not a name the Gateway takes');
    const unknown = await cliRun(['service', 'install', 'hermes'], env);
    expect(unknown.code).toBe(2);
    // The discovered bridges, in package-directory order.
    expect(unknown.stderr).toContain('gateway, claude, dsh, opencode, pi, zcode');
    expect(existsSync(join(env.XDG_CONFIG_HOME ?? '', 'systemd'))).toBe(false);
  });

  it('the system Gateway goes under --root: /etc/systemd/system, /etc/agentmail/gateway (0600), data in /var/lib/agentmail', async () => {
    const { home, env } = tempHome();
    const root = join(home, 'root');
    const r = await cliRun(
      ['service', 'install', 'gateway', '--system', '--root', root, '--port', '9797'],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    const unitFile = join(root, 'etc/systemd/system/agentmail-gateway.service');
    const envFile = join(root, 'etc/agentmail/gateway/service.env');
    expect(mode(unitFile)).toBe('644');
    expect(mode(envFile)).toBe('600');
    const unit = readFileSync(unitFile, 'utf8');
    expect(unit).toContain('EnvironmentFile=/etc/agentmail/gateway/service.env');
    expect(unit).toContain('serve --data-dir /var/lib/agentmail');
    expect(unit).toContain('DynamicUser=yes');
    expect(parseEnvFile(readFileSync(envFile, 'utf8')).get('AGENTMAIL_PORT')).toBe('9797');
    expect(r.stdout).toContain('sudo systemctl enable --now agentmail-gateway.service');
    expect(r.stdout).not.toContain('enable-linger');
  });

  it('opencode: the plugin goes into the plugin list of opencode.json once, next to what is there; uninstall takes it out', async () => {
    const { env } = tempHome();
    const configFile = join(env.XDG_CONFIG_HOME ?? '', 'opencode', 'opencode.json');
    mkdirSync(join(env.XDG_CONFIG_HOME ?? '', 'opencode'), { recursive: true });
    writeFileSync(configFile, JSON.stringify({ model: 'x/y', plugin: ['other-plugin'] }));
    const args = ['service', 'install', 'opencode', '--agent-key', 'amk_oc', '--bin', OPENCODE_BIN];
    const first = await cliRun(args, env);
    expect(first.code, first.stderr).toBe(0);
    const pluginPath = join(CHECKOUT, 'packages/bridge-opencode/dist/plugin.js');
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({
      model: 'x/y',
      plugin: ['other-plugin', pluginPath],
    });
    const unit = readFileSync(serviceLayout('opencode', 'user', env).unitFile, 'utf8');
    expect(unit).toContain(`ExecStart=${OPENCODE_BIN} serve --port 4096`);
    expect(unit).toContain('--boot-url http://127.0.0.1:4096/config');
    expect((await cliRun(args, env)).code).toBe(0);
    expect(JSON.parse(readFileSync(configFile, 'utf8')).plugin).toEqual(['other-plugin', pluginPath]);

    expect((await cliRun(['service', 'uninstall', 'opencode'], env)).code).toBe(0);
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({ model: 'x/y', plugin: ['other-plugin'] });
  });

  it('opencode.json that is not JSON is refused before anything is written', async () => {
    const { env } = tempHome();
    const configFile = join(env.XDG_CONFIG_HOME ?? '', 'opencode', 'opencode.json');
    mkdirSync(join(env.XDG_CONFIG_HOME ?? '', 'opencode'), { recursive: true });
    writeFileSync(configFile, '{ // a comment\n}');
    const r = await cliRun(
      ['service', 'install', 'opencode', '--agent-key', 'amk_k', '--bin', OPENCODE_BIN, '--json'],
      env,
    );
    expect(r.code).toBe(1);
    expect(JSON.parse(r.stderr)).toMatchObject({ code: 'AM_CLI_SERVICE_SETUP_FAILED' });
    expect(readFileSync(configFile, 'utf8')).toBe('{ // a comment\n}');
  });

  it('zcode: the plugin dir goes into plugins.dirs of ~/.zcode/cli/config.json; the driver gets it and its node', async () => {
    const { home, env } = tempHome();
    const zcode = join(home, 'bin', 'zcode');
    mkdirSync(join(home, 'bin'));
    writeFileSync(zcode, '#!/bin/sh\necho 3.15.1\n', { mode: 0o755 });
    const r = await cliRun(['service', 'install', 'zcode', '--agent-key', 'amk_z', '--bin', zcode], env);
    expect(r.code, r.stderr).toBe(0);
    const pluginDir = join(CHECKOUT, 'packages/bridge-zcode/plugin');
    const config = JSON.parse(readFileSync(join(home, '.zcode/cli/config.json'), 'utf8'));
    expect(config).toEqual({ plugins: { dirs: [pluginDir] } });
    const settings = parseEnvFile(readFileSync(serviceLayout('zcode', 'user', env).envFile, 'utf8'));
    expect(settings.get('AGENTMAIL_ZCODE_PLUGIN_DIR')).toBe(pluginDir);
    expect(settings.get('AGENTMAIL_ZCODE_BIN')).toBe(zcode);
    expect(settings.get('AGENTMAIL_NODE')).toBe(process.execPath);
    expect(settings.get('AGENTMAIL_ZCODE_DATA_DIR')).toBe(join(env.XDG_DATA_HOME ?? '', 'agentmail/zcode'));
    expect(readFileSync(serviceLayout('zcode', 'user', env).unitFile, 'utf8')).toContain(
      join(CHECKOUT, 'packages/bridge-zcode/dist/daemon-main.js'),
    );
  });

  it('uninstall takes out only what install added: an entry the person had in plugins.dirs before stays', async () => {
    const { home, env } = tempHome();
    const zcode = join(home, 'zcode');
    writeFileSync(zcode, '#!/bin/sh\necho 3.15.1\n', { mode: 0o755 });
    const pluginDir = join(CHECKOUT, 'packages/bridge-zcode/plugin');
    const configFile = join(home, '.zcode/cli/config.json');
    mkdirSync(join(home, '.zcode/cli'), { recursive: true });
    writeFileSync(configFile, JSON.stringify({ plugins: { dirs: ['/my/own', pluginDir] } }));
    const r = await cliRun(['service', 'install', 'zcode', '--agent-key', 'amk_z', '--bin', zcode], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('already in plugins.dirs');
    const u = await cliRun(['service', 'uninstall', 'zcode'], env);
    expect(u.code, u.stderr).toBe(0);
    expect(JSON.parse(readFileSync(configFile, 'utf8'))).toEqual({
      plugins: { dirs: ['/my/own', pluginDir] },
    });
    // What install did add goes again with uninstall.
    writeFileSync(configFile, JSON.stringify({ plugins: { dirs: ['/my/own'] } }));
    expect(
      (await cliRun(['service', 'install', 'zcode', '--agent-key', 'amk_z', '--bin', zcode], env)).code,
    ).toBe(0);
    expect(JSON.parse(readFileSync(configFile, 'utf8')).plugins.dirs).toEqual(['/my/own', pluginDir]);
    // A second install (entry already there) keeps the record: uninstall still takes it out.
    expect((await cliRun(['service', 'install', 'zcode', '--bin', zcode], env)).code).toBe(0);
    expect((await cliRun(['service', 'uninstall', 'zcode'], env)).code).toBe(0);
    expect(JSON.parse(readFileSync(configFile, 'utf8')).plugins.dirs).toEqual(['/my/own']);
  });

  it('claude: the driver gets the plugin dir and its own data dir (claude-code)', async () => {
    const { home, env } = tempHome();
    const claude = join(home, 'claude');
    writeFileSync(claude, '#!/bin/sh\necho "2.1.328 (Claude Code)"\n', { mode: 0o755 });
    const r = await cliRun(['service', 'install', 'claude', '--agent-key', 'amk_c', '--bin', claude], env);
    expect(r.code, r.stderr).toBe(0);
    const settings = parseEnvFile(readFileSync(serviceLayout('claude', 'user', env).envFile, 'utf8'));
    expect(settings.get('AGENTMAIL_CLAUDE_PLUGIN_DIR')).toBe(join(CHECKOUT, 'packages/bridge-claude/plugin'));
    expect(settings.get('AGENTMAIL_CLAUDE_CODE_DATA_DIR')).toBe(
      join(env.XDG_DATA_HOME ?? '', 'agentmail/claude-code'),
    );
    expect(settings.get('AGENTMAIL_AGENT_NAME')).toBe('claude-code');
  });
});

describe('service install claude finds the pinned Claude Code', () => {
  it('without --bin (issue 20: "cannot find the claude executable" on a fresh clone): the checkout\'s, and it runs', async () => {
    const { env } = tempHome();
    const r = await cliRun(['service', 'install', 'claude', '--agent-key', 'amk_c'], env);
    expect(r.code, r.stderr).toBe(0);
    const bin = parseEnvFile(readFileSync(serviceLayout('claude', 'user', env).envFile, 'utf8')).get(
      'AGENTMAIL_CLAUDE_BIN',
    );
    expect(bin).toBe(join(CHECKOUT, 'packages/bridge-claude/node_modules/.bin/claude'));
    // The executable pnpm install gives is Claude Code itself, not the stub that asks for its postinstall.
    // A checkout installed before the postinstall was allowed: pnpm rebuild @anthropic-ai/claude-code.
    expect(execFileSync(bin ?? '', ['--version'], { encoding: 'utf8' })).toMatch(
      new RegExp(`^${BRIDGES.claude?.supportedHostVersion?.replaceAll('.', '\\.')} `),
    );
  });
});

describe('service install: what to run next', () => {
  it('an enabled unit gets restart, not enable --now; uninstall says stop before it lists what it removed', async () => {
    const { env } = tempHome();
    const layout = serviceLayout('pi', 'user', env);
    const args = ['--url', 'http://127.0.0.1:8787', 'service', 'install', 'pi', '--agent-key', 'amk_test1'];
    expect((await cliRun(args, env)).stdout).toContain('systemctl --user enable --now agentmail-pi.service');
    // What systemctl --user enable makes.
    mkdirSync(join(layout.unitDir, 'default.target.wants'));
    symlinkSync(layout.unitFile, join(layout.unitDir, 'default.target.wants', unitName('pi')));
    const again = await cliRun([...args.slice(0, -1), 'amk_test2', '--force'], env);
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toContain('systemctl --user restart agentmail-pi.service');
    expect(again.stdout).not.toContain('enable --now');
    const u = await cliRun(['service', 'uninstall', 'pi'], {
      ...env,
      AGENTMAIL_SYSTEMCTL: systemctlSays('active', 0),
    });
    expect(u.stdout.indexOf('systemctl --user stop agentmail-pi.service')).toBeGreaterThan(
      u.stdout.indexOf('removed '),
    );
    expect(u.stdout.indexOf('daemon-reload')).toBeGreaterThan(u.stdout.indexOf('removed '));
  });

  it('regression (issue 20): uninstall says "stop it" only when the unit runs or may run, and never "first" after removing it', async () => {
    const args = ['--url', 'http://127.0.0.1:8787', 'service', 'install', 'pi', '--agent-key', 'amk_t'];
    const uninstall = async (systemctl: string) => {
      const { env } = tempHome({ AGENTMAIL_SYSTEMCTL: systemctl });
      expect((await cliRun(args, env)).code).toBe(0);
      const text = await cliRun(['service', 'uninstall', 'pi'], env);
      const json = await cliRun(['--json', 'service', 'uninstall', 'pi'], env); // nothing left: stopped
      expect(JSON.parse(json.stdout)).toMatchObject({ removed: [], activity: 'stopped' });
      expect(text.stdout).not.toContain('first');
      return text.stdout;
    };
    // Never ran (inactive): no stop at all, just the reload.
    const never = await uninstall(systemctlSays('inactive', 3));
    expect(never).not.toContain('systemctl --user stop');
    expect(never).not.toMatch(/running|runs/);
    expect(never).toContain('systemctl --user daemon-reload');
    // Running: said as it is, after the removal, with the stop.
    const running = await uninstall(systemctlSays('active', 0));
    expect(running).toContain('agentmail-pi.service is still running: its files are removed');
    expect(running.indexOf('systemctl --user stop agentmail-pi.service')).toBeGreaterThan(
      running.indexOf('removed '),
    );
    // No user manager (systemctl cannot ask): that is said, and the stop is given for the case it runs.
    const unknown = await uninstall(systemctlSays('', 1, 'Failed to connect to bus: No medium found'));
    expect(unknown).toContain(
      'whether agentmail-pi.service still runs cannot be known here (no user manager',
    );
    expect(unknown).toContain('systemctl --user stop agentmail-pi.service');
  });

  it('a Gateway on another port: warns about the CLI config and each bridge still on the old port', async () => {
    const { env } = tempHome();
    writeFileSync(
      env.AGENTMAIL_CONFIG ?? '',
      JSON.stringify({ url: 'http://127.0.0.1:8787', token: 'amu_x' }),
    );
    const pi = await cliRun(['service', 'install', 'pi', '--agent-key', 'amk_p'], env);
    expect(pi.code, pi.stderr).toBe(0);
    const r = await cliRun(['service', 'install', 'gateway', '--port', '9797'], env);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`your CLI config ${env.AGENTMAIL_CONFIG} still names http://127.0.0.1:8787`);
    expect(r.stdout).toContain(
      `the pi bridge still reaches the Gateway at http://127.0.0.1:8787 (${serviceLayout('pi', 'user', env).envFile})`,
    );
    expect(r.stdout).toContain('agentmail --url http://127.0.0.1:9797 service install pi --force');
  });

  it('a checkout without the web build: the Gateway install says to run pnpm build:web', async () => {
    const checkout = tempDir('agentmail-checkout-');
    cpSync(join(CHECKOUT, 'deploy'), join(checkout, 'deploy'), { recursive: true });
    writeFileSync(join(checkout, 'pnpm-workspace.yaml'), 'packages: []\n');
    const { env } = tempHome({ AGENTMAIL_CHECKOUT: checkout });
    const r = await cliRun(
      ['service', 'install', 'gateway', '--system', '--root', join(checkout, 'root')],
      env,
    );
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(
      `${join(checkout, 'packages/web/dist/index.html')} is not built yet: run pnpm build:web`,
    );
  });
});

describe('service install: hosts discovered from packages/*/host.json', () => {
  it('a bad descriptor is an error naming its file and field; nothing is written', async () => {
    const checkout = tempDir('agentmail-checkout-');
    cpSync(join(CHECKOUT, 'deploy'), join(checkout, 'deploy'), { recursive: true });
    writeFileSync(join(checkout, 'pnpm-workspace.yaml'), 'packages: [packages/*]\n');
    const descriptor = JSON.parse(readFileSync(join(CHECKOUT, 'packages/bridge-pi/host.json'), 'utf8'));
    descriptor.service.exec.kind = 'binary';
    mkdirSync(join(checkout, 'packages', 'bridge-odd'), { recursive: true });
    const file = join(checkout, 'packages', 'bridge-odd', 'host.json');
    writeFileSync(file, JSON.stringify(descriptor));
    const { env } = tempHome({ AGENTMAIL_CHECKOUT: checkout });
    const r = await cliRun(['service', 'install', 'pi', '--agent-key', 'amk_p'], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toContain(`${file}: service.exec.kind`);
    expect(existsSync(join(env.XDG_CONFIG_HOME ?? '', 'systemd'))).toBe(false);
    // doctor says it as one failed line and goes on with its other checks.
    const doctor = await cliRun(['--json', 'doctor'], env);
    const checks = (
      JSON.parse(doctor.stdout) as { checks: Array<{ check: string; status: string; message: string }> }
    ).checks;
    expect(checks.find((c) => c.check === 'host_descriptor')).toMatchObject({
      status: 'fail',
      message: expect.stringContaining(`${file}: service.exec.kind`),
    });
    expect(
      checks.some((c) => c.check === 'version'),
      'the other checks ran',
    ).toBe(true);
  });
});

describe('service install: keys and options', () => {
  let gw: TestGateway;
  let admin: HumanApi;
  beforeAll(async () => {
    gw = await startGateway();
    admin = new HumanApi({ baseUrl: gw.url, token: gw.adminToken });
  });
  afterAll(() => gw.close());
  const keysOf = async (name: string) =>
    (await admin.agentKeys()).keys.filter((k) => k.agent_name === name && k.revoked_at === null);

  it('--issue-key issues the key only when every check passed: a refused install issues none', async () => {
    const { env: base } = tempHome();
    const env = { ...base, AGENTMAIL_TOKEN: gw.adminToken };
    const layout = serviceLayout('pi', 'user', env);
    const url = ['--url', gw.url];
    const name = 'pi-issue';
    const first = await cliRun(
      [...url, 'service', 'install', 'pi', '--agent-name', name, '--issue-key'],
      env,
    );
    expect(first.code, first.stderr).toBe(0);
    expect(await keysOf(name)).toHaveLength(1);
    const refused = await cliRun(
      [...url, 'service', 'install', 'pi', '--agent-name', name, '--issue-key'],
      env,
    );
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--force');
    expect(await keysOf(name)).toHaveLength(1); // nothing issued on refusal
    const forced = await cliRun(
      [...url, 'service', 'install', 'pi', '--agent-name', name, '--issue-key', '--force'],
      env,
    );
    expect(forced.code, forced.stderr).toBe(0);
    const keys = await keysOf(name);
    expect(keys).toHaveLength(2);
    // --issue-key asks for a new key: issued beside the live one, and said (issue 20).
    expect(`${forced.stdout}\n${forced.stderr}`).toMatch(
      new RegExp(
        `agent ${name} has 1 other active key\\(s\\) beside the new key \\S+ of this service; revoke the ones nothing uses`,
      ),
    );
    expect(`${first.stdout}\n${first.stderr}`).not.toContain('other active key');
    expect(readFileSync(layout.keyFile, 'utf8')).toMatch(/^amk_[A-Za-z0-9_-]+\n$/);
    expect(readFileSync(layout.keyFile, 'utf8')).not.toContain('to-be-issued');
    expect(readFileSync(layout.envFile, 'utf8')).not.toContain('amk_');
  });

  it('--issue-key with an opencode.json that is not JSON: refused before a key is issued', async () => {
    const { env: base } = tempHome();
    const env: NodeJS.ProcessEnv = { ...base, AGENTMAIL_TOKEN: gw.adminToken };
    mkdirSync(join(env.XDG_CONFIG_HOME ?? '', 'opencode'), { recursive: true });
    writeFileSync(join(env.XDG_CONFIG_HOME ?? '', 'opencode', 'opencode.json'), '{ // a comment\n}');
    const r = await cliRun(
      [
        '--url',
        gw.url,
        'service',
        'install',
        'opencode',
        '--agent-name',
        'oc-bad',
        '--issue-key',
        '--bin',
        OPENCODE_BIN,
      ],
      env,
    );
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('is not a JSON object');
    expect((await admin.agentKeys()).keys.filter((k) => k.agent_name === 'oc-bad')).toEqual([]);
    expect(existsSync(serviceLayout('opencode', 'user', env).configDir)).toBe(false);
  });

  it('refuses --issue-key with --agent-key, a key of the wrong shape, --port for a bridge, --bin for pi or the gateway', async () => {
    const { env } = tempHome();
    const cases: Array<[string[], string[]]> = [
      [
        ['pi', '--issue-key', '--agent-key', 'amk_x'],
        ['--issue-key', '--agent-key'],
      ],
      [
        ['pi', '--agent-key', 'not a key'],
        ['--agent-key', 'amk_'],
      ],
      [['pi', '--agent-key', 'amk_x', '--port', '9000'], ['--port']],
      [['pi', '--agent-key', 'amk_x', '--bin', process.execPath], ['--bin']],
      [['gateway', '--bin', process.execPath], ['--bin']],
    ];
    for (const [args, words] of cases) {
      const r = await cliRun(['service', 'install', ...args], env);
      expect(r.code, args.join(' ')).toBe(2);
      for (const w of words) expect(r.stderr, args.join(' ')).toContain(w);
    }
    expect(existsSync(join(env.XDG_CONFIG_HOME ?? '', 'systemd'))).toBe(false);
  });
});
