/**
 * What a new user hit with the `agentmail` CLI (issue 10), each as a regression: the CLI against a
 * real `agentmail serve` (a child process of the bundle made with the package build's options) on
 * a loopback port with a temporary SQLite data directory; agents are played over the agent API.
 * Commands run in this process (helpers/cli-in-process.ts); what only a real process shows (a
 * non-UTF-8 argv, a stdin pipe read as it comes) runs the binary (`cliBinary`).
 */
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type InboxResponse,
  MAIL_BODY_MAX_CHARS,
  type MailResponse,
  routePath,
  type SendMailResponse,
} from '@agentmail/protocol';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli } from './helpers/cli-build.js';
import { runCliInProcess } from './helpers/cli-in-process.js';
import { storeEnv } from './helpers/postgres.js';
import {
  callApi,
  cleanEnv,
  PROCESS_TEST_TIMEOUT_MS,
  type RunResult,
  run,
  type ServeProcess,
  startServe,
} from './helpers/processes.js';
import { actsOnTerminal } from './helpers/terminal.js';

vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

const HOSTILE_SUBJECT = 'pay \u001b]8;;http://evil\u0007now\u001b]8;;\u0007 \u001b[2J\u009b31m\u202etxt.exe';
const HOSTILE_BODY = 'line 1\r\u001b[1Aline 1 rewritten\n\u001b]0;pwned\u0007title\nok';

let mainJs = '';
let removeBuild: () => Promise<void> = async () => {};
let tmp = '';
let dataDir = '';
let env: NodeJS.ProcessEnv = {};
let server: ServeProcess | undefined;
let adminToken = '';
let aliceToken = '';
let bobToken = '';
let echoKey = '';

type CliOptions = { input?: string | Uint8Array; token?: string };

/** Run the CLI in this process (helpers/cli-in-process.ts) in `tmp`, as alice unless `token` says. */
function cli(args: readonly string[], options: CliOptions = {}): Promise<RunResult> {
  const auth = ['--url', server?.url ?? '', '--token', options.token ?? aliceToken];
  return runCliInProcess([...auth, ...args], {
    env,
    cwd: tmp,
    ...(options.input === undefined ? {} : { input: options.input }),
  });
}

/** Run the built binary as a child process, like {@link cli}: for what only a process shows (its argv, its stdin pipe). */
function cliBinary(args: readonly string[], options: CliOptions = {}): Promise<RunResult> {
  const auth = ['--url', server?.url ?? '', '--token', options.token ?? aliceToken];
  return run(process.execPath, [mainJs, ...auth, ...args], {
    env,
    cwd: tmp,
    ...(options.input === undefined ? {} : { input: options.input }),
  });
}

function ok(result: RunResult): string {
  expect(result.code, result.stderr).toBe(0);
  return result.stdout;
}

function agentApi<T>(method: 'GET' | 'POST', path: string, body?: unknown) {
  return callApi<T>(server?.url ?? '', method, path, echoKey, body);
}

beforeAll(async () => {
  const built = await buildCli('cli-first-run');
  mainJs = built.mainJs;
  removeBuild = built.remove;
  tmp = await mkdtemp(join(tmpdir(), 'agentmail-first-run-'));
  dataDir = join(tmp, 'data');
  env = cleanEnv({ HOME: join(tmp, 'home'), AGENTMAIL_CONFIG: join(tmp, 'absent.json') });
  server = await startServe(
    mainJs,
    ['--data-dir', dataDir, '--port', '0', '--log-level', 'warn', '--json'],
    env,
  );
  adminToken = (JSON.parse(server.startupLines[0] ?? '{}') as { admin_token: string }).admin_token;
  const admin = { token: adminToken };
  aliceToken = (JSON.parse(ok(await cli(['--json', 'user', 'add', 'alice'], admin))) as { token: string })
    .token;
  bobToken = (JSON.parse(ok(await cli(['--json', 'user', 'add', 'bob'], admin))) as { token: string }).token;
  echoKey = (JSON.parse(ok(await cli(['--json', 'agent', 'key', 'echo'], admin))) as { key: string }).key;
  expect((await agentApi('POST', routePath('register'), { name: 'echo', platform: 'pi' })).status).toBe(200);
  expect((await agentApi('POST', routePath('heartbeat'), {})).status).toBe(200);
});

afterAll(async () => {
  await server?.stop();
  await removeBuild();
  if (tmp !== '') await rm(tmp, { recursive: true, force: true });
});

describe('mail content never reaches the terminal raw (item 2, SPEC H-1)', () => {
  it('regression: escape sequences in a subject, body and question are shown inert by inbox, read, thread, permissions; --json is exact', async () => {
    ok(await cli(['send', 'echo@/srv/h.new', '-s', 'task', '-b', 'x']));
    const inboxOfEcho = await agentApi<InboxResponse>('GET', `${routePath('inbox')}?status=unread&limit=50`);
    const task = inboxOfEcho.body.mails.find((m) => m.subject === 'task');
    expect(task).toBeDefined();
    const sent = await agentApi<{ mail_id: string }>('POST', routePath('send'), {
      to: 'alice',
      reply_to: task?.id,
      subject: HOSTILE_SUBJECT,
      body: HOSTILE_BODY,
    });
    expect(sent.status).toBe(200);
    const asked = await agentApi('POST', routePath('permissionRequest'), {
      session_id: task?.session_id,
      relay_key: 'hostile-1',
      kind: 'question',
      question: `Pick one\u001b[8m hidden`,
      options: ['a\u001b[31m', 'b'],
      context: 'ctx \u009b2J',
    });
    expect(asked.status).toBe(200);
    const id = sent.body.mail_id;
    for (const args of [['inbox'], ['read', id, '--keep-unread'], ['thread', id], ['permissions']]) {
      const out = ok(await cli(args));
      expect(actsOnTerminal(out), args.join(' ')).toBe(false);
    }
    const read = ok(await cli(['read', id, '--keep-unread']));
    expect(read).toContain('\\x1b]0;pwned'); // shown, inert
    expect(read).toContain('line 1\\r\\x1b[1Aline 1 rewritten');
    const exact = JSON.parse(ok(await cli(['--json', 'read', id]))) as MailResponse;
    // The Gateway stores a subject without its control characters (issue 18); the body is exact.
    expect(exact.mail.subject).toBe('pay ]8;;http://evilnow]8;; [2J31m\u202etxt.exe');
    expect(exact.mail.body).toBe(HOSTILE_BODY);
  });

  it('regression: a body that is not UTF-8 is refused, not silently changed', async () => {
    const raw = await cliBinary(['send', 'echo', '-s', 'bin', '-b', '-'], {
      input: Buffer.from([0x68, 0x69, 0xff, 0xfe]),
    });
    expect(raw.code).toBe(2);
    expect(raw.stderr).toContain('the body read from stdin is not UTF-8 text (near byte 0)');
    const inbox = JSON.parse(ok(await cli(['--json', 'inbox', '--all']))) as InboxResponse;
    expect(inbox.mails.map((m) => m.subject)).not.toContain('bin');
    // An argument that was not UTF-8 reaches the CLI with U+FFFD in it: a warning names the option.
    const warned = await cliBinary(['send', 'echo', '-s', 'caf\ud800', '-b', 'x']);
    expect(warned.code).toBe(0);
    expect(warned.stderr).toContain('warning: --subject contains U+FFFD');
  });
});

describe('addresses (items 3, 8)', () => {
  it('regression: an alias under another path is refused naming its real address (G-2)', async () => {
    await mkdir(join(tmp, 'a b'), { recursive: true });
    const made = JSON.parse(
      ok(await cli(['--json', 'send', `echo@${tmp}/a b.new`, '-s', 'x', '-b', 'y'])),
    ) as {
      session_alias: string;
    };
    const res = await cli(['send', `echo@/tmp/x.${made.session_alias}`, '-s', 'x', '-b', 'y']);
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`echo@${tmp}/a b.${made.session_alias}`);
    expect(res.stderr).not.toMatch(/SPEC|\/api\/v1/);
  });

  it('regression: a directory with a dot gets the form that works; the default session has a name', async () => {
    const dotted = await cli(['send', 'echo@/srv/my.project', '-s', 'x', '-b', 'y']);
    expect(dotted.code).toBe(1);
    expect(dotted.stderr).toContain('echo@/srv/my.project.');
    const def = ok(await cli(['send', 'echo@/srv/my.project.', '-s', 'x', '-b', 'y']));
    expect(def).toMatch(/^sent \S+ to echo@\/srv\/my\.project\. \(default session, mode workspace\)$/m);
  });
});

describe('attachments (items 4, 5, 13)', () => {
  // Stored blobs: files in the data directory, or chunked blobs in the test's PostgreSQL database.
  const blobFiles = async (): Promise<number> => {
    const url = (await storeEnv(dataDir)).AGENTMAIL_DATABASE_URL;
    if (url === undefined) return (await readdir(join(dataDir, 'blobs'), { recursive: true })).length;
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const r = await client.query<{ n: number }>(
        'select count(distinct blob_key)::int as n from blob_chunks',
      );
      return r.rows[0]?.n ?? 0;
    } finally {
      await client.end();
    }
  };

  it('regression: a directory is named as the cause, not "cannot reach the Gateway"', async () => {
    await mkdir(join(tmp, 'docs'), { recursive: true });
    const res = await cli(['send', 'echo', '-s', 'x', '-b', 'y', '--attach', 'docs']);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('"docs" is a directory');
    expect(res.stderr).not.toContain('cannot reach');
    // A device (new-user trial): named as such, once, with what to do instead.
    const device = await cli(['send', 'echo', '-s', 'x', '-b', 'y', '--attach', '/dev/zero']);
    expect(device.code).toBe(2);
    expect(device.stderr).toBe(
      'agentmail: cannot attach "/dev/zero": not a regular file\n  try: save what it gives to a file first, and attach that file; nothing was uploaded or sent\n',
    );
  });

  it('regression: every file is checked before the first upload (no orphan blob); text goes up as text/plain', async () => {
    await writeFile(join(tmp, 'a.txt'), 'hello');
    const before = await blobFiles();
    const res = await cli([
      'send',
      'echo',
      '-s',
      'x',
      '-b',
      'y',
      '--attach',
      'a.txt',
      '--attach',
      'nope.txt',
    ]);
    expect(res.code).toBe(2);
    expect(res.stderr).toContain('cannot attach "nope.txt": no such file');
    expect(await blobFiles()).toBe(before);
    // --attach is repeatable and no longer swallows the recipient.
    const sent = JSON.parse(
      ok(await cli(['--json', 'send', '--attach', 'a.txt', 'echo', '-s', 'file', '-b', 'y'])),
    ) as {
      mail_id: string;
      attachments: { id: string; content_type: string }[];
    };
    expect(sent.attachments.map((a) => a.content_type)).toEqual(['text/plain']);
    const mail = await agentApi<MailResponse>('GET', routePath('mail', { id: sent.mail_id }));
    expect(mail.body.mail.attachments[0]?.content_type).toBe('text/plain');
  });

  it('attachment get downloads, refuses to overwrite without --force, and -o names the file', async () => {
    await writeFile(join(tmp, 'report.txt'), 'the report');
    const up = await cli(['--json', 'send', 'echo', '-s', 'r', '-b', 'y', '--attach', 'report.txt']);
    const id = (JSON.parse(ok(up)) as { attachments: { id: string }[] }).attachments[0]?.id ?? '';
    const out = join(tmp, 'down');
    await mkdir(out, { recursive: true });
    const got = ok(await cli(['attachment', 'get', id, '-o', `${out}/`]));
    expect(got).toContain(join(out, 'report.txt'));
    expect(await readFile(join(out, 'report.txt'), 'utf8')).toBe('the report');
    await writeFile(join(out, 'report.txt'), 'mine');
    const again = await cli(['attachment', 'get', id, '-o', `${out}/`]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already exists[\s\S]*--force/);
    expect(await readFile(join(out, 'report.txt'), 'utf8')).toBe('mine');
    ok(await cli(['attachment', 'get', id, '-o', `${out}/`, '--force']));
    expect(await readFile(join(out, 'report.txt'), 'utf8')).toBe('the report');
    ok(await cli(['attachment', 'get', id, '-o', join(out, 'copy.txt')]));
    expect(await readFile(join(out, 'copy.txt'), 'utf8')).toBe('the report');
  });
});

describe('errors and output for people (items 7, 9, 10, 11)', () => {
  it('regression: an unknown name gets "did you mean" and `agentmail contacts`, never an HTTP route or rule id', async () => {
    const res = await cli(['send', 'ecoh', '-s', 'x', '-b', 'y']);
    expect(res.code).toBe(1);
    expect(res.stderr).toBe(
      'agentmail: no agent or person is named "ecoh"\n  try: did you mean: echo\n       see who you can write to: agentmail contacts\n',
    );
    const contacts = ok(await cli(['contacts']));
    expect(contacts).toMatch(/^echo\s+pi\s+online/m);
    expect(contacts).toMatch(/^alice\s+alice@\.$/m);
  });

  it('regression (issue 20): a name with a key whose bridge never registered is said so, not "no agent is named"', async () => {
    ok(await cli(['--token', adminToken, 'agent', 'key', 'bogus-name']));
    const res = await cli(['send', 'bogus-name', '-s', 'x', '-b', 'y']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /^agentmail: the agent "bogus-name" has a key but has not registered yet\n {2}its bridge has not run with that key; mail to it works once its bridge has started once\n {2}try: start its bridge once with that key/,
    );
    const json = await cli(['--json', 'send', 'bogus-name', '-s', 'x', '-b', 'y']);
    expect(JSON.parse(json.stderr)).toMatchObject({
      body: { code: 'AM_GW_UNKNOWN_RECIPIENT', key_issued: true },
    });
    // Its key revoked: a name like any unknown one again.
    ok(await cli(['--token', adminToken, 'agent', 'key', 'revoke', 'bogus-name']));
    expect((await cli(['send', 'bogus-name', '-s', 'x', '-b', 'y'])).stderr).toContain(
      'no agent or person is named "bogus-name"',
    );
  });

  it('regression (new-user trial): a bad address is named by its argument or flag, with no field list, rule id or route', async () => {
    const to = await cli(['send', 'echo@relative.x', '-s', 'x', '-b', 'y']);
    expect(to.code).toBe(1);
    expect(to.stderr).toBe(
      'agentmail: the recipient "echo@relative.x" is not an address\n' +
        '  the path "relative" is relative; give an absolute path starting with "/", or leave it out for the default workspace (name@. or name@.session).\n' +
        '  try: who you can write to, and their addresses: agentmail contacts\n',
    );
    const empty = await cli(['send', '', '-s', 'x', '-b', 'y']);
    expect(empty.stderr).toMatch(/^agentmail: the recipient "" is not an address\n {2}the address is empty;/);
    const cc = await cli(['send', 'echo', '-s', 'x', '-b', 'y', '--cc', 'bob@.', '--cc', 'bob@rel.x']);
    expect(cc.stderr).toMatch(/^agentmail: the --cc address "bob@rel\.x" is not an address\n/);
    for (const res of [to, empty, cc]) expect(res.stderr).not.toMatch(/Accepted fields|SPEC|field "|\/api\//);
    // --json keeps the Gateway's body exactly.
    const json = await cli(['--json', 'send', 'echo@relative.x', '-s', 'x', '-b', 'y']);
    expect(
      (JSON.parse(json.stderr) as { body: { accepted_fields: string[] } }).body.accepted_fields,
    ).toContain('to');
  });

  it('regression (new-user trial): an API URL (…/api/v1) is taken as the Gateway; a server without the route says what to check', async () => {
    const api = await run(process.execPath, [mainJs, '--url', `${server?.url}/api/v1/`, 'status'], { env });
    expect(api.code, api.stderr).toBe(0);
    expect(api.stdout).toContain(`${server?.url}: ok`);
    const prefixed = await run(process.execPath, [mainJs, '--url', `${server?.url}/some/prefix`, 'status'], {
      env,
    });
    // A path is refused when the URL is parsed (issue 20): one URL in every line, the one to give.
    expect(prefixed.code).toBe(2);
    expect(prefixed.stderr).toContain('a path is not supported');
    expect(prefixed.stderr).toContain(`try: give ${server?.url} in --url`);
    expect(prefixed.stderr).not.toMatch(/no route|\/api\//);
  });

  it('regression: --json makes a usage error one JSON line', async () => {
    const res = await cli(['--json', 'send', 'echo', '-s', 'no body']);
    expect(res.code).toBe(2);
    expect(res.stderr.trim().split('\n')).toHaveLength(1);
    expect(JSON.parse(res.stderr)).toMatchObject({
      code: 'AM_CLI_USAGE',
      message: expect.stringContaining('--body'),
    });
  });

  it('regression: inbox is newest first, --limit shows the newest, --before pages back', async () => {
    for (const n of [1, 2, 3])
      expect(
        (await agentApi('POST', routePath('send'), { to: 'bob', subject: `page ${n}`, body: 'x' })).status,
      ).toBe(200);
    const first = ok(await cli(['inbox', '--limit', '2'], { token: bobToken }));
    expect(first.indexOf('page 3')).toBeLessThan(first.indexOf('page 2'));
    expect(first).not.toContain('page 1');
    const next = /--before (\S+)/.exec(first)?.[1] ?? '';
    const older = ok(await cli(['inbox', '--limit', '2', '--before', next], { token: bobToken }));
    expect(older).toContain('page 1');
    expect(older).not.toContain('page 2');
  });

  it('regression: https:// against the Gateway says it speaks plain HTTP and which URL to use', async () => {
    const https = (server?.url ?? '').replace('http://', 'https://');
    const res = await run(process.execPath, [mainJs, '--url', https, 'status'], { env });
    expect(res.code).toBe(1);
    expect(res.stderr).toContain(`the server at ${https} does not speak TLS (https)`);
    expect(res.stderr).toContain(`try: use ${server?.url}`);
    expect(res.stderr).not.toMatch(/SSL routines|openssl/);
  });

  it('regression: one body limit, in --help and the error, enforced while stdin is read', async () => {
    const help = ok(await cli(['send', '--help']));
    expect(help).toContain('1,000,000 characters');
    const big = await cliBinary(['send', 'echo', '-s', 'big', '-b', '-'], {
      input: 'x'.repeat(MAIL_BODY_MAX_CHARS + 1),
    });
    expect(big.code).toBe(2);
    expect(big.stderr).toContain('longer than a mail body may be (1,000,000 characters)');
    const exact = await cli(['send', 'echo', '-s', 'fits', '-b', '-'], {
      input: '界'.repeat(MAIL_BODY_MAX_CHARS),
    });
    expect(exact.code, exact.stderr).toBe(0);
  });
});

describe('keys, tokens, presence, models (items 12, 14, 15)', () => {
  it('agent key list shows ids, names, created and last used; revoke by name; reset a token; local admin recovery', async () => {
    const admin = { token: adminToken };
    const list = ok(await cli(['agent', 'key', 'list'], admin));
    expect(list).toMatch(/^KEY ID\s+AGENT\s+CREATED\s+LAST USED\s+STATUS$/m);
    expect(list).toMatch(
      /^k_\S+\s+echo\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}\s+active$/m,
    );
    const spare = JSON.parse(ok(await cli(['--json', 'agent', 'key', 'spare'], admin))) as { key_id: string };
    expect(ok(await cli(['agent', 'key', 'revoke', 'spare'], admin))).toBe(`revoked key ${spare.key_id}\n`);
    expect(ok(await cli(['agent', 'key', 'list'], admin))).toMatch(
      new RegExp(`^${spare.key_id}\\s+spare.*revoked`, 'm'),
    );

    const reset = JSON.parse(ok(await cli(['--json', 'user', 'reset-token', 'bob'], admin))) as {
      token: string;
    };
    expect((await cli(['inbox'], { token: bobToken })).code).toBe(1);
    expect((await cli(['inbox'], { token: reset.token })).code).toBe(0);
    bobToken = reset.token;

    // The admin lost the token: recovery on the machine, through the data directory, while the Gateway runs.
    const local = await run(
      process.execPath,
      [mainJs, '--json', 'admin', 'reset-token', '--data-dir', dataDir],
      { env: { ...env, ...(await storeEnv(dataDir)) } },
    );
    expect(local.code, local.stderr).toBe(0);
    const fresh = (JSON.parse(local.stdout) as { token: string }).token;
    expect((await cli(['user', 'list'], { token: adminToken })).code).toBe(1);
    expect(ok(await cli(['user', 'list'], { token: fresh }))).toContain('alice');
    adminToken = fresh;
    const typo = await run(
      process.execPath,
      [mainJs, 'admin', 'reset-token', '--data-dir', join(tmp, 'nope')],
      { env },
    );
    expect(typo.code).toBe(2);
    expect(typo.stderr).toContain('holds no Gateway data');
  });

  it('regression: a bridge that stops is offline at once; status shows since when; a send says it is queued (H-3)', async () => {
    expect((await agentApi('POST', routePath('heartbeat'), {})).status).toBe(200);
    expect(ok(await cli(['status']))).toMatch(/^echo\s+pi\s+online/m);
    expect((await agentApi('POST', routePath('agentOffline'), { reason: 'shutdown' })).status).toBe(200);
    const status = ok(await cli(['status']));
    expect(status).toMatch(/^echo\s+pi\s+offline since \d{4}-\d{2}-\d{2} \d{2}:\d{2}\s+\d{4}/m);
    const sent = ok(await cli(['send', 'echo', '-s', 'while away', '-b', 'x']));
    expect(sent).toMatch(/^queued: echo is offline since \d{4}-\d{2}-\d{2} \d{2}:\d{2}; the mail waits/m);
    const json = JSON.parse(
      ok(await cli(['--json', 'send', 'echo', '-s', 'again', '-b', 'x'])),
    ) as SendMailResponse;
    expect(json.status === 'sent' && json.offline_recipients?.map((r) => r.name)).toEqual(['echo']);
    expect((await agentApi('POST', routePath('heartbeat'), {})).status).toBe(200);
  });

  it('regression: models shows catalogue and selection side by side, nothing stale before a report, and warns on a model no agent has', async () => {
    const admin = { token: adminToken };
    const before = ok(await cli(['models', 'opencode', 'set', 'scripted/nonexistent'], admin));
    expect(before).toContain('scripted/nonexistent  (not known yet: no agent reported its models)');
    expect(before).not.toContain('stale');
    expect(
      (await agentApi('POST', routePath('heartbeat'), { models: [{ key: 'scripted/echo' }] })).status,
    ).toBe(200);
    const set = ok(await cli(['models', 'pi', 'set', 'scripted/nonexistent', 'scripted/echo'], admin));
    expect(set).toContain('1. scripted/nonexistent  (no agent reports it: bridges skip it)');
    expect(set).toContain('2. scripted/echo  (echo)');
    expect(set).toMatch(/catalogue \(what the pi agents echo report\):\n\s+\* scripted\/echo/);
    expect(set).toContain('warning: no pi agent reports scripted/nonexistent');
  });

  it('regression: --mode on an existing session is applied for its owner and refused with the reason for others', async () => {
    const made = JSON.parse(ok(await cli(['--json', 'send', 'echo@/srv/m.new', '-s', 'm', '-b', 'x']))) as {
      address: string;
    };
    const changed = ok(await cli(['send', made.address, '-s', 'full now', '-b', 'x', '--mode', 'full']));
    expect(changed).toMatch(/mode full\)$/m);
    const refused = await cli(['send', made.address, '-s', 'plan', '-b', 'x', '--mode', 'plan'], {
      token: bobToken,
    });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /only its owner "alice" may change it[\s\S]*try: leave out --mode to keep mode full/,
    );
    // A refusal of what was asked, not of the token: no Gateway or token source lines (issue 20).
    expect(refused.stderr).not.toContain('the token from');
    expect(refused.stderr).not.toContain('the URL from');
  });
});
