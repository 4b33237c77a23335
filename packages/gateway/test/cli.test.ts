/**
 * The `agentmail` CLI against a real `agentmail serve` (a child process of the bundle, see
 * helpers/cli-build.ts) on a loopback port with a temporary SQLite data directory. The commands run
 * in this process (helpers/cli-in-process.ts); the ones that are about the binary — exit codes,
 * what reaches stdout and stderr — run it as a real child (`cliBinary`).
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import {
  type Contact,
  type InboxResponse,
  type MailResponse,
  type PermissionsResponse,
  routePath,
  type ThreadResponse,
} from '@agentmail/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli } from './helpers/cli-build.js';
import { runCliInProcess } from './helpers/cli-in-process.js';
import {
  callApi,
  cleanEnv,
  type EventStream,
  openEvents,
  PROCESS_TEST_TIMEOUT_MS,
  type RunResult,
  run,
  type ServeProcess,
  startServe,
} from './helpers/processes.js';

// Every test here runs a chain of Node processes (the CLI, `agentmail serve`); under load one
// start alone took 13–20 s, so the 30 s default once timed out "usage errors exit 2…" (8 CLI runs)
// in a full run. Each child is bounded by CHILD_TIMEOUT_MS and each wait by an event or an exit;
// the test and hook budgets below are only the backstop.
vi.setConfig({ testTimeout: PROCESS_TEST_TIMEOUT_MS, hookTimeout: PROCESS_TEST_TIMEOUT_MS });

let mainJs = '';
let removeBuild: () => Promise<void> = async () => {};
let tmp = '';
let dataDir = '';
let configPath = '';
let env: NodeJS.ProcessEnv = {};
let server: ServeProcess | undefined;
let adminToken = '';
let aliceToken = '';
let piKey = '';
let piEvents: EventStream | undefined;

type CliOptions = { input?: string; extraEnv?: Record<string, string> };

/** Run the CLI (in this process) with the test's environment plus `extraEnv`. */
function cli(args: readonly string[], options: CliOptions = {}) {
  return runCliInProcess(args, {
    env: { ...env, ...options.extraEnv },
    ...(options.input === undefined ? {} : { input: options.input }),
  });
}

/** Run the built binary as a child process, like {@link cli}. */
function cliBinary(args: readonly string[], options: CliOptions = {}) {
  return run(process.execPath, [mainJs, ...args], {
    env: { ...env, ...options.extraEnv },
    ...(options.input === undefined ? {} : { input: options.input }),
  });
}

function json<T>(result: RunResult): T {
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  return JSON.parse(result.stdout) as T;
}

beforeAll(async () => {
  const built = await buildCli('cli-test');
  mainJs = built.mainJs;
  removeBuild = built.remove;
  tmp = await mkdtemp(join(tmpdir(), 'agentmail-cli-'));
  dataDir = join(tmp, 'data');
  configPath = join(tmp, 'home', '.config', 'agentmail', 'config.json');
  // HOME and AGENTMAIL_CONFIG point into the temp dir: the test never touches the real config.
  env = cleanEnv({ HOME: join(tmp, 'home'), AGENTMAIL_CONFIG: configPath });
}, 60_000);

afterAll(async () => {
  piEvents?.close();
  await server?.stop();
  await removeBuild();
  if (tmp !== '') await rm(tmp, { recursive: true, force: true });
});

describe('agentmail serve', () => {
  it('prints the admin token on the first start only, and reuses the data directory', async () => {
    const args = ['--data-dir', dataDir, '--port', '0', '--host', '127.0.0.1', '--log-level', 'warn'];
    const first = await startServe(mainJs, args, env);
    const tokenLines = first.startupLines.filter((l) => /admin token/i.test(l));
    expect(tokenLines).toHaveLength(1);
    adminToken = /admin token[^:]*:\s*(\S+)/i.exec(tokenLines[0] ?? '')?.[1] ?? '';
    expect(adminToken).not.toBe('');
    expect(first.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    expect(await first.stop()).toBe(0);

    server = await startServe(mainJs, args, env);
    expect(server.startupLines.join('\n')).not.toMatch(/admin token/i);
    expect(server.startupLines.join('\n')).not.toContain(adminToken);
    // Same data directory: the first start's admin token still works.
    const users = await cliBinary(['--url', server.url, '--token', adminToken, 'user', 'list', '--json']);
    expect(json<{ users: { name: string; admin: boolean }[] }>(users).users.some((u) => u.admin)).toBe(true);
  });

  it('--json prints the admin token and the URL as JSON lines', async () => {
    const dir = join(tmp, 'data-json');
    const args = ['--data-dir', dir, '--port', '0', '--log-level', 'silent', '--json'];
    const first = await startServe(mainJs, args, env);
    const lines = first.startupLines.map((l) => JSON.parse(l) as Record<string, string>);
    expect(lines.map((l) => l.event)).toEqual(['admin_token', 'listening']);
    expect(lines[0]?.admin_token).toMatch(/\S{10,}/);
    expect(lines[1]).toMatchObject({ url: first.url, data_dir: dir });
    expect(await first.stop()).toBe(0);
    const second = await startServe(mainJs, args, env);
    expect(second.startupLines.map((l) => (JSON.parse(l) as { event: string }).event)).toEqual(['listening']);
    expect(await second.stop()).toBe(0);
  });

  it('AGENTMAIL_LOCALE sets the language of the mails the Gateway writes', async () => {
    const dir = join(tmp, 'data-zh');
    const args = ['--data-dir', dir, '--port', '0', '--log-level', 'silent', '--json'];
    const zh = await startServe(mainJs, args, { ...env, AGENTMAIL_LOCALE: 'zh-CN' });
    try {
      const admin = (JSON.parse(zh.startupLines[0] ?? '{}') as { admin_token: string }).admin_token;
      const carol = await callApi<{ token: string }>(zh.url, 'POST', routePath('adminUsers'), admin, {
        name: 'carol',
      });
      const key = await callApi<{ key: string }>(zh.url, 'POST', routePath('adminIssueAgentKey'), admin, {
        agent_name: 'zhi',
      });
      await callApi(zh.url, 'POST', routePath('register'), key.body.key, { name: 'zhi', platform: 'pi' });
      const task = await callApi<{ session_id: string }>(
        zh.url,
        'POST',
        routePath('meSend'),
        carol.body.token,
        {
          to: 'zhi@/w.new',
          subject: 'task',
          body: 'x',
        },
      );
      const asked = await callApi<{ mail_id: string }>(
        zh.url,
        'POST',
        routePath('permissionRequest'),
        key.body.key,
        {
          question: 'Run tests?',
          options: ['approve', 'deny'],
          session_id: task.body.session_id,
          relay_key: 'zh-1',
          kind: 'approval',
        },
      );
      expect(asked.status).toBe(200);
      const mail = await callApi<MailResponse>(
        zh.url,
        'GET',
        routePath('meMail', { id: asked.body.mail_id }),
        carol.body.token,
      );
      expect(mail.body.mail.subject).toBe('zhi 请求许可：Run tests?');
    } finally {
      expect(await zh.stop()).toBe(0);
    }
  });

  it('regression: SIGTERM sent the moment "listening" is printed still closes cleanly (exit 0)', async () => {
    // The stop handlers were once installed after the line was printed, so a fast supervisor's
    // SIGTERM hit the default action (killed by signal, nothing closed).
    const dir = join(tmp, 'data-race');
    for (let i = 0; i < 4; i++) {
      const child = spawn(
        process.execPath,
        [mainJs, 'serve', '--data-dir', dir, '--port', '0', '--log-level', 'silent'],
        {
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.setEncoding('utf8').on('data', (text: string) => {
        stderr += text;
      });
      // Whole lines, not chunks: a chunk may end in the middle of the line.
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.includes('listening on')) child.kill('SIGTERM');
      });
      const [code, signal] = await new Promise<[number | null, string | null]>((done) =>
        child.once('exit', (c, s) => done([c, s])),
      );
      expect({ code, signal }, `run ${i}, stderr: ${stderr}`).toEqual({ code: 0, signal: null });
    }
  });
});

describe('agentmail admin commands', () => {
  it('user add prints the token once; --json parses', async () => {
    const url = server!.url;
    const human = await cli(['--url', url, '--token', adminToken, 'user', 'add', 'bob']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/created user bob/);
    expect(human.stdout).toMatch(/token \(shown once/);

    const created = json<{ name: string; admin: boolean; token: string }>(
      await cli(['--url', url, '--token', adminToken, '--json', 'user', 'add', 'alice']),
    );
    expect(created).toMatchObject({ name: 'alice', admin: false });
    aliceToken = created.token;
    expect(aliceToken.length).toBeGreaterThan(10);
  });

  it('regression (issue 20): a name or address the Gateway refuses gets a try: line (agent key, user add, send)', async () => {
    const admin = ['--url', server!.url, '--token', adminToken];
    for (const args of [
      ['agent', 'key', 'Bad Name'],
      ['user', 'add', 'Bad Name'],
    ]) {
      const res = await cli([...admin, ...args]);
      expect(res.code, res.stderr).not.toBe(0);
      expect(res.stderr).toMatch(
        /\n {2}try: a name of letters, digits, "_", "-" and "\." .*e\.g\. pi-laptop/,
      );
    }
    const badTo = await cli([...admin, 'send', 'pi@rel', '-s', 's', '-b', 'b']);
    expect(badTo.code).not.toBe(0);
    expect(badTo.stderr).toMatch(/\n {2}try: /);
    // A refusal the Gateway explains keeps the Gateway's own fix, not a generic one.
    const toPerson = await cli([...admin, 'send', 'alice', '-s', 's', '-b', 'b']);
    expect(toPerson.code).not.toBe(0);
    expect(toPerson.stderr).toContain('try: address an agent, or reply to a mail of an agent session');
    expect(toPerson.stderr).not.toContain('again as the message says');
  });

  it('user add needs an admin token: a person is refused with exit 1 and the server reason', async () => {
    const res = await cliBinary(['--url', server!.url, '--token', aliceToken, 'user', 'add', 'mallory']);
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(
      /user "alice" is not an admin: this command is for admins\n(?: {2}.*\n)* {2}try: run it with an admin's token/,
    );
    // Whose token it was: the one of --token.
    expect(res.stderr).toContain('the token from --token');
  });

  it('agent key issues a key bound to the name, and --revoke revokes it', async () => {
    const url = server!.url;
    const issued = json<{ key_id: string; agent_name: string; key: string }>(
      await cli(['--url', url, '--token', adminToken, '--json', 'agent', 'key', 'pi']),
    );
    expect(issued.agent_name).toBe('pi');
    piKey = issued.key;
    const reg = await callApi(url, 'POST', routePath('register'), piKey, { name: 'pi', platform: 'pi' });
    expect(reg.status).toBe(200);
    piEvents = await openEvents(url, routePath('events'), piKey);

    const spare = json<{ key_id: string; key: string }>(
      await cli(['--url', url, '--token', adminToken, '--json', 'agent', 'key', 'pi', '--another']),
    );
    const human = await cli(['--url', url, '--token', adminToken, 'agent', 'key', '--revoke', spare.key_id]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`revoked key ${spare.key_id}`);
    const refused = await callApi(url, 'POST', routePath('register'), spare.key, {
      name: 'pi',
      platform: 'pi',
    });
    expect(refused.status).toBe(401);
  });

  it('regression (issue 20): a repeated `agent key <name>` issues nothing and says how to revoke or get another; --another issues a second key', async () => {
    const url = server!.url;
    const admin = ['--url', url, '--token', adminToken];
    const first = json<{
      key_id: string;
      key: string;
      agent_name: string;
      another: boolean;
      active_keys: number;
    }>(await cli([...admin, '--json', 'agent', 'key', 'twice']));
    expect(first).toMatchObject({ agent_name: 'twice', another: false, active_keys: 1 });
    expect(first.key).toMatch(/^amk_/);
    const keysOf = async () =>
      (
        await callApi<{ keys: { key_id: string; agent_name: string; revoked_at: string | null }[] }>(
          url,
          'GET',
          routePath('adminAgentKeys'),
          adminToken,
        )
      ).body.keys.filter((k) => k.agent_name === 'twice' && k.revoked_at === null);

    // The person's words: what is in the way, the two ways on, exit 1, nothing issued.
    const again = await cliBinary([...admin, 'agent', 'key', 'twice']);
    expect(again.code).toBe(1);
    expect(again.stdout).toBe('');
    expect(again.stderr).toContain(
      `agent twice already has an active key (${first.key_id}); no key was issued`,
    );
    expect(again.stderr).toContain(
      'try: lost it? revoke it, then issue a new one: agentmail agent key revoke twice',
    );
    expect(again.stderr).toContain('another key beside it: agentmail agent key twice --another');
    const asJson = await cli([...admin, '--json', 'agent', 'key', 'twice']);
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stderr)).toMatchObject({
      code: 'AM_CLI_AGENT_KEY_ACTIVE',
      agent: 'twice',
      active_keys: 1,
      key_ids: [first.key_id],
    });
    expect((await keysOf()).map((k) => k.key_id)).toEqual([first.key_id]);

    const second = json<{ key_id: string; another: boolean; active_keys: number }>(
      await cli([...admin, '--json', 'agent', 'key', 'twice', '--another']),
    );
    expect(second).toMatchObject({ another: true, active_keys: 2 });
    const words = await cli([...admin, 'agent', 'key', 'revoke', 'twice']);
    expect(words.code).toBe(0);
    expect(await keysOf()).toEqual([]);
    // Every key revoked: the next one is a first key again.
    const fresh = json<{ another: boolean; active_keys: number }>(
      await cli([...admin, '--json', 'agent', 'key', 'twice']),
    );
    expect(fresh).toMatchObject({ another: false, active_keys: 1 });
  });

  it('models shows and sets the ordered allowed models of a platform (G-26)', async () => {
    const url = server!.url;
    const set = await cli([
      '--url',
      url,
      '--token',
      adminToken,
      'models',
      'pi',
      'set',
      'openai/gpt-5',
      'x/y/z',
    ]);
    expect(set.code).toBe(0);
    expect(set.stdout).toMatch(/1\. openai\/gpt-5[\s\S]*2\. x\/y\/z/);
    const shown = json<{ platform: string; models: { key: string }[] }>(
      await cli(['--url', url, '--token', adminToken, '--json', 'models', 'pi']),
    );
    expect(shown.models.map((m) => m.key)).toEqual(['openai/gpt-5', 'x/y/z']);
    const bad = await cli(['--url', url, '--token', adminToken, 'models', 'pi', 'add', 'a/b']);
    expect(bad.code).toBe(2);
  });
});

describe('agentmail login and config', () => {
  it('login checks the token and writes the config file with mode 0600; later commands use it', async () => {
    const wrong = await cli(['login', '--url', server!.url, '--token', 'not-a-token']);
    expect(wrong.code).toBe(1);
    await expect(stat(configPath)).rejects.toThrow();

    const res = await cli(['login', '--url', server!.url, '--token', aliceToken]);
    expect(res.code).toBe(0);
    const info = await stat(configPath);
    expect(info.mode & 0o777).toBe(0o600);
    expect(JSON.parse(await readFile(configPath, 'utf8'))).toEqual({ url: server!.url, token: aliceToken });

    const inbox = await cli(['inbox']);
    expect(inbox.code).toBe(0);
    expect(inbox.stdout).toContain('no unread mail');
  });

  it('environment beats the config file, flags beat the environment', async () => {
    const viaEnv = await cli(['inbox'], { extraEnv: { AGENTMAIL_TOKEN: 'bogus' } });
    expect(viaEnv.code).toBe(1);
    expect(viaEnv.stderr).toContain(
      `the Gateway at ${server!.url} does not accept your token (unknown user token)`,
    );
    const viaFlag = await cli(['--token', aliceToken, 'inbox'], { extraEnv: { AGENTMAIL_TOKEN: 'bogus' } });
    expect(viaFlag.code).toBe(0);
    const badUrl = await cli(['inbox'], { extraEnv: { AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:9' } });
    expect(badUrl.code).toBe(1);
    expect(badUrl.stderr).toMatch(/nothing is listening at http:\/\/127\.0\.0\.1:9/);
  });

  it('regression (issue 20): a connection or token error names the Gateway URL and where the URL and the token came from', async () => {
    const wrongPort = join(tmp, 'wrong-port.json');
    await writeFile(wrongPort, JSON.stringify({ url: 'http://127.0.0.1:9', token: aliceToken }));
    const down = await cliBinary(['inbox'], { extraEnv: { AGENTMAIL_CONFIG: wrongPort } });
    expect(down.code).toBe(1);
    expect(down.stderr).toContain('nothing is listening at http://127.0.0.1:9');
    expect(down.stderr).toContain(`Gateway http://127.0.0.1:9, the URL from the config file ${wrongPort}`);

    const wrongToken = join(tmp, 'wrong-token.json');
    await writeFile(wrongToken, JSON.stringify({ url: server!.url, token: 'amu_not_a_token' }));
    const refused = await cli(['inbox'], { extraEnv: { AGENTMAIL_CONFIG: wrongToken } });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(`the Gateway at ${server!.url} does not accept your token`);
    expect(refused.stderr).toContain(`Gateway ${server!.url}, the URL from the config file ${wrongToken}`);
    expect(refused.stderr).toContain(`the token from the config file ${wrongToken}`);
    const asJson = await cli(['--json', 'inbox'], { extraEnv: { AGENTMAIL_CONFIG: wrongToken } });
    expect(JSON.parse(asJson.stderr)).toMatchObject({
      gateway_url: server!.url,
      url_from: `the config file ${wrongToken}`,
      token_from: `the config file ${wrongToken}`,
    });

    const flags = await cli(['--url', 'http://127.0.0.1:9', 'inbox'], {
      extraEnv: { AGENTMAIL_CONFIG: wrongToken },
    });
    expect(flags.stderr).toContain('Gateway http://127.0.0.1:9, the URL from --url');
    const env = await cli(['status'], {
      extraEnv: { AGENTMAIL_CONFIG: wrongToken, AGENTMAIL_GATEWAY_URL: 'http://127.0.0.1:9' },
    });
    expect(env.stderr).toContain('the URL from AGENTMAIL_GATEWAY_URL');
    // No token anywhere: where the CLI looked.
    const none = await cli(['inbox'], { extraEnv: { AGENTMAIL_CONFIG: join(tmp, 'absent.json') } });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain(
      `no token in --token or AGENTMAIL_TOKEN, and the config file ${join(tmp, 'absent.json')} does not exist`,
    );
  });
});

describe('agentmail mail commands', () => {
  let sentId = '';
  let replyId = '';
  let sessionId = '';

  it('send delivers to the agent: its inbox and its event stream show the mail', async () => {
    const res = await cli(['send', 'pi@/srv/app.new', '--subject', 'Fix imports', '--body', '-'], {
      input: 'please fix the import paths\n',
    });
    expect(res.code).toBe(0);
    const [first, ...rest] = res.stdout.trim().split('\n');
    const m = /^sent (\S+) to (\S+) \(session (\S+), mode workspace\)$/.exec(first ?? '');
    // pi has an event stream open but never sent a heartbeat: the mail is queued for it (H-3).
    expect(rest).toEqual(['queued: pi has not connected yet; the mail waits for it']);
    expect(m).not.toBeNull();
    sentId = m?.[1] ?? '';
    expect(m?.[2]).not.toContain('.new');
    const event = await piEvents!.waitFor(
      (e) => e.event === 'new_mail' && (e.data as { mail_id: string }).mail_id === sentId,
    );
    expect(event.data).toMatchObject({ from_name: 'alice', from_human: true, subject: 'Fix imports' });
    const inbox = await callApi<InboxResponse>(
      server!.url,
      'GET',
      `${routePath('inbox')}?status=unread`,
      piKey,
    );
    const mail = inbox.body.mails.find((x) => x.id === sentId);
    expect(mail?.subject).toBe('Fix imports');
    sessionId = mail?.session_id ?? '';
    const full = await callApi<MailResponse>(server!.url, 'GET', routePath('mail', { id: sentId }), piKey);
    expect(full.body.mail.body).toBe('please fix the import paths\n');
  });

  it('inbox shows the agent reply; --json parses; read marks it read; thread shows both', async () => {
    const sent = await callApi<{ mail_id: string }>(server!.url, 'POST', routePath('send'), piKey, {
      to: 'alice',
      subject: 'Re: Fix imports',
      body: 'done: 3 files changed',
      reply_to: sentId,
    });
    expect(sent.status).toBe(200);
    replyId = sent.body.mail_id;

    const human = await cli(['inbox']);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`\\* ${replyId}.*pi \\(agent\\).*Re: Fix imports`));
    expect(human.stdout).toContain('1 unread');

    const inbox = json<InboxResponse>(await cli(['--json', 'inbox']));
    expect(inbox.mails.map((x) => x.id)).toEqual([replyId]);
    expect(inbox.mails[0]).toMatchObject({ from_name: 'pi', from_human: false, in_reply_to: sentId });

    const read = await cli(['read', replyId]);
    expect(read.code).toBe(0);
    expect(read.stdout).toContain('done: 3 files changed');
    expect(read.stdout).toMatch(/From:\s+pi \(agent\)/);
    expect((await cli(['inbox'])).stdout).toContain('no unread mail');
    const all = json<InboxResponse>(await cli(['--json', 'inbox', '--all', '--limit', '5']));
    expect(all.mails.find((x) => x.id === replyId)?.status).toBe('read');

    const thread = json<ThreadResponse>(await cli(['--json', 'thread', replyId]));
    expect(thread.mails.map((x) => x.id)).toEqual([sentId, replyId]);
    expect(thread.session_id).toBe(sessionId);
    const threadText = await cli(['thread', sentId]);
    expect(threadText.stdout).toMatch(/please fix the import paths[\s\S]*done: 3 files changed/);
  });

  it('send --wait shows the answer and, while it waits, the requests of its session; a failure mail and no answer in time exit 1', async () => {
    const arrived = (subject: string) =>
      piEvents!.waitFor((e) => e.event === 'new_mail' && (e.data as { subject: string }).subject === subject);
    const waiting = cli([
      'send',
      'pi@/srv/app.new',
      '--subject',
      'Wait for me',
      '--body',
      'run it',
      '--wait',
      '60',
    ]);
    const task = (await arrived('Wait for me')).data as { mail_id: string; session_id: string };
    // A request of the session (its text with an escape sequence: shown, never raw) and the answer;
    // whether the CLI's stream opens before or after them, both are shown (the open reads them).
    const asked = await callApi<{ request_id: string }>(
      server!.url,
      'POST',
      routePath('permissionRequest'),
      piKey,
      {
        session_id: task.session_id,
        relay_key: 'wait-1',
        kind: 'approval',
        question: 'Run \u001b[31mmake\u001b[0m?',
        options: [],
      },
    );
    expect(asked.status).toBe(200);
    const reply = await callApi<{ mail_id: string }>(server!.url, 'POST', routePath('send'), piKey, {
      to: 'alice',
      subject: 'Re: Wait for me',
      body: 'made it',
      reply_to: task.mail_id,
    });
    expect(reply.status).toBe(200);
    const done = await waiting;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stdout).toMatch(new RegExp(`^sent ${task.mail_id} to `));
    expect(done.stdout).toContain('made it');
    expect(done.stderr).toContain(`pi asks: Run`);
    expect(done.stderr).toContain(`agentmail approve ${asked.body.request_id}`);
    expect(done.stderr).not.toContain('\u001b');
    expect(done.stderr.match(/pi asks/g), 'each request once').toHaveLength(1);
    const unread = json<InboxResponse>(await cli(['--json', 'inbox']));
    expect(
      unread.mails.map((m) => m.id),
      'the answer shown is read',
    ).not.toContain(reply.body.mail_id);
    const settled = await cli(['deny', asked.body.request_id]);
    expect(settled.code, 'the request is settled for the tests after').toBe(0);

    // The bridge's failure mail as the answer: shown, then exit 1.
    const failing = cli([
      '--json',
      'send',
      'pi@/srv/app.new',
      '--subject',
      'Fail me',
      '--body',
      'x',
      '--wait',
      '60',
    ]);
    const failed = (await arrived('Fail me')).data as { mail_id: string };
    await callApi(server!.url, 'POST', routePath('send'), piKey, {
      to: 'alice',
      subject: 'Could not process: Fail me',
      body: 'the model failed',
      reply_to: failed.mail_id,
      relay: 'summary',
      relay_key: `model-failure:${failed.mail_id}`,
    });
    const failure = await failing;
    expect(failure.code).toBe(1);
    expect(
      (JSON.parse(failure.stdout) as { answer: { body: string; failure: boolean } }).answer,
    ).toMatchObject({
      body: 'the model failed',
      failure: true,
    });
    expect(JSON.parse(failure.stderr)).toMatchObject({ code: 'AM_CLI_ANSWER_FAILED' });

    const silent = await cli([
      '--json',
      'send',
      'pi@/srv/app.new',
      '--subject',
      'Nobody',
      '--body',
      'x',
      '--wait',
      '1',
    ]);
    expect(silent.code).toBe(1);
    expect(JSON.parse(silent.stderr)).toMatchObject({ code: 'AM_CLI_WAIT_TIMEOUT' });
    const usage = await cli(['send', 'pi@/srv/app.new', '--body', 'x', '--wait', 'soon']);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--wait');
  });

  it('send --attach uploads the files and the agent sees them on the mail', async () => {
    const file = join(tmp, 'notes.txt');
    await writeFile(file, 'attachment body');
    const res = json<{ status: string; mail_id: string; attachments: { id: string; filename: string }[] }>(
      await cli(['--json', 'send', 'pi', '--subject', 'with file', '--body', 'see file', '--attach', file]),
    );
    expect(res.status).toBe('sent');
    expect(res.attachments.map((a) => a.filename)).toEqual(['notes.txt']);
    const mail = await callApi<MailResponse>(
      server!.url,
      'GET',
      routePath('mail', { id: res.mail_id }),
      piKey,
    );
    expect(mail.body.mail.attachments.map((a) => a.id)).toEqual(res.attachments.map((a) => a.id));
    const missing = await cli(['send', 'pi', '-s', 'x', '-b', 'y', '--attach', join(tmp, 'nope.bin')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain('nope.bin');
  });

  it("regression (issue 20): send without --subject gets the body's first line as its subject, as every interface stores it", async () => {
    const mailOf = async (id: string) =>
      (await callApi<MailResponse>(server!.url, 'GET', routePath('mail', { id }), piKey)).body.mail;
    const sent = json<{ mail_id: string }>(
      await cli(['--json', 'send', 'pi', '--body', '-'], {
        input: '\n   Deploy the fix to staging  \nthen tell me\n',
      }),
    );
    expect((await mailOf(sent.mail_id)).subject).toBe('Deploy the fix to staging');
    const blank = json<{ mail_id: string }>(
      await cli(['--json', 'send', 'pi', '-s', '   ', '-b', 'one line']),
    );
    expect((await mailOf(blank.mail_id)).subject).toBe('one line');
  });

  it('regression (issue 20): --subject over 500 characters and a body over the limit say what to do; --body-file reads a file', async () => {
    const long = await cliBinary(['send', 'pi', '-s', 'x'.repeat(501), '-b', 'y']);
    expect(long.code).toBe(2);
    expect(long.stderr).toContain('--subject is 501 characters long; a subject may have at most 500');
    expect(long.stderr).toMatch(/\n {2}try: give a short --subject and put the rest in the body/);

    const file = join(tmp, 'report.md');
    await writeFile(file, '# Weekly report\n\nall green\n');
    const fromFile = json<{ mail_id: string }>(await cli(['--json', 'send', 'pi', '--body-file', file]));
    const mail = (
      await callApi<MailResponse>(server!.url, 'GET', routePath('mail', { id: fromFile.mail_id }), piKey)
    ).body.mail;
    expect(mail).toMatchObject({ subject: '# Weekly report', body: '# Weekly report\n\nall green\n' });

    const big = join(tmp, 'big.txt');
    await writeFile(big, 'z'.repeat(1_000_001));
    const tooBig = await cli(['send', 'pi', '-s', 's', '--body-file', big]);
    expect(tooBig.code).toBe(2);
    // The limit and the size it has; not told to use the option it already uses (issue 20).
    expect(tooBig.stderr).toContain(
      `--body-file "${big}" is 1,000,001 bytes, longer than a mail body may be (1,000,000 characters)`,
    );
    expect(tooBig.stderr).not.toMatch(/--body-file <path>|--body -/);
    const tooBigStdin = await cli(['send', 'pi', '-s', 's', '--body', '-'], { input: 'z'.repeat(1_000_001) });
    expect(tooBigStdin.code).toBe(2);
    expect(tooBigStdin.stderr).toContain(
      'the body read from stdin is over 1,000,000 characters (reading stopped there), longer than a mail body may be (1,000,000 characters)',
    );
    expect(tooBigStdin.stderr).not.toMatch(/--body-file <path>|--body -/);
    // A body given on the command line: the error points to the file and stdin ways.
    const tooBigArg = await cli(['send', 'pi', '-s', 's', '--body', 'z'.repeat(1_000_001)]);
    expect(tooBigArg.code).toBe(2);
    expect(tooBigArg.stderr).toMatch(/try: .*--body-file <path>, or --body - < <path> \(stdin\)/);
    expect(tooBigArg.stderr).toContain('--body is 1,000,001 characters, longer than a mail body may be');

    const missing = await cli(['send', 'pi', '--body-file', join(tmp, 'nope.md')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toContain(`cannot read --body-file "${join(tmp, 'nope.md')}": no such file`);
    const both = await cli(['send', 'pi', '--body', 'x', '--body-file', file]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('give the body once: --body or --body-file, not both');
  });

  it('permissions lists pending requests; approve, deny and answer decide them (G-38, G-21)', async () => {
    const ask = async (relayKey: string, extra: Record<string, unknown>): Promise<string> => {
      const res = await callApi<{ status: string; request_id: string; asked: string }>(
        server!.url,
        'POST',
        routePath('permissionRequest'),
        piKey,
        { session_id: sessionId, relay_key: relayKey, context: 'bash: rm -rf build', ...extra },
      );
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'pending', asked: 'alice' });
      return res.body.request_id;
    };
    const decision = (relayKey: string) =>
      piEvents!.waitFor(
        (e) => e.event === 'permission_decision' && (e.data as { relay_key: string }).relay_key === relayKey,
      );

    const approval = await ask('perm-1', { kind: 'approval', question: 'Run rm -rf build?', options: [] });
    const listed = await cli(['permissions']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(approval);
    expect(listed.stdout).toContain('Run rm -rf build?');
    const pending = json<PermissionsResponse>(await cli(['--json', 'permissions']));
    expect(pending.permissions.map((p) => p.id)).toEqual([approval]);

    const approved = await cli(['approve', approval, '--always', '--note', 'fine this once']);
    expect(approved.code).toBe(0);
    expect(approved.stdout.trim()).toBe(`${approval}: approve_always`);
    expect((await decision('perm-1')).data).toMatchObject({
      decision: 'approve_always',
      note: 'fine this once',
    });
    expect((await cli(['permissions'])).stdout).toContain('nothing waiting for you');

    const second = await ask('perm-2', { kind: 'approval', question: 'Write /etc/hosts?', options: [] });
    const denied = json<{ decision: string }>(await cli(['--json', 'deny', second, '--note', 'use a copy']));
    expect(denied.decision).toBe('deny');
    expect((await decision('perm-2')).data).toMatchObject({ decision: 'deny', note: 'use a copy' });

    const question = await ask('perm-3', {
      kind: 'question',
      question: 'Which DB?',
      options: ['SQLite', 'Postgres'],
    });
    const asApproval = await cli(['approve', question]);
    expect(asApproval.code, 'approve on a question says what to run instead').toBe(2);
    expect(asApproval.stderr).toContain(
      `agentmail answer ${question} <option>…, or agentmail deny ${question}`,
    );
    const empty = await cli(['answer', question, '  ']);
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/the answer is empty[\s\S]*agentmail deny <id>/);
    const unknown = await cli(['answer', question, 'MySQL']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/"MySQL" is not an option[\s\S]*"SQLite", "Postgres"/);
    // A label as typed: any case, spaces around it.
    const answered = await cli(['answer', question, ' postgres ']);
    expect(answered.code).toBe(0);
    expect((await decision('perm-3')).data).toMatchObject({ decision: 'answered', answers: ['Postgres'] });

    const free = await ask('perm-4', { kind: 'question', question: 'Name the branch?', options: [] });
    const waiting = await cli(['requests']);
    expect(waiting.stdout, '`agentmail requests` lists the open question').toContain('Name the branch?');
    expect(waiting.stdout).toContain(`agentmail answer ${free} <free text>  |  agentmail deny ${free}`);
    expect((await cli(['answer', free, 'fix', 'imports', 'now'])).code).toBe(0);
    expect((await decision('perm-4')).data).toMatchObject({ answers: ['fix imports now'] });

    // A question whose asking call stopped waiting (its turn ended, SPEC P-10): shown as no longer waiting,
    // with no command to answer it; answering anyway says so.
    const gone = await ask('perm-5', { kind: 'question', question: 'Still needed?', options: ['yes', 'no'] });
    const withdrawn = await callApi(
      server!.url,
      'POST',
      routePath('permissionWithdraw', { id: gone }),
      piKey,
      { reason: 'timeout' },
    );
    expect(withdrawn.status).toBe(200);
    const history = (await cli(['requests', '--all'])).stdout;
    const block = history.split('\n\n').find((b) => b.includes(gone)) ?? '';
    expect(block).toContain('[no longer waiting: it timed out]');
    expect(block).not.toContain('agentmail answer');
    const late = await cli(['answer', gone, 'yes']);
    expect(late.code).toBe(1);
    expect(late.stderr).toMatch(/no longer waiting/);

    const all = json<PermissionsResponse>(await cli(['--json', 'permissions', '--all']));
    expect(
      all.permissions
        .filter((p) => p.status === 'decided' && p.session_id === sessionId)
        .map((p) => p.id)
        .sort(),
    ).toEqual([approval, second, question, free].sort());
    const again = await cli(['approve', approval]);
    expect(again.code).toBe(1);
  });
});

describe('agentmail status and errors', () => {
  it('status reports the Gateway health', async () => {
    const res = await cli(['status']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/: ok/);
    expect(json<{ status: string }>(await cli(['--json', 'status'])).status).toBe('ok');
  });

  it('status lists the agents, online or offline, with their last heartbeat (GET /me/contacts)', async () => {
    const key = json<{ key: string }>(
      await cli(['--url', server!.url, '--token', adminToken, '--json', 'agent', 'key', 'idle']),
    ).key;
    expect(
      (await callApi(server!.url, 'POST', routePath('register'), key, { name: 'idle', platform: 'opencode' }))
        .status,
    ).toBe(200);
    const beat = await callApi(server!.url, 'POST', routePath('heartbeat'), piKey, {
      sandbox: 'unverified: bubblewrap (bwrap) not found on PATH',
    });
    expect(beat.status).toBe(200);

    const res = await cli(['status']);
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/: ok/);
    expect(res.stdout).toContain('agents: 1 of 2 online');
    expect(res.stdout).toMatch(/^idle\s+opencode\s+never connected\s+never\s+-$/m);
    // The sandbox state its bridge reported (SPEC P-12), why it is not verified included.
    expect(res.stdout).toMatch(
      /^pi\s+pi\s+online\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}\s+unverified: bubblewrap \(bwrap\) not found on PATH$/m,
    );

    const asJson = json<{ status: string; agents: Contact[] }>(await cli(['--json', 'status']));
    expect(asJson.status).toBe('ok');
    expect(asJson.agents.map((a) => [a.name, a.online, a.last_seen === null])).toEqual([
      ['idle', false, true],
      ['pi', true, false],
    ]);

    // Without a token the Gateway's health is still shown, with a hint instead of the agents.
    const anonymous = await cli(['--url', server!.url, 'status'], {
      extraEnv: { AGENTMAIL_CONFIG: join(tmp, 'none.json') },
    });
    expect(anonymous.stderr).toBe('');
    expect(anonymous.code).toBe(0);
    expect(anonymous.stdout).toMatch(/: ok/);
    expect(anonymous.stdout).toContain('agents: log in');
  });

  it('usage errors exit 2; server refusals exit 1 and print error, detail and suggestion', async () => {
    // The binary: its process exit codes (2, 1) and what goes to stderr.
    const missing = await cliBinary(['send', 'pi', '--subject', 'no body']);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/--body <text>, --body - \(stdin\) or --body-file <path>/);
    expect((await cli(['inbox', '--limit', 'lots'])).code).toBe(2);
    expect((await cli(['no-such-command'])).code).toBe(2);
    const noToken = await cli(['inbox'], { extraEnv: { AGENTMAIL_CONFIG: join(tmp, 'none.json') } });
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toMatch(/needs your user token[\s\S]*agentmail login/);

    const notFound = await cliBinary(['read', 'm_does_not_exist']);
    expect(notFound.code).toBe(1);
    expect(notFound.stderr).toMatch(/mail "m_does_not_exist" not found\n {2}try: .*agentmail inbox --all/);
    const unknownAlias = await cli(['send', 'pi@/srv/app.no-such-alias', '-s', 'x', '-b', 'y']);
    expect(unknownAlias.code).toBe(1);
    expect(unknownAlias.stderr).toContain('no-such-alias');
    const asJson = await cli(['--json', 'read', 'm_does_not_exist']);
    expect(asJson.code).toBe(1);
    expect(JSON.parse(asJson.stderr)).toMatchObject({ code: 'AM_CLI_SERVER_REFUSED', status: 404 });
  });
});
