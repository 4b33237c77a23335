/**
 * The pi `HostHarness` of the testkit harness, shared by the conformance suite, the e2e tests
 * and `pnpm demo`: the `agentmail-pi` daemon (bundled once per process with tsup, see build.ts) started as a child process with environment
 * variables only. pi's agent directory (with a `models.json` naming the scripted model server as an
 * OpenAI-compatible provider), the bridge's data directory, HOME and TMPDIR all live under the
 * stack's bridge state directory, so nothing of the person's own pi is read or written.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { askPersonQuestions, type BridgeEnv, type HostHarness } from '@agentmail/testkit';
import { buildBridge } from './build.js';

let built: ReturnType<typeof buildBridge> | undefined;

/** The bundled daemon, built on first use and shared by every scenario of the test file. */
function bundled(): ReturnType<typeof buildBridge> {
  built ??= buildBridge();
  return built;
}

/** Bundles the daemon now (else on the first `start`), e.g. to time the build apart from the start. */
export async function prepareBundle(): Promise<void> {
  await bundled();
}

/** Removes the bundle (call in `afterAll`). */
export async function removeBundle(): Promise<void> {
  if (built === undefined) return;
  const { remove } = await built;
  built = undefined;
  await remove();
}

/** Where the harness keeps pi's agent directory, the bridge's data directory and TMPDIR in a bridge's state directory. */
export function piStateDirs(stateDir: string): { agentDir: string; dataDir: string; tmpDir: string } {
  return {
    agentDir: join(stateDir, 'pi-agent'),
    dataDir: join(stateDir, 'pi-data'),
    tmpDir: join(stateDir, 'tmp'),
  };
}

/**
 * Writes pi's `models.json` in `agentDir`: every scripted model under the harness's provider id, at
 * the scripted server's `/v1` (also for a pi a test runs itself, e.g. a person's own session).
 */
export function writePiModels(
  agentDir: string,
  model: { provider: string; baseUrl: string; ids: readonly string[] },
): void {
  mkdirSync(agentDir, { recursive: true });
  writeFileSync(
    join(agentDir, 'models.json'),
    JSON.stringify({
      providers: {
        [model.provider]: {
          baseUrl: model.baseUrl,
          api: 'openai-completions',
          apiKey: 'test-key',
          models: model.ids.map((id) => ({ id })),
        },
      },
    }),
  );
}

/** Writes pi's `models.json` ({@link writePiModels}) and returns the directories. */
function piDirs(env: BridgeEnv): { agentDir: string; dataDir: string; tmpDir: string } {
  const { agentDir, dataDir, tmpDir } = piStateDirs(env.stateDir);
  for (const dir of [agentDir, dataDir, tmpDir]) mkdirSync(dir, { recursive: true });
  writePiModels(agentDir, { provider: env.modelProvider, baseUrl: env.modelBaseUrl, ids: env.modelIds });
  return { agentDir, dataDir, tmpDir };
}

/** pi's tool names, verified in pi 1.6 (`dist/core/tools/{bash,read,write,edit}.js`). */
export const piAdapter: HostHarness = {
  platform: 'pi',
  toolNames: { shell: 'bash', readFile: 'read', writeFile: 'write', editFile: 'edit' },
  shellArgs: (command) => ({ command }),
  readFileArgs: (path) => ({ path }),
  // pi has no question tool of its own: the kit's ask_person mail tool is the seam (P-10).
  questions: askPersonQuestions(),
  // The daemon's start runs a probe child that loads pi (2 s alone, 30 s+ on a loaded 2-core CI
  // machine running the opencode suite next to it).
  readyTimeoutMs: 90_000,
  stepTimeoutMs: 60_000,
  // A worker loads pi per mail (1.5–3 s alone, 10 s+ under load): the timeout scenario's next mail
  // must still fit.
  shortTurnTimeoutMs: 40_000,
  async start(env) {
    const { daemonJs } = await bundled();
    const { agentDir, dataDir, tmpDir } = piDirs(env);
    const processEnv: NodeJS.ProcessEnv = {};
    // The person's own pi configuration must not leak in.
    for (const [key, value] of Object.entries(env.processEnv))
      if (!key.startsWith('PI_')) processEnv[key] = value;
    return env.spawn(process.execPath, [daemonJs], {
      env: {
        ...processEnv,
        TMPDIR: tmpDir,
        AGENTMAIL_PI_DATA_DIR: dataDir,
        AGENTMAIL_PI_AGENT_DIR: agentDir,
        // The scenarios script every model answer: pi's own retries would only repeat them.
        AGENTMAIL_PI_MAX_RETRIES: '0',
        // Workers at the default nice 10 sit in an autogroup of their own, which gets ~10 % of a
        // core while anything else is busy: with one busy core beside the suite a worker took 35 s
        // to load pi, past the short turn timeout the scenarios set. The scenarios check mail
        // behaviour, not priority (a setting the person may choose too; its parsing and default
        // are tested in test/pi-tools.test.ts).
        AGENTMAIL_PI_WORKER_NICE: env.processEnv.AGENTMAIL_PI_WORKER_NICE ?? '0',
      },
    });
  },
};
