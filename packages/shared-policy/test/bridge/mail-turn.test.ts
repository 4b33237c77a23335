import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMailEvent } from '@agentmail/protocol';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { ExplicitSendRecord } from '../../src/bridge/explicit-sends.js';
import {
  type AttemptResult,
  type MailTurnInput,
  type MailTurnPlatform,
  relaySubject,
  runMailTurn,
  type SessionLocation,
  type TurnAttempt,
} from '../../src/bridge/mail-turn.js';
import { GatewayClient } from '../../src/client/gateway-client.js';
import type { NamingSyncState } from '../../src/naming-sync.js';
import { autoRelayKey, failureRelayKey } from '../../src/relay-key.js';
import { formatText } from '../../src/texts/index.js';
import { newMail, recordingLog } from '../support/bridge-fixtures.js';
import { type FakeGateway, fakeGateway } from '../support/fake-gateway.js';

// The Gateway side is a real loopback HTTP server (support/fake-gateway); the platform is the seam
// runMailTurn drives, so it is a scripted MailTurnPlatform object recording every call.

let gw: FakeGateway;
let dir: string;
beforeAll(async () => {
  gw = await fakeGateway();
  dir = await mkdtemp(join(tmpdir(), 'am-mail-turn-'));
});
afterAll(async () => {
  await gw.close();
  await rm(dir, { recursive: true, force: true });
});
beforeEach(() => {
  gw.requests.length = 0;
  gw.on('POST', '/api/v1/mail/send', () => ({
    json: {
      status: 'sent',
      mail_id: 'm_out',
      session_id: 's1',
      session_alias: 'pi-fix',
      address: 'x',
      rounds_left: null,
    },
  }));
  gw.on('POST', '/api/v1/sessions/:id/sync', (req) => ({
    json: {
      session_id: 's1',
      alias: 'pi-fix-the-thing',
      title: (req.json as { title?: string }).title ?? '',
    },
  }));
});

interface Script {
  location?: SessionLocation;
  catalogue?: readonly string[] | undefined;
  /** Result per attempt index; default: ok with a text answer. */
  results?: Array<Partial<AttemptResult>>;
  naming?: boolean;
  onAttempt?: (
    attempt: TurnAttempt,
    index: number,
    toolContext: Parameters<MailTurnPlatform['runAttempt']>[1],
  ) => void | Promise<void>;
}

function platform(script: Script = {}) {
  const calls: string[] = [];
  const attempts: TurnAttempt[] = [];
  let naming: NamingSyncState | undefined;
  const p: MailTurnPlatform = {
    platform: 'pi',
    locateSession: async () => script.location ?? { kind: 'mail', resumed: false },
    catalogue: async () => ('catalogue' in script ? script.catalogue : undefined),
    runAttempt: async (attempt, turn) => {
      attempts.push(attempt);
      const name = attempt.kind === 'configured' ? `${attempt.provider}/${attempt.model}` : attempt.kind;
      calls.push(`attempt ${name}`);
      await script.onAttempt?.(attempt, turn.index, turn);
      return {
        ok: true,
        cause: '',
        finalParts: [
          { type: 'reasoning', text: 'thinking…' },
          { type: 'text', text: 'Done: 4 lines.' },
        ],
        model: name,
        platformSessionId: 'ps1',
        lastEntryId: `e${turn.index}`,
        ...script.results?.[turn.index],
      };
    },
    discardAttempt: async (index) => {
      calls.push(`discard ${index}`);
    },
    ...(script.naming
      ? {
          namingState: {
            read: async () => naming,
            write: async (state: NamingSyncState) => {
              calls.push(`naming write ${JSON.stringify(state)}`);
              naming = state;
            },
          },
        }
      : {}),
  };
  return { p, calls, attempts };
}

function input(
  mail: NewMailEvent,
  over: Partial<MailTurnInput> = {},
): MailTurnInput & { log: ReturnType<typeof recordingLog> } {
  const log = recordingLog();
  return {
    mail,
    backlog: false,
    attempt: 1,
    agentName: 'pi',
    allowedModels: [],
    client: new GatewayClient({ baseUrl: gw.url, key: 'k1' }),
    fallbackRoot: join(dir, 'fallback'),
    explicitSends: new ExplicitSendRecord(),
    locale: 'en',
    signal: new AbortController().signal,
    onReconnect: () => undefined,
    ...over,
    log,
  } as MailTurnInput & { log: ReturnType<typeof recordingLog> };
}

const sends = () =>
  gw.requests.filter((r) => r.path === '/api/v1/mail/send').map((r) => r.json as Record<string, unknown>);

describe('runMailTurn: sessions (B-4)', () => {
  it('an adopted session that is gone: session_missing failure mail, no attempt', async () => {
    const { p, attempts } = platform({ location: { kind: 'missing', cause: 'pi session abc not found' } });
    const report = await runMailTurn(input(newMail('m1', { platform_session_id: 'abc' })), p);
    expect(report).toMatchObject({ ok: false, kind: 'session_missing', failureMailSent: true });
    expect(attempts).toEqual([]);
    const [fm] = sends();
    expect(fm?.relay_key).toBe(failureRelayKey('m1'));
    expect(fm?.body).toContain('pi session abc not found');
    expect(fm?.body).toContain(formatText('failure.session_missing'));
  });

  it('a resumed session gets one resume attempt and never switches model', async () => {
    const { p, attempts, calls } = platform({
      location: { kind: 'mail', resumed: true },
      catalogue: ['p/a', 'p/b'],
      results: [{ ok: false, cause: 'provider 500' }],
    });
    const report = await runMailTurn(input(newMail('m1'), { allowedModels: ['p/a', 'p/b'] }), p);
    expect(attempts).toEqual([{ kind: 'resume' }]);
    expect(calls).not.toContain('discard 0');
    expect(report).toMatchObject({ ok: false, kind: 'resume_failed', cause: 'provider 500' });
    expect(sends()[0]?.body).toContain(formatText('failure.resume_failed'));
  });

  it('an adopted session resumes too (and is not a fresh model order)', async () => {
    const { p, attempts } = platform({ location: { kind: 'adopted' }, catalogue: ['p/a'] });
    const report = await runMailTurn(
      input(newMail('m1', { platform_session_id: 'abc' }), { allowedModels: ['p/a'] }),
      p,
    );
    expect(attempts).toEqual([{ kind: 'resume' }]);
    expect(report.ok).toBe(true);
  });
});

describe('runMailTurn: model order (B-8, B-9)', () => {
  it('tries the allowed models in order, skips those missing from the catalogue, discards between', async () => {
    const { p, calls } = platform({
      catalogue: ['p/a', 'p/b'],
      results: [{ ok: false, cause: 'a failed' }],
    });
    const report = await runMailTurn(input(newMail('m1'), { allowedModels: ['p/a', 'p/gone', 'p/b'] }), p);
    expect(calls).toEqual(['attempt p/a', 'discard 0', 'attempt p/b']);
    expect(report).toMatchObject({ ok: true, model: 'p/b' });
  });

  it('every model fails: all_models_failed failure mail with the platform cause', async () => {
    const { p, calls } = platform({
      catalogue: ['p/a', 'p/b'],
      results: [
        { ok: false, cause: 'a failed' },
        { ok: false, cause: 'upstream exploded' },
      ],
    });
    const log = recordingLog();
    const report = await runMailTurn({ ...input(newMail('m1'), { allowedModels: ['p/a', 'p/b'] }), log }, p);
    expect(calls).toEqual(['attempt p/a', 'discard 0', 'attempt p/b']);
    expect(report).toMatchObject({
      ok: false,
      kind: 'all_models_failed',
      cause: 'upstream exploded',
      failureMailSent: true,
    });
    const [fm] = sends();
    expect(fm?.body).toContain('upstream exploded');
    expect(fm?.body).toContain(formatText('failure.all_models_failed'));
    expect(fm?.relay_key).toBe(failureRelayKey('m1'));
    expect(log.lines.some((l) => l.level === 'error' && l.obj.kind === 'all_models_failed')).toBe(true);
  });

  it('the signal aborted during an attempt: timeout failure, no further attempt', async () => {
    const ac = new AbortController();
    const { p, calls } = platform({
      catalogue: ['p/a', 'p/b'],
      results: [{ ok: false, cause: 'aborted' }],
      onAttempt: () => ac.abort('timeout'),
    });
    const report = await runMailTurn(
      input(newMail('m1'), { allowedModels: ['p/a', 'p/b'], signal: ac.signal }),
      p,
    );
    expect(calls.filter((c) => c.startsWith('attempt'))).toEqual(['attempt p/a']);
    expect(report).toMatchObject({ ok: false, kind: 'timeout' });
    expect(sends()[0]?.body).toContain('aborted');
  });

  it('a set-up problem stops the model order: one attempt, a bridge_setup failure mail (not "all models failed")', async () => {
    const { p, calls } = platform({
      catalogue: ['p/a', 'p/b'],
      results: [{ ok: false, cause: 'plugin not loaded for /srv/x', setupProblem: true }],
    });
    const report = await runMailTurn(input(newMail('m1'), { allowedModels: ['p/a', 'p/b'] }), p);
    expect(calls.filter((c) => c.startsWith('attempt'))).toEqual(['attempt p/a']);
    expect(report).toMatchObject({ ok: false, kind: 'bridge_setup' });
    expect(sends()[0]?.body).toContain(formatText('failure.bridge_setup'));
    expect(sends()[0]?.body).toContain('plugin not loaded for /srv/x');
    expect(sends()[0]?.body).not.toContain(formatText('failure.all_models_failed'));
  });

  it('a timeout failure mail names the configured turn timeout (B-7, B-9)', async () => {
    const ac = new AbortController();
    const { p } = platform({
      results: [{ ok: false, cause: 'aborted' }],
      onAttempt: () => ac.abort('timeout'),
    });
    await runMailTurn(input(newMail('m1'), { signal: ac.signal, turnTimeoutMs: 15_000 }), p);
    expect(sends()[0]?.body).toContain(formatText('failure.timeout', { timeout_s: 15 }));
    expect(sends()[0]?.body).toMatch(/\b15\b/);
    expect(sends()[0]?.body).not.toMatch(/\b600\b/);
  });

  it('a shutdown (reason "shutdown") sends no failure mail: the mail stays for catch-up (B-15)', async () => {
    const ac = new AbortController();
    const { p } = platform({
      results: [{ ok: false, cause: 'aborted' }],
      onAttempt: () => ac.abort('shutdown'),
    });
    const report = await runMailTurn(input(newMail('m1'), { signal: ac.signal }), p);
    expect(report).toMatchObject({ ok: false, failureMailSent: false });
    expect(sends()).toEqual([]);
  });
});

describe('runMailTurn: working directory (B-3)', () => {
  it('an address path that does not exist: fallback directory, and the prompt tells the model', async () => {
    let prompt = '';
    let cwd = '';
    const { p } = platform({
      onAttempt: (_a, _i, turn) => {
        prompt = turn.prompt;
        cwd = turn.cwd;
      },
    });
    await runMailTurn(input(newMail('m1', { to_workspace: '/does/not/exist' })), p);
    expect(cwd.startsWith(join(dir, 'fallback'))).toBe(true);
    expect(prompt).toContain(
      formatText('prompt.note.workspace_fallback', { path: '/does/not/exist', reason: 'missing', cwd }),
    );
  });

  it('an existing address path: no note', async () => {
    let prompt = '';
    const { p } = platform({
      onAttempt: (_a, _i, turn) => {
        prompt = turn.prompt;
      },
    });
    await runMailTurn(input(newMail('m1', { to_workspace: dir })), p);
    expect(prompt).not.toContain(
      formatText('prompt.note.workspace_fallback', { path: dir, reason: '', cwd: '' }).slice(0, 30),
    );
  });
});

describe('runMailTurn: relay (B-10)', () => {
  it('a person sender gets the final text (no reasoning), subject from the catalogue, stable key', async () => {
    const { p } = platform();
    const report = await runMailTurn(input(newMail('m1', { subject: 'How long?' })), p);
    expect(report).toMatchObject({ ok: true, relay: { sent: true, mailId: 'm_out', duplicate: false } });
    const [relay] = sends();
    expect(relay).toMatchObject({
      to: 'alice@.pi-fix',
      subject: 'Re: How long?',
      body: 'Done: 4 lines.',
      reply_to: 'm1',
      from_session_id: 's1',
      relay: 'summary',
      relay_key: autoRelayKey('ps1', 'e0'),
    });
  });

  it('the relay subject is a catalogue text (zh-CN) and an existing prefix is kept', async () => {
    const { p } = platform();
    await runMailTurn(input(newMail('m1', { subject: '多久？' }), { locale: 'zh-CN' }), p);
    expect(sends()[0]?.subject).toBe('回复：多久？');
    expect(relaySubject('Re: x', 'en')).toBe('Re: x');
    expect(relaySubject('x', 'en')).toBe(formatText('relay.subject', { subject: 'x' }));
  });

  it('no relay when the model already mailed the reply target (explicit send recorded)', async () => {
    const { p } = platform({
      onAttempt: async (_a, _i, turn) => {
        await turn.toolContext.recordExplicitSend?.('alice');
      },
    });
    const i = input(newMail('m1'));
    const report = await runMailTurn(i, p);
    expect(report).toMatchObject({ ok: true, relay: { sent: false } });
    expect(sends()).toEqual([]);
    expect(i.log.lines.find((l) => l.msg === 'no relay')?.obj.reason).toMatch(/already mailed/);
  });

  it('no relay to an agent sender (B-6): it must call send_mail', async () => {
    const { p } = platform();
    const report = await runMailTurn(input(newMail('m1', { from_human: false })), p);
    expect(report).toMatchObject({ ok: true, relay: { sent: false } });
    expect(sends()).toEqual([]);
  });
});

describe('runMailTurn: naming sync (B-11)', () => {
  it('writes the fingerprint before the request, the alias after it; a second turn does not sync again', async () => {
    const order: string[] = [];
    const { p, calls } = platform({ naming: true, results: [{ sessionName: 'Fix the thing' }] });
    gw.on('POST', '/api/v1/sessions/:id/sync', (req) => {
      order.push(...calls.filter((c) => c.startsWith('naming write')), 'request');
      return {
        json: { session_id: 's1', alias: 'pi-fix-the-thing', title: (req.json as { title: string }).title },
      };
    });
    await runMailTurn(input(newMail('m1')), p);
    expect(order[0], 'the fingerprint is stored before the request').toMatch(/^naming write \{"fingerprint"/);
    expect(order[1]).toBe('request');
    expect(calls.filter((c) => c.startsWith('naming write')).at(-1)).toContain('"alias":"pi-fix-the-thing"');
    const syncs = () => gw.requests.filter((r) => r.path === '/api/v1/sessions/s1/sync');
    expect(syncs()).toHaveLength(1);
    await runMailTurn(input(newMail('m2')), p);
    expect(syncs(), 'the same name again: no second request').toHaveLength(1);
  });

  it('an adopted session is not synced', async () => {
    const { p } = platform({
      naming: true,
      location: { kind: 'adopted' },
      results: [{ sessionName: 'Mine' }],
    });
    await runMailTurn(input(newMail('m1', { platform_session_id: 'abc' })), p);
    expect(gw.requests.filter((r) => r.path.endsWith('/sync'))).toEqual([]);
  });
});
