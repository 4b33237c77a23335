/**
 * SPEC G-40: a client needs no code of ours. Runs examples/remote-agent/remote_agent.py (Python 3,
 * standard library only) against a real `agentmail serve` on loopback and checks that it
 * registers, heartbeats, holds the SSE stream across a server restart (Last-Event-ID), reads its
 * inbox and replies.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { type ContactsResponse, type InboxResponse, routePath } from '@agentmail/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, GATEWAY_ROOT } from './helpers/cli-build.js';
import { callApi, cleanEnv, type ServeProcess, spawnWatched, startServe } from './helpers/processes.js';

const SCRIPT = resolve(GATEWAY_ROOT, '../../examples/remote-agent/remote_agent.py');

let mainJs = '';
let removeBuild: () => Promise<void> = async () => {};
let tmp = '';
let server: ServeProcess | undefined;

beforeAll(async () => {
  const built = await buildCli('remote-agent-test');
  mainJs = built.mainJs;
  removeBuild = built.remove;
  tmp = await mkdtemp(join(tmpdir(), 'agentmail-remote-'));
}, 60_000);

afterAll(async () => {
  await server?.stop();
  await removeBuild();
  if (tmp !== '') await rm(tmp, { recursive: true, force: true });
});

describe('examples/remote-agent (G-40)', () => {
  it('registers, heartbeats, answers mail from its inbox and over SSE, and survives a restart', async () => {
    const env = cleanEnv({ HOME: tmp });
    const dataDir = join(tmp, 'data');
    const serveArgs = ['--data-dir', dataDir, '--host', '127.0.0.1', '--log-level', 'warn'];
    server = await startServe(mainJs, [...serveArgs, '--port', '0'], env);
    const url = server.url;
    const adminToken = /admin token[^:]*:\s*(\S+)/i.exec(server.startupLines.join('\n'))?.[1] ?? '';
    const carol = await callApi<{ token: string }>(url, 'POST', routePath('adminUsers'), adminToken, {
      name: 'carol',
    });
    const key = await callApi<{ key: string }>(url, 'POST', routePath('adminIssueAgentKey'), adminToken, {
      agent_name: 'echo',
    });
    expect([carol.status, key.status]).toEqual([200, 200]);
    const send = async (subject: string): Promise<string> => {
      const res = await callApi<{ mail_id: string }>(url, 'POST', routePath('meSend'), carol.body.token, {
        to: 'echo',
        subject,
        body: `body of ${subject}`,
      });
      expect(res.status).toBe(200);
      return res.body.mail_id;
    };

    // Registering first lets the mail wait in the inbox while the agent is offline (G-39).
    const reg = await callApi(url, 'POST', routePath('register'), key.body.key, {
      name: 'echo',
      platform: 'python',
    });
    expect(reg.status).toBe(200);
    const offline = await send('while you were away');

    const agent = spawnWatched(
      'python3',
      [SCRIPT, '--once', '4', '--heartbeat-seconds', '1', '--timeout', '60'],
      {
        env: cleanEnv({
          AGENTMAIL_GATEWAY_URL: url,
          AGENTMAIL_AGENT_NAME: 'echo',
          AGENTMAIL_AGENT_KEY: key.body.key,
        }),
        cwd: tmp,
      },
    );
    try {
      await agent.waitForLine(new RegExp(`answered ${offline} `));
      const live = await send('live one');
      await agent.waitForLine(new RegExp(`new_mail ${live}`));
      await agent.waitForLine(new RegExp(`answered ${live} `));
      // A subject at the limit: "Re: " would cross it; the reply is clipped, never split inside a
      // character (the emoji's two UTF-16 units would straddle unit 500), never refused.
      const longSubject = `${'x'.repeat(495)}😀yy`;
      const long = await send(longSubject);
      await agent.waitForLine(new RegExp(`answered ${long} `));

      // Heartbeats keep the agent online (G-25).
      const contacts = await callApi<ContactsResponse>(url, 'GET', routePath('contacts'), key.body.key);
      expect(contacts.body.contacts.find((c) => c.name === 'echo')).toMatchObject({ online: true });

      // Restart the server on the same port: the script reconnects with its Last-Event-ID.
      const before = agent.lines.length;
      expect(await server.stop()).toBe(0);
      server = await startServe(mainJs, [...serveArgs, '--port', new URL(url).port], env);
      await agent.waitForLine(/event stream open after event \d+/, { after: before, timeoutMs: 20_000 });
      const afterRestart = await send('after restart');
      await agent.waitForLine(new RegExp(`answered ${afterRestart} `));
      expect(await agent.exited).toBe(0);
      // It said goodbye when it stopped: offline at once, not 90 s later (SPEC H-3).
      const gone = await callApi<ContactsResponse>(url, 'GET', routePath('contacts'), key.body.key);
      expect(gone.body.contacts.find((c) => c.name === 'echo')).toMatchObject({
        online: false,
        offline_since: expect.any(String),
      });

      const inbox = await callApi<InboxResponse>(
        url,
        'GET',
        `${routePath('meInbox')}?status=all&limit=10`,
        carol.body.token,
      );
      const replies = inbox.body.mails.filter((m) => m.from_name === 'echo');
      expect(replies.map((m) => [m.subject, m.snippet, m.in_reply_to, m.from_human]).sort()).toEqual(
        [
          ['Re: after restart', 'received: after restart', afterRestart, false],
          ['Re: live one', 'received: live one', live, false],
          [`Re: ${'x'.repeat(495)}`, `received: ${longSubject}`.slice(0, 200), long, false],
          ['Re: while you were away', 'received: while you were away', offline, false],
        ].sort(),
      );
      const unread = await callApi<InboxResponse>(
        url,
        'GET',
        `${routePath('inbox')}?status=unread`,
        key.body.key,
      );
      expect(unread.body.mails).toEqual([]);
    } finally {
      agent.child.kill('SIGKILL');
    }
  }, 60_000);
});
