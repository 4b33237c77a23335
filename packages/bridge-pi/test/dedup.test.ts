/**
 * De-duplication (SPEC B-20, B-2): the daemon's SeenMails claim makes the same `new_mail`
 * delivered twice (an SSE replay after a reconnect, or the catch-up listing) run exactly one turn.
 * The real {@link PiBridgeDaemon} runs against a small fake Gateway (node:http) and a stub worker
 * entry that only records each job it receives, so no pi turn is needed.
 */
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import type { MailSummary, NewMailEvent } from '@agentmail/protocol';
import { pino } from 'pino';
import { describe, expect, it, onTestFinished } from 'vitest';
import { PiBridgeDaemon } from '../src/daemon.js';

/** A stand-in worker: records each job's mail id to JOBS_FILE, reports success, exits. */
const STUB_WORKER = `
import { appendFileSync } from 'node:fs';
process.on('message', (m) => {
  if (m.type === 'task') {
    process.send({ type: 'task_result', result: { enforcement: { mode: 'native' } } }, () => process.exit(0));
  } else if (m.type === 'job') {
    appendFileSync(process.env.STUB_WORKER_JOBS_FILE, m.job.mail.mail_id + '\\n');
    process.send(
      { type: 'result', ok: true, model: 'stub/stub', platformSessionId: 'p', sessionFile: '',
        relay: { sent: false, reason: 'stub worker' } },
      () => process.exit(0),
    );
  }
});
process.send({ type: 'ready' });
`;

function newMail(mailId: string): NewMailEvent {
  return {
    mail_id: mailId,
    session_id: 's_dedup',
    from_name: 'alice',
    from_human: true,
    to_workspace: '',
    subject: `Task ${mailId}`,
    in_reply_to: '',
    parent_from: '',
    permission_mode: 'workspace',
    permission_enforcement: 'native',
    session_alias: 'dedup',
    reply_address: 'alice',
    self_address: 'pi',
    platform_session_id: '',
    kind: 'mail',
  };
}

function summaryOf(mail: NewMailEvent): MailSummary {
  return {
    id: mail.mail_id,
    session_id: mail.session_id,
    session_alias: mail.session_alias,
    from_name: mail.from_name,
    from_human: mail.from_human,
    from_address: mail.reply_address,
    to: [],
    cc: [],
    to_human: false,
    subject: mail.subject,
    snippet: '',
    created_at: '2026-11-30T00:00:00.000Z',
    status: 'unread',
    attachments: [],
    in_reply_to: '',
    kind: 'mail',
    is_permission: false,
    relay: false,
    permission_mode: mail.permission_mode,
    reply_address: mail.reply_address,
    self_address: mail.self_address,
    platform_session_id: mail.platform_session_id,
  };
}

function frame(id: number, mail: NewMailEvent): string {
  return `event: new_mail\nid: ${id}\ndata: ${JSON.stringify(mail)}\n\n`;
}

function json(res: ServerResponse, body: unknown): void {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

describe('daemon de-duplication (B-20, B-2)', () => {
  it('the same new_mail on the stream twice and in the catch-up listing runs exactly one turn', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'am-pi-dedup-'));
    onTestFinished(() => rm(dir, { recursive: true, force: true }));
    const workerPath = join(dir, 'stub-worker.mjs');
    const jobsFile = join(dir, 'jobs.txt');
    await writeFile(workerPath, STUB_WORKER);
    await writeFile(jobsFile, '');

    const dup = newMail('m_dup');
    const sentinel = newMail('m_sentinel');
    let stream: ServerResponse | undefined;
    const server = createServer((req: IncomingMessage, res: ServerResponse) => {
      const path = new URL(req.url ?? '/', 'http://x').pathname;
      req.resume();
      if (path.endsWith('/agent/register'))
        json(res, { name: 'pi', platform: 'pi', created: false, heartbeat_interval_ms: 30_000 });
      else if (path.endsWith('/agent/heartbeat'))
        json(res, {
          status: 'ok',
          server_time: new Date().toISOString(),
          allowed_models: [],
          unknown_fields: [],
          heartbeat_interval_ms: 30_000,
        });
      else if (path.endsWith('/mail/inbox'))
        // The catch-up listing holds the same mail: the third delivery.
        json(res, { mails: [summaryOf(dup)], unread_count: 1, has_more: false });
      else if (path.endsWith('/agent/mail/m_dup'))
        json(res, { mail: { ...summaryOf(dup), body: 'x', participants: [], parent_from: '' } });
      else if (path.endsWith('/events')) {
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        // The same mail twice, under two event ids (a replay after a reconnect).
        res.write(frame(1, dup) + frame(2, dup));
        stream = res;
      } else {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { code: 'not_found', message: path } }));
      }
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    onTestFinished(
      () =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    );

    const lines: Array<Record<string, unknown>> = [];
    let onLine: (() => void) | undefined;
    const log = pino(
      { level: 'info' },
      new Writable({
        write(chunk: Buffer, _enc, done) {
          for (const line of chunk.toString('utf8').split('\n'))
            if (line) lines.push(JSON.parse(line) as Record<string, unknown>);
          onLine?.();
          done();
        },
      }),
    );
    const turnDone = (mailId: string): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`no turn_done event for ${mailId}`)), 20_000);
        const check = (): void => {
          if (lines.some((l) => l.event === 'turn_done' && l.mail_id === mailId)) {
            clearTimeout(timer);
            resolve();
          }
        };
        onLine = check;
        check();
      });

    const { port } = server.address() as AddressInfo;
    const daemon = new PiBridgeDaemon(
      {
        gatewayUrl: `http://127.0.0.1:${port}`,
        agentName: 'pi',
        agentKey: 'k_test',
        hostDefault: '',
        dataDir: join(dir, 'data'),
        agentDir: join(dir, 'agent'),
        concurrency: 4,
        turnTimeoutMs: 20_000,
        heartbeatMs: 60_000,
        locale: 'en',
        workerPath,
        // The kit's launcher from source (node strips its types; it imports node builtins only).
        launcherPath: fileURLToPath(import.meta.resolve('@agentmail/bridge-kit/child-launcher')),
      },
      log,
    );
    onTestFinished(() => daemon.stop());
    process.env.STUB_WORKER_JOBS_FILE = jobsFile;
    onTestFinished(() => {
      delete process.env.STUB_WORKER_JOBS_FILE;
    });
    await daemon.start(); // resolves after the catch-up pass

    // A later mail of the same session: turns of one session are serial (B-13), so once its turn
    // is done every turn queued before it (a duplicate included) has run.
    if (!stream) throw new Error('the daemon opened no event stream');
    stream.write(frame(3, sentinel));
    await turnDone('m_sentinel');

    const jobs = (await readFile(jobsFile, 'utf8')).split('\n').filter(Boolean);
    expect(jobs, 'one turn for the duplicated mail, then the sentinel').toEqual(['m_dup', 'm_sentinel']);
    expect(lines.filter((l) => l.event === 'mail_duplicate').length).toBeGreaterThanOrEqual(1);
    const catchUp = lines.find((l) => l.event === 'catch_up_done');
    expect(catchUp?.delivered, 'catch-up shares the stream de-duplication set').toEqual([]);
  });
});
