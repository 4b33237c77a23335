/**
 * A sixth host needs only its own package (issue 21): a checkout made of links to the real
 * packages, deploy/ and pnpm-workspace.yaml, plus a new package `bridge-tiny` (fixtures/tiny-host:
 * its host.json and a few lines of code). The Gateway CLI discovers it, its guarded tools are
 * guarded (SPEC P-3: plan mode refuses them, case ignored, other tools pass), and a mail to it runs
 * a turn whose reply comes back — as an in-process host on the kit's `createBridge` and as a
 * CLI-shaped host driven by host-tools' driver main — while no file of the real tree changes.
 */
import { execFile, execFileSync } from 'node:child_process';
import {
  chmodSync,
  cpSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
} from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Bridge, BridgeConfig } from '@agentmail/bridge-kit';
import {
  cleanEnv,
  gatewayCliPath,
  ManagedProcess,
  type Stack,
  startStack,
  startTestbed,
  type Testbed,
} from '@agentmail/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const REAL_ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const HOST_TOOLS = fileURLToPath(new URL('..', import.meta.url));
const FIXTURE = fileURLToPath(new URL('./fixtures/tiny-host', import.meta.url));
const STEP_MS = 60_000;

/** The real tree's state: every change to a tracked file and every new file git would see. */
const gitStatus = (): string =>
  execFileSync('git', ['-C', REAL_ROOT, 'status', '--porcelain', '--untracked-files=all'], {
    encoding: 'utf8',
  });

let statusBefore: string;
let root: string;
let home: string;
let testbed: Testbed;
let inProcess: Stack;
let cliShaped: Stack;

/** The temp checkout: links to the real packages and files, and the new package (a copy of the fixture). */
function makeCheckout(): string {
  const dir = join(root, 'checkout');
  mkdirSync(join(dir, 'packages'), { recursive: true });
  symlinkSync(join(REAL_ROOT, 'deploy'), join(dir, 'deploy'));
  symlinkSync(join(REAL_ROOT, 'pnpm-workspace.yaml'), join(dir, 'pnpm-workspace.yaml'));
  for (const name of readdirSync(join(REAL_ROOT, 'packages')))
    symlinkSync(join(REAL_ROOT, 'packages', name), join(dir, 'packages', name));
  const tiny = join(dir, 'packages', 'bridge-tiny');
  cpSync(FIXTURE, tiny, { recursive: true });
  chmodSync(join(tiny, 'tiny-cli.mjs'), 0o755);
  // What `pnpm install` makes for the new package's two dependencies.
  mkdirSync(join(tiny, 'node_modules', '@agentmail'), { recursive: true });
  for (const dep of ['bridge-kit', 'host-tools'])
    symlinkSync(join(REAL_ROOT, 'packages', dep), join(tiny, 'node_modules', '@agentmail', dep));
  return dir;
}

/** `agentmail <args>` (the Gateway's CLI bundle) on the temp home, with `AGENTMAIL_CHECKOUT` when given. */
async function cli(
  args: string[],
  checkout?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  const main = await gatewayCliPath();
  const env = cleanEnv({
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    AGENTMAIL_CONFIG: join(home, 'no-cli-config.json'),
    ...(checkout === undefined ? {} : { AGENTMAIL_CHECKOUT: checkout }),
  });
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [main, ...args],
      { env, encoding: 'utf8', timeout: STEP_MS },
      (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : Number((err as { code?: unknown }).code ?? 1), stdout, stderr }),
    );
  });
}

let checkout: string;
beforeAll(async () => {
  statusBefore = gitStatus();
  root = await mkdtemp(join(tmpdir(), 'am-sixth-host-'));
  home = join(root, 'home');
  mkdirSync(home);
  checkout = makeCheckout();
  testbed = await startTestbed();
  inProcess = await startStack({ testbed, agentName: 'tiny', platform: 'tiny' });
  cliShaped = await startStack({ testbed, agentName: 'tiny-cli', platform: 'tiny' });
}, 120_000);

afterAll(async () => {
  await inProcess?.close();
  await cliShaped?.close();
  await testbed?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe('a sixth host in its own package (issue 21)', () => {
  it('the CLI discovers it from the checkout: service install renders its unit from host.json', async () => {
    const unknown = await cli(['service', 'install', 'tiny', '--agent-key', 'amk_tiny']);
    expect(unknown.code, 'the real checkout has no tiny host').toBe(2);
    expect(unknown.stderr).toContain('unknown service "tiny"');

    const unitRoot = join(root, 'unit-root');
    const r = await cli(
      ['service', 'install', 'tiny', '--agent-key', 'amk_tiny', '--root', unitRoot],
      checkout,
    );
    expect(r.code, r.stderr).toBe(0);
    const unit = readFileSync(join(unitRoot, home, '.config/systemd/user/agentmail-tiny.service'), 'utf8');
    expect(unit).toContain('Description=AgentMail bridge for the tiny test host');
    expect(unit).toContain(join(checkout, 'packages/bridge-tiny/daemon-main.ts'));
    expect(unit).toContain('the tiny run 1 s, turns 5 s, goodbye 2 s');
    const envFile = readFileSync(join(unitRoot, home, '.config/agentmail/tiny/service.env'), 'utf8');
    expect(envFile).toContain('AGENTMAIL_AGENT_NAME=tiny\n');
    expect(envFile).toContain(`AGENTMAIL_TINY_DATA_DIR=${join(home, '.local/share/agentmail/tiny')}`);

    // doctor knows it too, from the same file: a host with nothing of its own to find is no failure.
    const doctor = await cli(['--json', 'doctor', '--root', unitRoot], checkout);
    const checks = (
      JSON.parse(doctor.stdout) as { checks: Array<{ area: string; check: string; status: string }> }
    ).checks;
    const tiny = checks.filter((c) => c.area === 'tiny');
    expect(tiny.find((c) => c.check === 'unit')?.status, JSON.stringify(tiny)).toBe('ok');
    expect(tiny.find((c) => c.check === 'host')?.status, JSON.stringify(tiny)).toBe('ok');
  }, 90_000);

  it('in process (createBridge): plan mode refuses its guarded tools, case ignored, and the reply comes back', async () => {
    const { tinyBridge } = (await import(join(checkout, 'packages/bridge-tiny/bridge.ts'))) as {
      tinyBridge(config: BridgeConfig): Bridge;
    };
    const config: BridgeConfig = {
      gatewayUrl: inProcess.gatewayUrl,
      agentName: inProcess.agent.name,
      agentKey: inProcess.agent.key,
      hostDefault: '',
      concurrency: 1,
      turnTimeoutMs: STEP_MS,
      heartbeatMs: 30_000,
      locale: 'en',
      dataDir: join(root, 'tiny-data'),
    };
    const bridge = tinyBridge(config);
    await bridge.start();
    try {
      const sent = await inProcess.sendAs(undefined, inProcess.taskAddress(), {
        subject: 'Plan it',
        body: 'Change the file.',
        permissionMode: 'plan',
      });
      const reply = await inProcess.awaitReply({ inReplyTo: sent.mail_id, timeoutMs: STEP_MS });
      expect(reply.body).toContain('tiny: Shell=deny read_file=allow WRITE=deny');
    } finally {
      await bridge.stop();
    }
  }, 120_000);

  it("CLI-shaped (the driver main runs tiny-cli.mjs): a mail runs a turn and the host's tool calls are decided by host.json", async () => {
    const daemon = ManagedProcess.spawn(
      'tiny-cli',
      process.execPath,
      [
        '--conditions=@agentmail/source',
        '--import',
        'tsx',
        join(checkout, 'packages/bridge-tiny/daemon-main.ts'),
      ],
      {
        // tsx resolves from here; the daemon's own imports from its package's node_modules.
        cwd: HOST_TOOLS,
        env: cleanEnv({
          HOME: home,
          AGENTMAIL_GATEWAY_URL: cliShaped.gatewayUrl,
          AGENTMAIL_AGENT_NAME: cliShaped.agent.name,
          AGENTMAIL_AGENT_KEY: cliShaped.agent.key,
          AGENTMAIL_TINY_DATA_DIR: join(root, 'tiny-cli-data'),
        }),
      },
    );
    try {
      const sent = await cliShaped.sendAs(undefined, cliShaped.taskAddress(), {
        subject: 'Plan it too',
        body: 'Run the shell.',
        permissionMode: 'plan',
      });
      const reply = await cliShaped.awaitReply({ inReplyTo: sent.mail_id, timeoutMs: STEP_MS });
      expect(reply.body).toMatch(/tiny cli read \d+ characters; Shell=deny read_file=allow/);
    } finally {
      await daemon.stop();
    }
  }, 120_000);

  it('no file outside the new package differs: the checkout links to the real packages, and the real tree is unchanged', () => {
    for (const name of readdirSync(join(checkout, 'packages')).filter((n) => n !== 'bridge-tiny')) {
      const link = join(checkout, 'packages', name);
      expect(lstatSync(link).isSymbolicLink(), name).toBe(true);
      expect(readlinkSync(link)).toBe(join(REAL_ROOT, 'packages', name));
    }
    expect(lstatSync(join(checkout, 'packages', 'bridge-tiny')).isSymbolicLink()).toBe(false);
    expect(gitStatus()).toBe(statusBefore);
  });
});
