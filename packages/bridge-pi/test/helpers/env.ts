/**
 * The e2e environment of the bridge tests: a real Gateway in-process (temp SQLite), the scripted
 * model server as pi's OpenAI-compatible provider, and the `agentmail-pi` daemon as a child
 * process started with environment variables only. Everything waits on events with timeouts.
 */
import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { buildApp, initDataDir } from '@agentmail/gateway';
import { type ModelServer, type Scenario, startModelServer } from '@agentmail/testkit';

export interface LogLine {
  msg?: string;
  level?: number;
  [key: string]: unknown;
}

export interface BridgeEnv {
  url: string;
  root: string;
  workDir: string;
  agentDir: string;
  dataDir: string;
  model: ModelServer;
  aliceToken: string;
  daemon: ChildProcessWithoutNullStreams;
  logs: LogLine[];
  waitForLog: (pred: (l: LogLine) => boolean, timeoutMs?: number) => Promise<LogLine>;
  /** A person API call as alice. */
  me: <T = Record<string, unknown>>(
    method: string,
    path: string,
    body?: unknown,
  ) => Promise<{ status: number; body: T }>;
  close: () => Promise<void>;
}

async function call<T>(url: string, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${url}/api/v1${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : {}) as T };
}

export async function startBridgeEnv(options: {
  daemonJs: string;
  scenarios: Scenario[];
  extraEnv?: Record<string, string>;
}): Promise<BridgeEnv> {
  const root = mkdtempSync(join(tmpdir(), 'bridge-pi-'));
  const gwDir = join(root, 'gateway');
  const agentDir = join(root, 'agent');
  const dataDir = join(root, 'data');
  const workDir = join(root, 'work');
  for (const d of [gwDir, agentDir, dataDir, workDir]) mkdirSync(d, { recursive: true });

  const init = await initDataDir(gwDir);
  const app = await buildApp({
    dataDir: gwDir,
    logLevel: 'silent',
    sweepTimer: false,
    requestsPerMinute: false,
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const addr = app.server.address();
  if (addr === null || typeof addr === 'string') throw new Error('gateway has no port');
  const url = `http://127.0.0.1:${addr.port}`;
  const admin = init.adminToken ?? '';
  const user = await call<{ token: string }>(url, admin, 'POST', '/admin/users', { name: 'alice' });
  const key = await call<{ key: string }>(url, admin, 'POST', '/admin/agent-keys', { agent_name: 'pi' });
  if (user.status !== 200 || key.status !== 200)
    throw new Error(`setup failed: ${JSON.stringify([user, key])}`);

  const model = await startModelServer({ models: ['fake-model'], scenarios: options.scenarios });
  writeFileSync(
    join(agentDir, 'models.json'),
    JSON.stringify({
      providers: {
        fake: {
          baseUrl: model.baseUrl,
          api: 'openai-completions',
          apiKey: 'test-key',
          models: [{ id: 'fake-model' }],
        },
      },
    }),
  );

  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!k.startsWith('AGENTMAIL_') && !k.startsWith('PI_')) env[k] = v;
  Object.assign(env, {
    HOME: join(root, 'home'),
    TMPDIR: root,
    AGENTMAIL_GATEWAY_URL: url,
    AGENTMAIL_AGENT_NAME: 'pi',
    AGENTMAIL_AGENT_KEY: key.body.key,
    AGENTMAIL_REPLY_PROVIDER: 'fake',
    AGENTMAIL_REPLY_MODEL: 'fake-model',
    AGENTMAIL_PI_DATA_DIR: dataDir,
    AGENTMAIL_PI_AGENT_DIR: agentDir,
    AGENTMAIL_PI_MAX_RETRIES: '0',
    AGENTMAIL_TURN_TIMEOUT_MS: '60000',
    ...options.extraEnv,
  });
  const daemon = spawn(process.execPath, [options.daemonJs], { env, stdio: 'pipe' });
  const logs: LogLine[] = [];
  const waiters = new Set<() => void>();
  createInterface({ input: daemon.stderr }).on('line', (line) => {
    try {
      logs.push(JSON.parse(line) as LogLine);
    } catch {
      logs.push({ msg: line });
    }
    for (const w of [...waiters]) w();
  });
  const waitForLog = (pred: (l: LogLine) => boolean, timeoutMs = 30_000) =>
    new Promise<LogLine>((resolve, reject) => {
      const check = () => {
        const hit = logs.find(pred);
        if (hit) {
          waiters.delete(check);
          clearTimeout(timer);
          resolve(hit);
        }
      };
      const timer = setTimeout(() => {
        waiters.delete(check);
        reject(
          new Error(
            `no matching daemon log line in ${timeoutMs} ms; got:\n${logs.map((l) => JSON.stringify(l)).join('\n')}`,
          ),
        );
      }, timeoutMs);
      waiters.add(check);
      check();
      daemon.once('exit', (code) => {
        if (!logs.find(pred)) {
          clearTimeout(timer);
          reject(
            new Error(`daemon exited (${code}); log:\n${logs.map((l) => JSON.stringify(l)).join('\n')}`),
          );
        }
      });
    });
  await waitForLog((l) => l.msg === 'ready' || l.level === 60);
  return {
    url,
    root,
    workDir,
    agentDir,
    dataDir,
    model,
    aliceToken: user.body.token,
    daemon,
    logs,
    waitForLog,
    me: (method, path, body) => call(url, user.body.token, method, path, body),
    close: async () => {
      if (daemon.exitCode === null) {
        const exited = new Promise((r) => daemon.once('exit', r));
        daemon.kill('SIGTERM');
        await exited;
      }
      await model.close();
      await app.close();
      rmSync(root, { recursive: true, force: true });
    },
  };
}
