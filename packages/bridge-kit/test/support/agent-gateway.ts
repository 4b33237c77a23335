/**
 * The agent side of a fake Gateway for bridge-kit tests (runtime, createBridge): register,
 * heartbeat, inbox, mail, send, read, and an event stream frames are pushed into.
 */
import type { ServerResponse } from 'node:http';
import type { MailSummary } from '@agentmail/protocol';
import { type FakeGateway, fakeGateway, summary } from '@agentmail/shared-policy/testing';
import { kicker, until } from './bridge-fixtures.js';

export interface Gw extends FakeGateway {
  /** Write frames to the open stream (waits for it to open). */
  push(...frames: string[]): Promise<void>;
  /** End the open stream (a Gateway restart, as the bridge sees it). */
  drop(): void;
  /** Event streams opened so far. */
  opens(): number;
}

/**
 * A fake Gateway answering the agent routes a bridge uses at start and per turn, with a real SSE
 * stream the test pushes frames into. Close it with `gw.close()`.
 */
export async function agentGateway(inbox: MailSummary[] = []): Promise<Gw> {
  const gw = await fakeGateway();
  let stream: ServerResponse | undefined;
  const opened = kicker();
  gw.on('POST', '/api/v1/agent/register', () => ({
    json: { name: 'pi', platform: 'pi', created: true, heartbeat_interval_ms: 30_000 },
  }));
  gw.on('POST', '/api/v1/agent/heartbeat', () => ({
    json: {
      status: 'ok',
      server_time: new Date().toISOString(),
      allowed_models: ['p/a'],
      unknown_fields: [],
      heartbeat_interval_ms: 30_000,
    },
  }));
  gw.on('GET', '/api/v1/mail/inbox', () => ({
    json: { mails: inbox, unread_count: inbox.length, has_more: false },
  }));
  gw.on('GET', '/api/v1/agent/mail/:id', (req) => ({
    json: {
      mail: { ...summary(req.path.split('/').pop() ?? ''), body: 'b', participants: [], parent_from: '' },
    },
  }));
  gw.on('POST', '/api/v1/mail/send', () => ({
    json: {
      status: 'sent',
      mail_id: 'm_f',
      session_id: 's1',
      session_alias: 'a',
      address: 'x',
      rounds_left: null,
    },
  }));
  gw.on('POST', '/api/v1/permission/request', (req) => ({
    json: {
      status: 'pending',
      request_id: `p_${gw.requests.filter((r) => r.path === '/api/v1/permission/request').length}`,
      mail_id: 'm_perm',
      asked: 'alice',
      relay_key: (req.json as { relay_key?: string }).relay_key,
    },
  }));
  gw.on('POST', '/api/v1/mail/read', (req) => ({
    json: { updated: ((req.json as { ids?: string[] }).ids ?? []).length },
  }));
  let opens = 0;
  gw.on('GET', '/api/v1/events', () => (_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    res.flushHeaders();
    stream = res;
    opens++;
    opened.kick();
  });
  return Object.assign(gw, {
    push: async (...frames: string[]) => {
      await until(() => stream !== undefined, opened);
      stream?.write(frames.join(''));
    },
    drop: () => {
      stream?.end();
      stream = undefined;
    },
    opens: () => opens,
  });
}
