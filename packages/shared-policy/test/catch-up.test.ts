import type { MailSummary } from '@agentmail/protocol';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type BacklogDelivery,
  CATCH_UP_MAX_PER_PASS,
  CatchUp,
  type CatchUpMail,
  planCatchUp,
  SeenMails,
} from '../src/catch-up.js';
import { hasErrorCode } from '../src/errors.js';

interface Item extends CatchUpMail {
  id: string;
  created_at: string;
  is_permission: boolean;
  permission_mode: string;
}

function mail(id: string, minute: number, over: Partial<Item> = {}): Item {
  return {
    id,
    created_at: `2026-11-29T10:${String(minute).padStart(2, '0')}:00.000Z`,
    is_permission: false,
    permission_mode: 'workspace',
    ...over,
  };
}

function setup(mails: Item[], seen = new SeenMails()) {
  const delivered: Array<{ id: string; delivery: BacklogDelivery }> = [];
  const limits: number[] = [];
  const catchUp = new CatchUp<Item>({
    listUnread: async (limit) => {
      limits.push(limit);
      return mails;
    },
    deliver: async (m, delivery) => {
      delivered.push({ id: m.id, delivery });
    },
    seen,
  });
  return { catchUp, delivered, limits, seen };
}

describe('SeenMails', () => {
  it('claim is true the first time only', () => {
    const seen = new SeenMails();
    expect(seen.claim('m1')).toBe(true);
    expect(seen.claim('m1')).toBe(false);
    expect(seen.has('m1')).toBe(true);
  });

  it('is a bounded LRU: the least recently used id is forgotten', () => {
    const seen = new SeenMails(2);
    seen.claim('a');
    seen.claim('b');
    seen.claim('a'); // a is now the most recent
    seen.claim('c'); // evicts b
    expect(seen.size).toBe(2);
    expect(seen.has('a')).toBe(true);
    expect(seen.has('b')).toBe(false);
    expect(seen.has('c')).toBe(true);
  });

  it('rejects a capacity below 1', () => {
    expect(() => new SeenMails(0)).toThrow(/capacity/);
    try {
      new SeenMails(1.5);
    } catch (e) {
      expect(hasErrorCode(e, 'AM_OPTION_OUT_OF_RANGE')).toBe(true);
    }
  });
});

describe('CatchUp (B-20, G-39)', () => {
  it('the protocol inbox item fits the catch-up mail shape', () => {
    expectTypeOf<MailSummary>().toExtend<CatchUpMail>();
  });

  it('waits for the first successful heartbeat, runs once, and never again', async () => {
    const { catchUp, delivered } = setup([mail('m1', 1)]);
    expect(await catchUp.afterHeartbeat(false)).toEqual({ status: 'waiting' });
    expect(delivered).toEqual([]);
    expect((await catchUp.afterHeartbeat(true)).status).toBe('ran');
    expect(delivered.map((d) => d.id)).toEqual(['m1']);
    expect(await catchUp.afterHeartbeat(true)).toEqual({ status: 'already_ran' });
    expect(await catchUp.afterHeartbeat(false)).toEqual({ status: 'already_ran' });
    expect(delivered).toHaveLength(1);
  });

  it('delivers oldest first, at most 5 per pass', async () => {
    const mails = [7, 3, 9, 1, 5, 2, 8].map((m) => mail(`m${m}`, m));
    const { catchUp, delivered } = setup(mails);
    const result = await catchUp.afterHeartbeat(true);
    expect(delivered.map((d) => d.id)).toEqual(['m1', 'm2', 'm3', 'm5', 'm7']);
    expect(CATCH_UP_MAX_PER_PASS).toBe(5);
    expect(result.status === 'ran' && result.skipped).toEqual([
      { id: 'm8', reason: 'over_limit' },
      { id: 'm9', reason: 'over_limit' },
    ]);
  });

  it('orders numeric (ms) and ISO timestamps alike; unparsable ones go last', () => {
    const seen = new SeenMails();
    const plan = planCatchUp(
      [
        { id: 'bad', created_at: 'yesterday' },
        { id: 'late', created_at: Date.parse('2026-11-29T12:00:00Z') },
        { id: 'early', created_at: '2026-11-29T09:00:00Z' },
      ],
      seen,
    );
    expect(plan.deliver.map((m) => m.id)).toEqual(['early', 'late', 'bad']);
  });

  it('delivers serially: the next mail starts only after the previous one finished', async () => {
    const events: string[] = [];
    let release!: () => void;
    const first = new Promise<void>((r) => {
      release = r;
    });
    const catchUp = new CatchUp<Item>({
      listUnread: async () => [mail('m1', 1), mail('m2', 2)],
      deliver: async (m) => {
        events.push(`start ${m.id}`);
        if (m.id === 'm1') await first;
        events.push(`end ${m.id}`);
      },
      seen: new SeenMails(),
    });
    const run = catchUp.afterHeartbeat(true);
    await flushUntil(() => events.length === 1);
    expect(events).toEqual(['start m1']);
    release();
    await run;
    expect(events).toEqual(['start m1', 'end m1', 'start m2', 'end m2']);
  });

  it('skips permission mails', async () => {
    const { catchUp, delivered } = setup([mail('p1', 1, { is_permission: true }), mail('m2', 2)]);
    const result = await catchUp.afterHeartbeat(true);
    expect(delivered.map((d) => d.id)).toEqual(['m2']);
    expect(result.status === 'ran' && result.skipped).toEqual([{ id: 'p1', reason: 'permission' }]);
  });

  it('shares the de-duplication set with the SSE path, both ways', async () => {
    const seen = new SeenMails();
    seen.claim('m1'); // SSE delivered m1 already
    const { catchUp, delivered } = setup([mail('m1', 1), mail('m2', 2)], seen);
    await catchUp.afterHeartbeat(true);
    expect(delivered.map((d) => d.id)).toEqual(['m2']);
    // and a new_mail event for m2 arriving now is a duplicate for the SSE path
    expect(seen.claim('m2')).toBe(false);
  });

  it('already-seen mails do not take one of the 5 places of the pass', async () => {
    const seen = new SeenMails();
    seen.claim('m1');
    const { catchUp, delivered } = setup(
      [1, 2, 3, 4, 5, 6].map((m) => mail(`m${m}`, m)),
      seen,
    );
    await catchUp.afterHeartbeat(true);
    expect(delivered.map((d) => d.id)).toEqual(['m2', 'm3', 'm4', 'm5', 'm6']);
  });

  it('a mail the SSE path claims during the pass is not delivered twice', async () => {
    const seen = new SeenMails();
    const delivered: string[] = [];
    const catchUp = new CatchUp<Item>({
      listUnread: async () => [mail('m1', 1), mail('m2', 2)],
      deliver: async (m) => {
        delivered.push(m.id);
        seen.claim('m2'); // the SSE event for m2 arrives while m1 runs
      },
      seen,
    });
    const result = await catchUp.afterHeartbeat(true);
    expect(delivered).toEqual(['m1']);
    expect(result.status === 'ran' && result.skipped).toEqual([{ id: 'm2', reason: 'seen' }]);
  });

  it("carries each mail's permission_mode (normalised) and marks the delivery as backlog", async () => {
    const { catchUp, delivered } = setup([
      mail('m1', 1, { permission_mode: 'full' }),
      mail('m2', 2, { permission_mode: 'plan' }),
      mail('m3', 3, { permission_mode: 'FULL' }),
    ]);
    await catchUp.afterHeartbeat(true);
    expect(delivered).toEqual([
      { id: 'm1', delivery: { backlog: true, permissionMode: 'full' } },
      { id: 'm2', delivery: { backlog: true, permissionMode: 'plan' } },
      { id: 'm3', delivery: { backlog: true, permissionMode: 'workspace' } },
    ]);
  });

  it('a failing delivery is recorded and the pass goes on', async () => {
    const catchUp = new CatchUp<Item>({
      listUnread: async () => [mail('m1', 1), mail('m2', 2)],
      deliver: async (m) => {
        if (m.id === 'm1') throw new Error('turn crashed');
      },
      seen: new SeenMails(),
    });
    const result = await catchUp.afterHeartbeat(true);
    expect(result.status).toBe('ran');
    if (result.status !== 'ran') return;
    expect(result.delivered.map((m) => m.id)).toEqual(['m2']);
    expect(result.failed.map((f) => f.mail.id)).toEqual(['m1']);
  });

  it('if listing fails, the next successful heartbeat tries again', async () => {
    let calls = 0;
    const delivered: string[] = [];
    const catchUp = new CatchUp<Item>({
      listUnread: async () => {
        calls += 1;
        if (calls === 1) throw new Error('503');
        return [mail('m1', 1)];
      },
      deliver: (m) => {
        delivered.push(m.id);
      },
      seen: new SeenMails(),
    });
    expect((await catchUp.afterHeartbeat(true)).status).toBe('list_failed');
    expect((await catchUp.afterHeartbeat(true)).status).toBe('ran');
    expect(delivered).toEqual(['m1']);
    expect((await catchUp.afterHeartbeat(true)).status).toBe('already_ran');
  });

  it('a heartbeat during a running pass does not start a second one', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let lists = 0;
    const catchUp = new CatchUp<Item>({
      listUnread: async () => {
        lists += 1;
        await gate;
        return [];
      },
      deliver: () => undefined,
      seen: new SeenMails(),
    });
    const first = catchUp.afterHeartbeat(true);
    expect(await catchUp.afterHeartbeat(true)).toEqual({ status: 'already_ran' });
    release();
    expect((await first).status).toBe('ran');
    expect(lists).toBe(1);
  });

  it('asks the inbox for a page big enough to find the oldest mails', async () => {
    const { catchUp, limits } = setup([]);
    await catchUp.afterHeartbeat(true);
    expect(limits).toEqual([100]);
  });
});

describe('CatchUp.again: a stream reopened without Last-Event-ID (B-20, G-22)', () => {
  it('before the start pass it waits (the start pass covers it); after it, one more pass runs', async () => {
    const mails = [mail('m1', 1)];
    const { catchUp, delivered, limits } = setup(mails);
    expect(await catchUp.again()).toEqual({ status: 'waiting' });
    expect(limits).toEqual([]);
    expect((await catchUp.afterHeartbeat(true)).status).toBe('ran');
    mails.push(mail('m2', 2)); // created while the stream was down
    const result = await catchUp.again();
    expect(result.status === 'ran' && result.delivered.map((m) => m.id)).toEqual(['m2']);
    expect(result.status === 'ran' && result.skipped).toEqual([{ id: 'm1', reason: 'seen' }]);
    expect(delivered.map((d) => d.id)).toEqual(['m1', 'm2']);
    expect(await catchUp.afterHeartbeat(true), 'nothing due any more').toEqual({ status: 'already_ran' });
  });

  it('asked while a pass runs: waits for it, then one pass for all requests made meanwhile', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    let lists = 0;
    const catchUp = new CatchUp<Item>({
      listUnread: async () => {
        lists += 1;
        if (lists === 1) await gate;
        return [];
      },
      deliver: () => undefined,
      seen: new SeenMails(),
    });
    const start = catchUp.afterHeartbeat(true);
    const a = catchUp.again();
    const b = catchUp.again();
    await flushUntil(() => lists === 1);
    release();
    expect((await start).status).toBe('ran');
    const results = [(await a).status, (await b).status].sort();
    expect(results).toEqual(['already_ran', 'ran']);
    expect(lists).toBe(2);
  });

  it('a failed listing stays due: the next successful heartbeat runs it', async () => {
    let calls = 0;
    const catchUp = new CatchUp<Item>({
      listUnread: async () => {
        calls += 1;
        if (calls === 2) throw new Error('502');
        return [mail(`m${calls}`, calls)];
      },
      deliver: () => undefined,
      seen: new SeenMails(),
    });
    await catchUp.afterHeartbeat(true);
    expect((await catchUp.again()).status).toBe('list_failed');
    expect(await catchUp.afterHeartbeat(false)).toEqual({ status: 'waiting' });
    const result = await catchUp.afterHeartbeat(true);
    expect(result.status === 'ran' && result.delivered.map((m) => m.id)).toEqual(['m3']);
    expect(calls).toBe(3);
  });
});

/** Wait (on the microtask queue, no timers) until `cond` holds. */
async function flushUntil(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 1000 && !cond(); i += 1) await Promise.resolve();
  if (!cond()) throw new Error('condition not reached');
}
