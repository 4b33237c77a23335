import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { NewMailEvent } from '@agentmail/protocol';
import { failureRelayKey, formatText, mailRelayKey, PendingPermissions } from '@agentmail/shared-policy';
import { GatewayClient } from '@agentmail/shared-policy/client';
import { type FakeGateway, fakeGateway } from '@agentmail/shared-policy/testing';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type {
  Attempt,
  AttemptContext,
  AttemptOutcome,
  PlatformSessionRef,
  TurnAdapter,
} from '../src/adapter.js';
import { ExplicitSendRecord } from '../src/explicit-sends.js';
import { GrantStore } from '../src/grant-store.js';
import { type MailTurnInput, relaySubject, runMailTurn } from '../src/mail-turn.js';
import { SessionBindings } from '../src/session-bindings.js';
import { TurnGate } from '../src/turn-gate.js';
import { TurnRegistry } from '../src/turn-registry.js';
import { newMail, recordingBus } from './support/bridge-fixtures.js';

// The Gateway side is a real loopback HTTP server (support/fake-gateway) and the bindings are real
// files; the host is the seam runMailTurn drives, a scripted TurnAdapter recording every call.

let gw: FakeGateway;
let dir: string;
let n = 0;
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
  /** Sessions the host has: platform id → its cwd ('' = no cwd). */
  sessions?: Record<string, string>;
  catalogue?: readonly string[] | undefined;
  /** Outcome per attempt index; default: ok with a text answer. */
  results?: Array<Partial<AttemptOutcome>>;
  /** The name a `new` attempt gives the session it creates. @default the mail subject */
  createdName?: string;
  onAttempt?: (attempt: Attempt, ctx: AttemptContext) => void | Promise<void>;
  legacy?: PlatformSessionRef;
}

function host(script: Script = {}) {
  const calls: string[] = [];
  const attempts: Attempt[] = [];
  const sessions = { ...script.sessions };
  let created = 0;
  const adapter: TurnAdapter = {
    platform: 'pi',
    findSession: async (s) => {
      calls.push(`find ${s.platformSessionId}`);
      const cwd = sessions[s.platformSessionId];
      return cwd === undefined ? undefined : cwd ? { cwd } : {};
    },
    catalogue: async () => ('catalogue' in script ? script.catalogue : undefined),
    runAttempt: async (attempt, ctx) => {
      attempts.push(attempt);
      calls.push(
        `attempt ${attempt.kind === 'resume' ? `resume ${attempt.session?.platformSessionId}` : (attempt.model?.key ?? 'default')}`,
      );
      let id = attempt.session?.platformSessionId ?? '';
      if (attempt.kind === 'new') {
        id = `ps${++created}`;
        sessions[id] = '';
        await ctx.sessionCreated({ platformSessionId: id, name: script.createdName ?? ctx.mail.subject });
      }
      await script.onAttempt?.(attempt, ctx);
      return {
        ok: true,
        finalParts: [
          { type: 'reasoning', text: 'thinking…' },
          { type: 'text', text: 'Done: 4 lines.' },
        ],
        platformSessionId: id,
        lastEntryId: `e${attempt.index}`,
        ...script.results?.[attempt.index],
      };
    },
    disposeSession: async (s) => {
      calls.push(`dispose ${s.platformSessionId}`);
    },
    ...(script.legacy ? { legacyBinding: async () => script.legacy } : {}),
  };
  return { adapter, calls, attempts };
}

function input(mail: NewMailEvent, over: Partial<MailTurnInput> = {}) {
  const bus = recordingBus();
  const dataDir = join(dir, `data-${++n}`);
  const i = {
    mail,
    backlog: false,
    attempt: 1,
    agentName: 'pi',
    allowedModels: [],
    client: new GatewayClient({ baseUrl: gw.url, key: 'k1' }),
    dataDir,
    bindings: new SessionBindings(dataDir),
    explicitSends: new ExplicitSendRecord(),
    grants: new GrantStore(),
    pending: new PendingPermissions(),
    locale: 'en',
    signal: new AbortController().signal,
    emit: bus.emitFn,
    onReconnect: () => undefined,
    ...over,
  } satisfies MailTurnInput;
  return Object.assign(i, { bus });
}

const sends = () =>
  gw.requests.filter((r) => r.path === '/api/v1/mail/send').map((r) => r.json as Record<string, unknown>);

describe('runMailTurn: sessions (B-4)', () => {
  it('an adopted session that is gone: session_missing failure mail, no attempt', async () => {
    const { adapter, attempts } = host();
    const report = await runMailTurn(input(newMail('m1', { platform_session_id: 'abc' })), adapter);
    expect(report).toMatchObject({ ok: false, kind: 'session_missing', failureMailSent: true });
    expect(attempts).toEqual([]);
    const [fm] = sends();
    expect(fm?.relay_key).toBe(failureRelayKey('m1'));
    expect(fm?.body).toContain('the pi session abc was not found');
    expect(fm?.body).toContain(formatText('failure.session_missing'));
  });

  it('a bound session gets one resume attempt and never switches model; its failure is resume_failed', async () => {
    const { adapter, attempts, calls } = host({
      sessions: { old: '' },
      catalogue: ['p/a', 'p/b'],
      results: [{ ok: false, cause: 'provider 500' }],
    });
    const i = input(newMail('m1'), { allowedModels: ['p/a', 'p/b'] });
    await i.bindings.bind('s1', { platformSessionId: 'old' });
    const report = await runMailTurn(i, adapter);
    expect(attempts).toEqual([
      { index: 0, kind: 'resume', session: { platformSessionId: 'old' }, adopted: false },
    ]);
    expect(calls.filter((c) => c.startsWith('dispose'))).toEqual([]);
    expect(report).toMatchObject({ ok: false, kind: 'resume_failed', cause: 'provider 500' });
    expect(sends()[0]?.body).toContain(formatText('failure.resume_failed'));
    expect((await i.bindings.get('s1'))?.platformSessionId, 'a failed resume keeps the binding').toBe('old');
  });

  it('an adopted session resumes by its platform id, in its own directory', async () => {
    let cwd = '';
    const { adapter, attempts } = host({
      sessions: { abc: dir },
      onAttempt: (_a, ctx) => {
        cwd = ctx.cwd;
      },
    });
    const report = await runMailTurn(
      input(newMail('m1', { platform_session_id: 'abc' }), { allowedModels: ['p/a'] }),
      adapter,
    );
    expect(attempts).toEqual([
      { index: 0, kind: 'resume', session: { platformSessionId: 'abc' }, adopted: true },
    ]);
    expect(cwd).toBe(dir);
    expect(report.ok).toBe(true);
  });

  it('a bound session that is gone: event binding_gone, unbound, a new session with the model order', async () => {
    const { adapter, calls } = host({ catalogue: ['p/a'] });
    const i = input(newMail('m1'), { allowedModels: ['p/a'] });
    await i.bindings.bind('s1', { platformSessionId: 'gone' });
    await runMailTurn(i, adapter);
    expect(calls).toEqual(['find gone', 'attempt p/a']);
    expect(i.bus.events.find((e) => e.type === 'binding_gone')).toMatchObject({
      platform_session_id: 'gone',
    });
    expect((await i.bindings.get('s1'))?.platformSessionId).toBe('ps1');
  });

  it('a legacy session the host still finds is bound and resumed', async () => {
    const { adapter, attempts } = host({
      sessions: { legacy: '' },
      legacy: { platformSessionId: 'legacy', locator: '/x.jsonl' },
    });
    const i = input(newMail('m1'));
    await runMailTurn(i, adapter);
    expect(attempts[0]).toMatchObject({
      kind: 'resume',
      session: { platformSessionId: 'legacy', locator: '/x.jsonl' },
    });
    expect(await i.bindings.get('s1')).toMatchObject({ platformSessionId: 'legacy', locator: '/x.jsonl' });
  });
});

describe('runMailTurn: model order (B-8, B-9)', () => {
  it('tries the allowed models in order, skips those missing from the catalogue, sets the failed session aside', async () => {
    const { adapter, calls, attempts } = host({
      catalogue: ['p/a', 'p/b'],
      results: [{ ok: false, cause: 'a failed' }],
    });
    const i = input(newMail('m1'), { allowedModels: ['p/a', 'p/gone', 'p/b'] });
    const report = await runMailTurn(i, adapter);
    expect(calls).toEqual(['attempt p/a', 'dispose ps1', 'attempt p/b']);
    expect(attempts.map((a) => a.model)).toEqual([
      { key: 'p/a', provider: 'p', model: 'a' },
      { key: 'p/b', provider: 'p', model: 'b' },
    ]);
    expect(report).toMatchObject({ ok: true, model: 'p/b', platformSessionId: 'ps2' });
    const binding = await i.bindings.get('s1');
    expect(binding?.platformSessionId).toBe('ps2');
    expect(binding?.setAside).toEqual([{ platformSessionId: 'ps1' }]);
    expect([...(await i.bindings.ownPlatformSessionIds())].sort()).toEqual(['ps1', 'ps2']);
    expect(i.bus.events.find((e) => e.type === 'attempt_failed')).toMatchObject({
      model: 'p/a',
      cause: 'a failed',
    });
  });

  it('no model allowed: one attempt with the host default, reported loudly (model_order, host_default)', async () => {
    const { adapter, attempts } = host();
    const i = input(newMail('m1'), { hostDefault: 'p/d' });
    await runMailTurn(i, adapter);
    expect(attempts.map((a) => a.model)).toEqual([{ key: 'p/d', provider: 'p', model: 'd' }]);
    expect(i.bus.events.find((e) => e.type === 'model_order')).toMatchObject({ host_default: true });
  });

  it('every model fails: all_models_failed failure mail with the host cause', async () => {
    const { adapter, calls } = host({
      catalogue: ['p/a', 'p/b'],
      results: [
        { ok: false, cause: 'a failed' },
        { ok: false, cause: 'upstream exploded' },
      ],
    });
    const i = input(newMail('m1'), { allowedModels: ['p/a', 'p/b'] });
    const report = await runMailTurn(i, adapter);
    expect(calls).toEqual(['attempt p/a', 'dispose ps1', 'attempt p/b']);
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
    expect(i.bus.events.find((e) => e.type === 'failure_mail_sent')).toMatchObject({
      kind: 'all_models_failed',
    });
  });

  it('the signal aborted during an attempt: timeout failure, no further attempt', async () => {
    const ac = new AbortController();
    const { adapter, calls } = host({
      catalogue: ['p/a', 'p/b'],
      results: [{ ok: false, cause: 'aborted' }],
      onAttempt: () => ac.abort('timeout'),
    });
    const report = await runMailTurn(
      input(newMail('m1'), { allowedModels: ['p/a', 'p/b'], signal: ac.signal }),
      adapter,
    );
    expect(calls.filter((c) => c.startsWith('attempt'))).toEqual(['attempt p/a']);
    expect(report).toMatchObject({ ok: false, kind: 'timeout' });
    expect(sends()[0]?.body).toContain('aborted');
  });

  it('a set-up problem stops the model order: one attempt, a bridge_setup failure mail (not "all models failed")', async () => {
    const { adapter, calls } = host({
      catalogue: ['p/a', 'p/b'],
      results: [{ ok: false, cause: 'plugin not loaded for /srv/x', setupProblem: true }],
    });
    const report = await runMailTurn(input(newMail('m1'), { allowedModels: ['p/a', 'p/b'] }), adapter);
    expect(calls.filter((c) => c.startsWith('attempt'))).toEqual(['attempt p/a']);
    expect(report).toMatchObject({ ok: false, kind: 'bridge_setup' });
    expect(sends()[0]?.body).toContain(formatText('failure.bridge_setup'));
    expect(sends()[0]?.body).toContain('plugin not loaded for /srv/x');
    expect(sends()[0]?.body).not.toContain(formatText('failure.all_models_failed'));
  });

  it('a timeout failure mail names the configured turn timeout (B-7, B-9)', async () => {
    const ac = new AbortController();
    const { adapter } = host({
      results: [{ ok: false, cause: 'aborted' }],
      onAttempt: () => ac.abort('timeout'),
    });
    await runMailTurn(input(newMail('m1'), { signal: ac.signal, turnTimeoutMs: 15_000 }), adapter);
    expect(sends()[0]?.body).toContain(formatText('failure.timeout', { timeout_s: 15 }));
    expect(sends()[0]?.body).not.toMatch(/\b600\b/);
  });

  it('a shutdown (reason "shutdown") sends no failure mail: the mail stays for catch-up (B-15)', async () => {
    const ac = new AbortController();
    const { adapter } = host({
      results: [{ ok: false, cause: 'aborted' }],
      onAttempt: () => ac.abort('shutdown'),
    });
    const report = await runMailTurn(input(newMail('m1'), { signal: ac.signal }), adapter);
    expect(report).toMatchObject({ ok: false, failureMailSent: false });
    expect(sends()).toEqual([]);
  });
});

describe('runMailTurn: working directory (B-3)', () => {
  it('an address path that does not exist: fallback directory, and the prompt tells the model', async () => {
    let prompt = '';
    let cwd = '';
    const { adapter } = host({
      onAttempt: (_a, ctx) => {
        prompt = ctx.prompt;
        cwd = ctx.cwd;
      },
    });
    const i = input(newMail('m1', { to_workspace: '/does/not/exist' }));
    await runMailTurn(i, adapter);
    expect(cwd.startsWith(join(i.dataDir, 'workspaces'))).toBe(true);
    expect(prompt).toContain(
      formatText('prompt.note.workspace_fallback', { path: '/does/not/exist', reason: 'missing', cwd }),
    );
    expect(i.bus.events.find((e) => e.type === 'workspace_fallback')).toMatchObject({
      cwd,
      reason: 'missing',
    });
  });

  it('an existing address path: no note', async () => {
    let prompt = '';
    const { adapter } = host({
      onAttempt: (_a, ctx) => {
        prompt = ctx.prompt;
      },
    });
    await runMailTurn(input(newMail('m1', { to_workspace: dir })), adapter);
    expect(prompt).not.toContain(
      formatText('prompt.note.workspace_fallback', { path: dir, reason: '', cwd: '' }).slice(0, 30),
    );
  });
});

describe('runMailTurn: relay (B-10)', () => {
  it('a person sender gets the final text (no reasoning), subject from the catalogue, stable key', async () => {
    const { adapter } = host();
    const i = input(newMail('m1', { subject: 'How long?' }));
    const report = await runMailTurn(i, adapter);
    expect(report).toMatchObject({ ok: true, relay: { sent: true, mailId: 'm_out', duplicate: false } });
    expect(sends()[0]).toMatchObject({
      to: 'alice@.pi-fix',
      subject: 'Re: How long?',
      body: 'Done: 4 lines.',
      reply_to: 'm1',
      from_session_id: 's1',
      relay: 'summary',
      relay_key: mailRelayKey('m1'),
    });
    expect(i.bus.events.find((e) => e.type === 'relayed')).toMatchObject({
      relay_key: mailRelayKey('m1'),
    });
  });

  it('a host without entry ids still relays, keyed by the mail: exactly one relay per mail', async () => {
    const { adapter } = host({ results: [{ lastEntryId: '' }] });
    await runMailTurn(input(newMail('m_noid')), adapter);
    await runMailTurn(input(newMail('m_noid')), adapter);
    expect(sends().map((s) => s.relay_key)).toEqual([mailRelayKey('m_noid'), mailRelayKey('m_noid')]);
  });

  it('the relay commits through the gate: a turn given up after its timeout sends no relay', async () => {
    const gate = new TurnGate();
    await gate.abandon(0);
    const { adapter } = host();
    const i = input(newMail('m1'), { commit: (fn) => gate.commit(fn) });
    const report = await runMailTurn(i, adapter);
    expect(report).toMatchObject({ ok: true, relay: { sent: false } });
    expect(sends()).toEqual([]);
    expect(i.bus.events.find((e) => e.type === 'relay_skipped')).toMatchObject({
      reason: expect.stringMatching(/given up/),
    });
  });

  it('a turn that ends well after the shutdown began relays nothing and sends no failure mail (B-15)', async () => {
    const ac = new AbortController();
    const { adapter } = host({ onAttempt: () => ac.abort('shutdown') });
    const report = await runMailTurn(input(newMail('m1'), { signal: ac.signal }), adapter);
    expect(report).toMatchObject({ ok: false, failureMailSent: false });
    expect(sends()).toEqual([]);
  });

  it('the relay subject is a catalogue text (zh-CN) and an existing prefix is kept', async () => {
    const { adapter } = host();
    await runMailTurn(input(newMail('m1', { subject: '多久？' }), { locale: 'zh-CN' }), adapter);
    expect(sends()[0]?.subject).toBe('回复：多久？');
    expect(relaySubject('Re: x', 'en')).toBe('Re: x');
    expect(relaySubject('x', 'en')).toBe(formatText('relay.subject', { subject: 'x' }));
    // At the limit: clipped to 500 UTF-16 units, the emoji that would straddle unit 500 dropped whole.
    const clipped = relaySubject(`${'x'.repeat(495)}😀yy`, 'en');
    expect(clipped).toBe(`Re: ${'x'.repeat(495)}`);
    expect(relaySubject('y'.repeat(600), 'en')).toHaveLength(500);
  });

  it('no relay when the model already mailed the reply target (explicit send recorded)', async () => {
    const { adapter } = host({ onAttempt: (_a, ctx) => ctx.turn.recordSend(['alice']) });
    const i = input(newMail('m1'));
    const report = await runMailTurn(i, adapter);
    expect(report).toMatchObject({ ok: true, relay: { sent: false } });
    expect(sends()).toEqual([]);
    expect(i.bus.events.find((e) => e.type === 'relay_skipped')).toMatchObject({
      reason: expect.stringMatching(/already mailed/),
    });
  });

  it('no relay to an agent sender (B-6): it must call send_mail', async () => {
    const { adapter } = host();
    const report = await runMailTurn(input(newMail('m1', { from_human: false })), adapter);
    expect(report).toMatchObject({ ok: true, relay: { sent: false } });
    expect(sends()).toEqual([]);
  });
});

describe('runMailTurn: naming sync (B-11)', () => {
  it('the name the bridge gave is the baseline; a later rename is synced once, fingerprint stored before the request', async () => {
    const { adapter } = host({ createdName: 'Fix the thing' });
    const i = input(newMail('m1'));
    let storedAtRequest = '';
    gw.on('POST', '/api/v1/sessions/:id/sync', async (req) => {
      const [file] = await readdir(join(i.dataDir, 'bindings'));
      storedAtRequest = await readFile(join(i.dataDir, 'bindings', file ?? ''), 'utf8');
      return {
        json: { session_id: 's1', alias: 'pi-renamed', title: (req.json as { title: string }).title },
      };
    });
    const syncs = () => gw.requests.filter((r) => r.path === '/api/v1/sessions/s1/sync');
    await runMailTurn(i, {
      ...adapter,
      runAttempt: (a, c) => adapter.runAttempt(a, c).then((o) => ({ ...o, sessionName: 'Fix the thing' })),
    });
    expect(syncs(), 'the name we gave is not synced back').toHaveLength(0);
    expect(i.bus.events.find((e) => e.type === 'naming_sync_skipped')).toMatchObject({ reason: 'unchanged' });
    const again = input(newMail('m2'), { dataDir: i.dataDir, bindings: i.bindings });
    await runMailTurn(again, {
      ...adapter,
      runAttempt: (a, c) => adapter.runAttempt(a, c).then((o) => ({ ...o, sessionName: 'Renamed' })),
    });
    expect(syncs()).toHaveLength(1);
    expect(JSON.parse(storedAtRequest).naming.fingerprint, 'stored before the request').not.toBe('');
    expect((await i.bindings.get('s1'))?.naming?.alias).toBe('pi-renamed');
    expect(again.bus.events.find((e) => e.type === 'naming_synced')).toMatchObject({
      alias: 'pi-renamed',
      title: 'Renamed',
    });
  });

  it('an adopted session is not synced', async () => {
    const { adapter } = host({ sessions: { abc: '' }, results: [{ sessionName: 'Mine' }] });
    await runMailTurn(input(newMail('m1', { platform_session_id: 'abc' })), adapter);
    expect(gw.requests.filter((r) => r.path.endsWith('/sync'))).toEqual([]);
  });
});

describe('runMailTurn: the running turn (registry, permission seam)', () => {
  it('after the turn ended, its kept seams refuse and a late sessionCreated rebinds nothing', async () => {
    let kept: { ctx: Parameters<TurnAdapter['runAttempt']>[1] } | undefined;
    const { adapter } = host({
      onAttempt: (_a, ctx) => {
        kept = { ctx };
      },
    });
    const i = input(newMail('m1'));
    await runMailTurn(i, adapter);
    const bound = (await i.bindings.get('s1'))?.platformSessionId;
    expect(await kept?.ctx.turn.decide({ toolName: 'bash', input: {}, toolCallId: 'c9' })).toEqual({
      allow: false,
      reason: formatText('permission.turn_ended'),
    });
    expect(await kept?.ctx.turn.ask([{ question: 'q?' }])).toMatchObject({ ok: false });
    await kept?.ctx.sessionCreated({ platformSessionId: 'late' });
    expect((await i.bindings.get('s1'))?.platformSessionId).toBe(bound);
    expect(gw.requests.filter((r) => r.path === '/api/v1/permission/request')).toEqual([]);
  });

  it('a host that throws a non-Error or breaks in an unexpected place still ends in one failure mail', async () => {
    const adapter: TurnAdapter = {
      platform: 'pi',
      findSession: async () => undefined,
      // A bug in the host: the outcome's finalParts is not an array.
      runAttempt: async () => ({ ok: true, finalParts: 'text' }) as never,
    };
    const report = await runMailTurn(input(newMail('m1')), adapter);
    expect(report).toMatchObject({ ok: false, failureMailSent: true });
    expect(sends()[0]?.body).toContain('invalid attempt outcome');
  });

  it('is found by its platform session while it runs, and its seam applies the mail mode (P-1)', async () => {
    const registry = new TurnRegistry();
    let found: unknown;
    let outcome: unknown;
    const { adapter } = host({
      onAttempt: async (_a, ctx) => {
        found = registry.byPlatformSession('ps1');
        outcome = await ctx.turn.decide({
          toolName: 'bash',
          input: { command: 'rm -rf /' },
          toolCallId: 'c1',
        });
      },
    });
    await runMailTurn(input(newMail('m1', { permission_mode: 'plan' }), { registry }), adapter);
    expect((found as { mail: NewMailEvent } | undefined)?.mail.mail_id).toBe('m1');
    expect(outcome).toMatchObject({
      allow: false,
      reason: formatText('permission.plan.denied', { tool: 'bash' }),
    });
    expect(registry.size, 'removed when the turn ends').toBe(0);
    expect(registry.byPlatformSession('ps1')).toBeUndefined();
  });
});
