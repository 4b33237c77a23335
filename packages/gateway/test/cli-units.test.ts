/**
 * In-process tests of the CLI's pieces: error registry, config precedence and file mode, answer
 * mapping, error printing and exit codes. The end-to-end runs are in cli.test.ts.
 */
import { readFileSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PermissionView } from '@agentmail/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_GATEWAY_URL, resolveConfig, writeConfigFile } from '../src/cli/config.js';
import { parseIntOption } from '../src/cli/context.js';
import { run as probe } from '../src/cli/doctor-report.js';
import { CLI_ERRORS, isCliError } from '../src/cli/errors.js';
import { HumanApi } from '../src/cli/http.js';
import type { CliIo } from '../src/cli/output.js';
import { answersFor } from '../src/cli/permissions.js';
import { runCli } from '../src/cli/program.js';
import { serveLocale } from '../src/cli/serve.js';
import { waitForAnswer } from '../src/cli/wait-reply.js';
import { tempHome } from './helpers/service-env.js';

let tmp = '';
beforeAll(async () => {
  tmp = await mkdtemp(join(tmpdir(), 'agentmail-cli-units-'));
});
afterAll(async () => {
  await rm(tmp, { recursive: true, force: true });
});

function fakeIo(env: NodeJS.ProcessEnv = {}): CliIo & { stdout: string[]; stderr: string[] } {
  const stdout: string[] = [];
  const stderr: string[] = [];
  return {
    stdout,
    stderr,
    out: (s) => stdout.push(s),
    err: (s) => stderr.push(s),
    env: { AGENTMAIL_CONFIG: join(tmp, 'absent.json'), ...env },
    stdin: async function* () {},
  };
}

describe('CLI error registry', () => {
  it('codes are unique, documented in docs/errors.md, and usage problems exit 2', () => {
    const codes = Object.values(CLI_ERRORS).map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/errors.md', import.meta.url)), 'utf8');
    const section = doc.split('## agentmail CLI')[1] ?? '';
    for (const code of codes) expect(section, code).toMatch(new RegExp(`\\|\\s*\`${code}\`\\s*\\|`));
    expect(CLI_ERRORS.USAGE.exit).toBe(2);
    expect(CLI_ERRORS.NO_TOKEN.exit).toBe(2);
    expect(CLI_ERRORS.SERVER_REFUSED.exit).toBe(1);
    expect(CLI_ERRORS.UNREACHABLE.exit).toBe(1);
  });
});

describe('serve locale', () => {
  it('--locale beats AGENTMAIL_LOCALE; the default is en; tags are matched leniently', () => {
    expect(serveLocale(undefined, {})).toBe('en');
    expect(serveLocale(undefined, { AGENTMAIL_LOCALE: 'zh_CN' })).toBe('zh-CN');
    expect(serveLocale('zh-Hans', {})).toBe('zh-CN');
    expect(serveLocale('en', { AGENTMAIL_LOCALE: 'zh-CN' })).toBe('en');
    expect(serveLocale(undefined, { AGENTMAIL_LOCALE: 'fr' })).toBe('en');
  });
});

describe('CLI config', () => {
  it('flags beat the environment, which beats the config file, which beats the default', async () => {
    const file = join(tmp, 'precedence.json');
    await writeFile(file, JSON.stringify({ url: 'http://file:1', token: 'file-token' }));
    const env = { AGENTMAIL_CONFIG: file };
    // Each value says where it came from (issue 20: errors name the Gateway and its source).
    expect(await resolveConfig({}, env)).toEqual({
      url: 'http://file:1',
      token: 'file-token',
      configPath: file,
      configExists: true,
      urlFrom: `the config file ${file}`,
      tokenFrom: `the config file ${file}`,
    });
    const withEnv = { ...env, AGENTMAIL_GATEWAY_URL: 'http://env:2/', AGENTMAIL_TOKEN: 'env-token' };
    expect(await resolveConfig({}, withEnv)).toMatchObject({
      url: 'http://env:2',
      token: 'env-token',
      urlFrom: 'AGENTMAIL_GATEWAY_URL',
      tokenFrom: 'AGENTMAIL_TOKEN',
    });
    expect(await resolveConfig({ url: 'http://flag:3', token: 'flag-token' }, withEnv)).toMatchObject({
      url: 'http://flag:3',
      token: 'flag-token',
      urlFrom: '--url',
      tokenFrom: '--token',
    });
    const none = await resolveConfig({}, { AGENTMAIL_CONFIG: join(tmp, 'missing.json') });
    expect(none).toMatchObject({ url: DEFAULT_GATEWAY_URL, token: undefined, tokenFrom: undefined });
    expect(none.urlFrom).toMatch(/^the default: no --url, no AGENTMAIL_GATEWAY_URL, and the config file /);
  });

  it('regression (issue 20): a config file that does not exist is said so, with the login that creates it', async () => {
    const missing = join(tmp, 'missing-flag.json');
    const flagged = await resolveConfig({ config: missing }, {});
    expect(flagged).toMatchObject({ configExists: false, configPath: missing });
    expect(flagged.urlFrom).toBe(
      `the default: no --url, no AGENTMAIL_GATEWAY_URL, and the config file ${missing} does not exist (agentmail --config ${missing} login --url <url> --token <token> creates it)`,
    );
    const io = fakeIo();
    expect(await runCli(['--config', missing, 'inbox'], io)).toBe(2);
    expect(io.stderr.join('\n')).toContain(
      `no token in --token or AGENTMAIL_TOKEN, and the config file ${missing} does not exist`,
    );
    expect(io.stderr.join('\n')).not.toContain('no url in');
  });

  it('regression (issue 20): a Gateway URL with a path is refused when parsed, naming the URL to give; an API URL means its base', async () => {
    const env = { AGENTMAIL_CONFIG: join(tmp, 'none.json') };
    for (const url of [
      'http://127.0.0.1:8787/foo/',
      'http://127.0.0.1:8787/foo',
      'http://127.0.0.1:8787/?x=1',
    ]) {
      const err = await resolveConfig({ url }, env).catch((e: unknown) => e);
      expect(isCliError(err) && err.code, url).toBe('AM_CLI_CONFIG_INVALID');
      expect((err as Error).message).toContain(`Gateway URL "${url}" (from --url) has a path`);
      expect((err as Error).message).toContain('a path is not supported');
      expect((err as { suggestion?: string }).suggestion).toBe('give http://127.0.0.1:8787 in --url');
    }
    for (const url of [
      'http://127.0.0.1:8787/',
      'http://127.0.0.1:8787/api/v1/',
      'http://127.0.0.1:8787/api/v1',
    ])
      expect((await resolveConfig({ url }, env)).url).toBe('http://127.0.0.1:8787');
    const noScheme = await resolveConfig({ url: 'localhost:8787' }, env).catch((e: unknown) => e);
    expect((noScheme as Error).message).toContain('is not an http(s) URL');
  });

  it('the default config path is under $XDG_CONFIG_HOME, else ~/.config', async () => {
    expect((await resolveConfig({}, { XDG_CONFIG_HOME: join(tmp, 'xdg') })).configPath).toBe(
      join(tmp, 'xdg', 'agentmail', 'config.json'),
    );
  });

  it('a broken config file or URL is AM_CLI_CONFIG_INVALID naming the problem', async () => {
    const file = join(tmp, 'broken.json');
    await writeFile(file, '{"url": 42}');
    const err = await resolveConfig({}, { AGENTMAIL_CONFIG: file }).catch((e: unknown) => e);
    expect(isCliError(err) && err.code).toBe('AM_CLI_CONFIG_INVALID');
    expect((err as Error).message).toContain('field "url"');
    const bad = await resolveConfig(
      { url: 'not a url' },
      { AGENTMAIL_CONFIG: file.replace('broken', 'x') },
    ).catch((e: unknown) => e);
    expect((bad as Error).message).toContain('"not a url" (from --url) is not a URL');
  });

  it('writeConfigFile leaves the file at mode 0600 even over world-readable leftovers', async () => {
    const file = join(tmp, 'cfg', 'config.json');
    await writeConfigFile(file, { url: 'http://a:1', token: 't1' });
    await chmod(file, 0o644);
    // A temp file left behind by a crashed run with the same pid, world-readable.
    await writeFile(`${file}.${process.pid}.tmp`, 'stale', { mode: 0o644 });
    await chmod(`${file}.${process.pid}.tmp`, 0o644);
    await writeConfigFile(file, { url: 'http://a:1', token: 't2' });
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(file, 'utf8'))).toEqual({ url: 'http://a:1', token: 't2' });
  });
});

describe('answersFor (SPEC P-9)', () => {
  const question = (over: Partial<PermissionView>): PermissionView => ({
    id: 'p1',
    agent_name: 'pi',
    session_id: 's1',
    session_alias: 'pi-x',
    kind: 'question',
    question: 'Which?',
    options: ['SQLite', 'Postgres', 'Option C'],
    multi_select: false,
    context: '',
    status: 'pending',
    decision: null,
    answers: [],
    note: '',
    mail_id: 'm1',
    created_at: '2026-01-01T00:00:00.000Z',
    decided_at: null,
    ...over,
  });

  it('maps option labels, checks them, and joins free text into one answer', () => {
    expect(answersFor(question({}), ['Option C'])).toEqual(['Option C']);
    expect(answersFor(question({ multi_select: true }), ['SQLite', 'Postgres', 'SQLite'])).toEqual([
      'SQLite',
      'Postgres',
    ]);
    expect(answersFor(question({ options: [] }), ['call', 'it', 'x'])).toEqual(['call it x']);
    expect(answersFor(undefined, ['a', 'b'])).toEqual(['a', 'b']);
  });

  it('refuses unknown labels, several labels for one choice, and approvals as usage errors', () => {
    const code = (f: () => unknown): unknown => {
      try {
        f();
      } catch (err) {
        return isCliError(err) ? [err.code, err.exitCode] : err;
      }
      return 'no error';
    };
    expect(code(() => answersFor(question({}), ['MySQL']))).toEqual(['AM_CLI_USAGE', 2]);
    expect(code(() => answersFor(question({}), ['SQLite', 'Postgres']))).toEqual(['AM_CLI_USAGE', 2]);
    expect(code(() => answersFor(question({ kind: 'approval', options: [] }), ['yes']))).toEqual([
      'AM_CLI_USAGE',
      2,
    ]);
  });
});

describe('runCli exit codes and error output (SPEC G-13, H-2)', () => {
  // What the Gateway answers for a mail the reader cannot see (mail-views.ts), route in suggestion.
  const refusal = {
    error: 'not_found',
    detail: 'mail "m_x" not found (SPEC G-2)',
    suggestion: 'use an id from GET /api/v1/me/inbox',
    code: 'AM_GW_NOT_FOUND',
  };
  let server: Server;
  let url = '';
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url?.startsWith('/api/v1/me/mail/')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify(refusal));
      } else if (req.url?.startsWith('/api/v1/me/inbox')) {
        // JSON, but not the Gateway's (no AM_GW_ code): some other API.
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'not_found', message: 'no such route' }));
      } else {
        res.writeHead(502, { 'content-type': 'text/html' });
        res.end('<html>Bad Gateway</html>');
      }
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((done) => server.close(done));
  });

  it('help and version exit 0; a missing option, bad number or unknown command exit 2', async () => {
    expect(await runCli(['--version'], fakeIo())).toBe(0);
    expect(await runCli(['--help'], fakeIo())).toBe(0);
    const io = fakeIo();
    expect(await runCli(['send', 'pi', '--subject', 'x'], io)).toBe(2);
    expect(io.stderr.join('\n')).toContain(
      'send needs a body: --body <text>, --body - (stdin) or --body-file <path>',
    );
    const limit = fakeIo();
    expect(await runCli(['--token', 't', 'inbox', '--limit', '0'], limit)).toBe(2);
    expect(limit.stderr.join('\n')).toContain('option "--limit" must be an integer from 1 to 100, got "0"');
    expect(await runCli(['frobnicate'], fakeIo())).toBe(2);
  });

  it('regression (issue 20): every usage error of a bad value has a try: line', async () => {
    const { env } = tempHome();
    for (const argv of [
      ['--token', 't', 'inbox', '--limit', '0'],
      ['--url', url, '--token', 't', 'send', 'pi', '-s', 'x', '-b', 'y', '--mode', 'wild'],
      ['service', 'install', 'gateway', '--user', '--system'],
      ['service', 'install', 'gateway', '--port', '99999'],
      ['service', 'install', 'pi', '--agent-name', 'Bad Name', '--agent-key', 'amk_x'],
      ['service', 'flush', 'pi', '--state-dir', '/tmp', '--wait-ms', 'soon'],
    ]) {
      const io = fakeIo(env);
      expect(await runCli(argv, io), argv.join(' ')).toBe(2);
      expect(io.stderr.join('\n'), argv.join(' ')).toMatch(/\n {2}try: \S/);
    }
  });

  it('no token is a usage error that says how to log in, naming no route', async () => {
    const io = fakeIo();
    expect(await runCli(['--url', url, 'inbox'], io)).toBe(2);
    expect(io.stderr.join('\n')).toMatch(/needs your user token[\s\S]*agentmail login/);
    expect(io.stderr.join('\n')).not.toMatch(/\/api\/v1|GET /);
  });

  it("regression (H-2): a refusal is the person's message, then its fix as a command, never an HTTP route or a rule id", async () => {
    const io = fakeIo();
    expect(await runCli(['--url', url, '--token', 't', 'read', 'm_x'], io)).toBe(1);
    expect(io.stderr.join('\n')).toBe(
      'agentmail: mail "m_x" not found\n  try: your mails and their ids: agentmail inbox --all',
    );
    // --json keeps the server's body exactly, with the person's words beside it.
    const json = fakeIo();
    expect(await runCli(['--url', url, '--token', 't', '--json', 'read', 'm_x'], json)).toBe(1);
    expect(JSON.parse(json.stderr.join(''))).toEqual({
      code: 'AM_CLI_SERVER_REFUSED',
      message: 'mail "m_x" not found',
      status: 404,
      body: refusal,
      suggestion: 'your mails and their ids: agentmail inbox --all',
    });
  });

  it('regression: a page from another server is AM_CLI_NOT_A_GATEWAY saying what to check, never the page; a dead port says nothing listens', async () => {
    const err = await new HumanApi({ baseUrl: url, token: 't' }).users().catch((e: unknown) => e);
    expect(isCliError(err) && [err.code, err.status]).toEqual(['AM_CLI_NOT_A_GATEWAY', 502]);
    const io = fakeIo();
    expect(await runCli(['--url', url, 'status'], io)).toBe(1);
    const text = io.stderr.join('\n');
    expect(text).toContain(`the server at ${url} is not an AgentMail Gateway`);
    expect(text).toContain('it answered 502 with an HTML page');
    expect(text).toMatch(/try: check --url/);
    expect(text).not.toContain('<html>');
    const foreignJson = fakeIo();
    expect(await runCli(['--url', url, '--token', 't', 'inbox'], foreignJson)).toBe(1);
    expect(foreignJson.stderr.join('\n')).toContain('is not an AgentMail Gateway');
    const dead = fakeIo();
    expect(await runCli(['--url', 'http://127.0.0.1:9', '--token', 't', 'inbox'], dead)).toBe(1);
    expect(dead.stderr.join('\n')).toMatch(
      /nothing is listening at http:\/\/127\.0\.0\.1:9\n(?: {2}.*\n)* {2}try: start the Gateway/,
    );
  });
});

describe('send --wait without a Gateway to listen to', () => {
  it('says once that the Gateway was lost, and the timeout names it with the mail id (AM_CLI_WAIT_TIMEOUT)', async () => {
    // A port with nothing behind it: the stream never opens.
    const closed = createServer();
    await new Promise<void>((done) => closed.listen(0, '127.0.0.1', () => done()));
    const url = `http://127.0.0.1:${(closed.address() as AddressInfo).port}`;
    await new Promise((done) => closed.close(done));
    const states: string[] = [];
    const waited = waitForAnswer({
      api: new HumanApi({ baseUrl: url, token: 'amu_x' }),
      url,
      token: 'amu_x',
      sent: {
        status: 'sent',
        mail_id: 'm_1',
        session_id: 's_1',
        session_alias: 'a',
        address: 'pi@/w.a',
        rounds_left: null,
      },
      timeoutMs: 1500,
      onRequest: () => {},
      onConnection: (state) => states.push(state),
    });
    const err = await waited.then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(isCliError(err) && err.code).toBe('AM_CLI_WAIT_TIMEOUT');
    expect(isCliError(err) && err.extra).toMatchObject({ mail_id: 'm_1', gateway_lost: true });
    expect(isCliError(err) && err.message).toContain(url);
    expect(states).toEqual(['lost']);
  });

  it('integer options take digits only (not 0x2, 2e0, +2 or " 2")', () => {
    for (const bad of ['0x2', '2e0', '+2', ' 2', '1.5', ''])
      expect(() => parseIntOption('--wait', bad, 1, 10), bad).toThrow(/must be an integer/);
    expect(parseIntOption('--wait', '7', 1, 10)).toBe(7);
  });
});

describe('doctor probes', () => {
  it('a probe stopped at its time limit is told apart from one that failed', async () => {
    const slow = await probe('sleep', ['5'], process.env, 200);
    expect(slow).toMatchObject({ ok: false, timedOut: true, missing: false });
    const failed = await probe('sh', ['-c', 'echo no; exit 3'], process.env, 5000);
    expect(failed).toMatchObject({ ok: false, timedOut: false, out: 'no' });
    expect(await probe('/nonexistent/opencode', ['--version'], process.env, 5000)).toMatchObject({
      missing: true,
      timedOut: false,
    });
  });
});
