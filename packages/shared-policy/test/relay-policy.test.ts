import { NewMailEvent } from '@agentmail/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  type AutoRelayInput,
  buildTurnPrompt,
  decideAutoRelay,
  isSameRecipient,
  planTurn,
  type TurnMail,
  type TurnPlan,
} from '../src/relay-policy.js';
import { formatText, type Locale } from '../src/texts/index.js';

const SELF = 'pi';

function mail(overrides: Partial<TurnMail> = {}): TurnMail {
  return {
    mail_id: 'm_1',
    from_name: 'alice',
    from_human: true,
    subject: 'Fix import paths',
    in_reply_to: '',
    parent_from: '',
    session_alias: 'pi-fix-import-paths',
    reply_address: 'alice@.pi-fix-import-paths',
    self_address: 'pi@/srv/app.pi-fix-import-paths',
    kind: 'mail',
    ...overrides,
  };
}

const personText = (m: TurnMail, locale: Locale = 'en') =>
  formatText('prompt.reply.to_person', { reply_address: (m.reply_address ?? '').trim() }, locale);

describe('planTurn headline (SPEC B-5)', () => {
  it('a new task from a person', () => {
    const plan = planTurn({ mail: mail(), selfName: SELF });
    expect(plan.headlineKind).toBe('new_task');
    expect(plan.headline).toContain('A new task has arrived');
    expect(plan.headline).toContain('The sender, alice, is a person.');
    expect(plan.senderIsAgent).toBe(false);
  });

  it('a reply to the recipient’s own mail says it is not a new task', () => {
    const plan = planTurn({ mail: mail({ in_reply_to: 'm_0', parent_from: SELF }), selfName: SELF });
    expect(plan.headlineKind).toBe('reply_to_own');
    expect(plan.headline).toMatch(/reply to your mail m_0, not a new task/);
    // parent_from given as an address counts by its name part
    expect(
      planTurn({ mail: mail({ in_reply_to: 'm_0', parent_from: 'pi@/srv/app.x' }), selfName: SELF })
        .headlineKind,
    ).toBe('reply_to_own');
  });

  it('a continuation of a multi-party thread names the other parent sender', () => {
    const plan = planTurn({ mail: mail({ in_reply_to: 'm_0', parent_from: 'bob' }), selfName: SELF });
    expect(plan.headlineKind).toBe('thread_continuation');
    expect(plan.headline).toMatch(/multi-party thread: it answers a mail from bob, not one of yours/);
    expect(plan.headline).not.toMatch(/not a new task/);
  });

  it('in_reply_to without parent_from is a continuation, never "reply to your mail"', () => {
    expect(
      planTurn({ mail: mail({ in_reply_to: 'm_0', parent_from: '' }), selfName: SELF }).headlineKind,
    ).toBe('thread_continuation');
  });

  it('parent_from = self without in_reply_to is a new task', () => {
    expect(planTurn({ mail: mail({ parent_from: SELF }), selfName: SELF }).headlineKind).toBe('new_task');
  });

  it('a calendar mail', () => {
    const plan = planTurn({ mail: mail({ kind: 'calendar' }), selfName: SELF });
    expect(plan.headlineKind).toBe('calendar');
    expect(plan.headline).toMatch(/scheduled calendar mail/);
  });

  it('notes a backlog delivery (SPEC B-20) and a continued session', () => {
    const plain = planTurn({ mail: mail(), selfName: SELF }).headline;
    expect(plain).not.toMatch(/Backlog delivery/);
    expect(plain).not.toMatch(/existing session/);
    const both = planTurn({ mail: mail(), selfName: SELF, backlog: true, continuedSession: true }).headline;
    expect(both).toMatch(/Backlog delivery: this mail arrived while you were offline/);
    expect(both).toMatch(/arrives in an existing session/);
  });

  it('notes a retry (SPEC B-10, B-14): an earlier turn of the mail ended without an outcome', () => {
    expect(planTurn({ mail: mail(), selfName: SELF }).headline).not.toContain(
      formatText('prompt.note.retry'),
    );
    const retry = planTurn({ mail: mail(), selfName: SELF, retry: true, backlog: true }, 'zh-CN').headline;
    expect(retry).toContain(formatText('prompt.note.retry', {}, 'zh-CN'));
    expect(retry, 'a retry is no backlog delivery').not.toContain(
      formatText('prompt.note.backlog', {}, 'zh-CN'),
    );
  });

  it.each<[string, boolean | null | undefined]>([
    ['false', false],
    ['missing', undefined],
    ['null', null],
  ])('says the sender is an agent when from_human is %s (SPEC B-6)', (_label, fromHuman) => {
    const m = mail({ from_name: 'coder', from_human: fromHuman });
    const plan = planTurn({ mail: m, selfName: SELF });
    expect(plan.senderIsAgent).toBe(true);
    expect(plan.headline).toContain('The sender, coder, is an AI agent, not a person.');
  });

  it('counts a mail without the from_human field as from an agent', () => {
    const { from_human: _omitted, ...rest } = mail();
    const plan = planTurn({ mail: rest, selfName: SELF });
    expect(plan.senderIsAgent).toBe(true);
    expect(plan.autoRelay).toEqual({
      enabled: false,
      reason: expect.stringMatching(/from_human is missing/),
    });
  });

  it('speaks Chinese with locale zh-CN', () => {
    const plan = planTurn({ mail: mail({ in_reply_to: 'm_0', parent_from: SELF }), selfName: SELF }, 'zh-CN');
    expect(plan.headline).toContain('不是新任务');
    expect(plan.replyInstruction).toContain('自动通过邮件发回 alice@.pi-fix-import-paths');
    expect(plan.locale).toBe('zh-CN');
  });
});

describe('planTurn input', () => {
  it('takes a decoded protocol new_mail event as is (SPEC G-20)', () => {
    const event: NewMailEvent = NewMailEvent.parse({
      mail_id: 'm_1',
      session_id: 's_1',
      from_name: 'alice',
      from_human: true,
      to_workspace: '/srv/app',
      subject: 'Fix import paths',
      in_reply_to: '',
      parent_from: '',
      permission_mode: 'workspace',
      permission_enforcement: 'native',
      session_alias: 'pi-fix-import-paths',
      reply_address: 'alice@.pi-fix-import-paths',
      self_address: 'pi@/srv/app.pi-fix-import-paths',
      platform_session_id: '',
      kind: 'mail',
    });
    const plan = planTurn({ mail: event, selfName: SELF });
    expect(plan.autoRelay).toEqual({ enabled: true });
    expect(buildTurnPrompt(plan, event)).toContain('Mail id: m_1');
  });
});

describe('buildTurnPrompt names the session the mail is in', () => {
  it('an aliased session by its alias, a default session as the default session (never an empty name)', () => {
    const named = mail();
    expect(buildTurnPrompt(planTurn({ mail: named, selfName: SELF }), named)).toContain(
      'You: pi@/srv/app.pi-fix-import-paths (session pi-fix-import-paths)',
    );
    for (const session_alias of ['', '  ', undefined]) {
      const m = mail({ session_alias, self_address: 'pi@/srv/app.', reply_address: 'alice@.' });
      const prompt = buildTurnPrompt(planTurn({ mail: m, selfName: SELF }), m);
      expect(prompt).toContain('You: pi@/srv/app. (the default session)');
      expect(prompt).not.toMatch(/\(session\s*\)/);
      const zh = buildTurnPrompt(planTurn({ mail: m, selfName: SELF }, 'zh-CN'), m, 'zh-CN');
      expect(zh).toContain('（默认会话）');
    }
  });
});

describe('planTurn reply instruction and relay come from one decision (SPEC B-6)', () => {
  it('to a person: finish the work, it will be mailed back; relay enabled', () => {
    const m = mail();
    const plan = planTurn({ mail: m, selfName: SELF });
    expect(plan.autoRelay).toEqual({ enabled: true });
    expect(plan.replyInstruction).toBe(personText(m));
    expect(plan.replyInstruction).toMatch(
      /Finish the work and state the result.*mailed back to alice@\.pi-fix/,
    );
  });

  it('to an agent: nothing is sent unless send_mail; relay disabled with a reason', () => {
    const m = mail({ from_name: 'coder', from_human: false, reply_address: 'coder@/srv/x.fix' });
    const plan = planTurn({ mail: m, selfName: SELF });
    expect(plan.autoRelay).toEqual({ enabled: false, reason: expect.stringMatching(/sender is an agent/) });
    expect(plan.replyInstruction).toMatch(/^Nothing is sent unless you call send_mail\./);
    expect(plan.replyInstruction).toMatch(/send_mail to coder@\/srv\/x\.fix and reply only with substance/);
  });

  it('a person without reply_address: no relay, so no promise of one', () => {
    const plan = planTurn({ mail: mail({ reply_address: '' }), selfName: SELF });
    expect(plan.autoRelay).toEqual({ enabled: false, reason: expect.stringMatching(/no reply_address/) });
    expect(plan.replyInstruction).toMatch(/^Nothing is sent unless you call send_mail/);
    expect(plan.replyInstruction).toContain('send_mail to alice');
  });

  const eventArb: fc.Arbitrary<TurnMail> = fc.record(
    {
      mail_id: fc.string({ minLength: 1, maxLength: 8 }),
      from_name: fc.oneof(
        fc.constant('alice'),
        fc.constant(SELF),
        fc.constant(''),
        fc.string({ maxLength: 6 }),
      ),
      from_human: fc.oneof(fc.boolean(), fc.constant(null), fc.constant(undefined)),
      subject: fc.string({ maxLength: 20 }),
      in_reply_to: fc.oneof(fc.constant(''), fc.constant(null), fc.string({ maxLength: 6 })),
      parent_from: fc.oneof(
        fc.constant(''),
        fc.constant(SELF),
        fc.constant('bob'),
        fc.string({ maxLength: 6 }),
      ),
      session_alias: fc.string({ maxLength: 10 }),
      reply_address: fc.oneof(
        fc.constant(''),
        fc.constant('  '),
        fc.constant('alice@.x'),
        fc.string({ maxLength: 12 }),
      ),
      self_address: fc.string({ maxLength: 12 }),
      kind: fc.oneof(fc.constant('mail'), fc.constant('calendar'), fc.constant(undefined)),
    },
    { requiredKeys: ['mail_id', 'from_name', 'subject'] },
  );
  const inputArb = fc.record({
    mail: eventArb,
    backlog: fc.boolean(),
    continuedSession: fc.boolean(),
    locale: fc.constantFrom<Locale>('en', 'zh-CN'),
  });

  it('the instruction is the person text iff auto relay is enabled, for any event (property)', () => {
    fc.assert(
      fc.property(inputArb, ({ mail: m, backlog, continuedSession, locale }) => {
        const plan = planTurn({ mail: m, selfName: SELF, backlog, continuedSession }, locale);
        const promisesRelay = plan.replyInstruction === personText(m, locale);
        expect(promisesRelay).toBe(plan.autoRelay.enabled);
        // and the "nothing is sent" text is used exactly otherwise
        const agentPrefix = formatText('prompt.reply.to_agent', {}, locale).split('{')[0] ?? '';
        expect(plan.replyInstruction.startsWith(agentPrefix)).toBe(!plan.autoRelay.enabled);
        // a relay is never promised to an agent (missing from_human counts as agent)
        if (plan.autoRelay.enabled) expect(m.from_human).toBe(true);
        else expect(plan.autoRelay.reason.length).toBeGreaterThan(10);
        expect(plan.senderIsAgent).toBe(m.from_human !== true);
      }),
      { numRuns: 2000 },
    );
  });

  it('decideAutoRelay sends only what the plan promised (property)', () => {
    fc.assert(
      fc.property(inputArb, fc.string({ maxLength: 20 }), ({ mail: m, locale }, text) => {
        const plan = planTurn({ mail: m, selfName: SELF }, locale);
        const decision = decideAutoRelay({
          plan,
          finalParts: [{ type: 'text', text }],
          explicitSendTargets: [],
          replyAddress: m.reply_address ?? '',
          platformSessionId: 'ps_1',
          lastEntryId: 'e_1',
        });
        if (decision.send) expect(plan.replyInstruction).toBe(personText(m, locale));
        if (!plan.autoRelay.enabled) expect(decision).toEqual({ send: false, reason: plan.autoRelay.reason });
      }),
      { numRuns: 1000 },
    );
  });
});

describe('buildTurnPrompt (SPEC B-5, B-6)', () => {
  it('composes headline, addresses, subject, how to read, and the reply instruction', () => {
    const m = mail({ subject: 'Fix\nimport   paths' });
    const plan = planTurn({ mail: m, selfName: SELF, backlog: true });
    const prompt = buildTurnPrompt(plan, m);
    const blocks = prompt.split('\n\n');
    expect(blocks[0]).toBe(plan.headline);
    expect(blocks.at(-1)).toBe(plan.replyInstruction);
    expect(prompt).toContain('From: alice (person), reply address: alice@.pi-fix-import-paths');
    expect(prompt).toContain('You: pi@/srv/app.pi-fix-import-paths (session pi-fix-import-paths)');
    expect(prompt).toContain('Subject: Fix import paths');
    expect(prompt).toContain('Mail id: m_1');
    expect(prompt).toMatch(/read_mail tool \(mail id m_1\).*read_inbox/);
    expect(prompt).not.toMatch(/\{[a-z_]+\}/); // every placeholder filled
  });

  it('labels an agent sender and uses the plan locale', () => {
    const m = mail({ from_name: 'coder', from_human: false });
    const zh = buildTurnPrompt(planTurn({ mail: m, selfName: SELF }, 'zh-CN'), m);
    expect(zh).toContain('发件人：coder（AI 智能体）');
    expect(zh).toContain('read_mail');
    expect(zh).not.toMatch(/\{[a-z_]+\}/);
  });
});

describe('decideAutoRelay (SPEC B-10)', () => {
  const personPlan: TurnPlan = planTurn({ mail: mail(), selfName: SELF });
  const base: AutoRelayInput = {
    plan: personPlan,
    finalParts: [{ type: 'text', text: 'Done: paths fixed.' }],
    explicitSendTargets: [],
    replyAddress: 'alice@.pi-fix-import-paths',
    platformSessionId: 'ps_1',
    lastEntryId: 'e_9',
  };

  it('relays the final text to the reply address with the stable key', () => {
    expect(decideAutoRelay(base)).toEqual({
      send: true,
      to: 'alice@.pi-fix-import-paths',
      body: 'Done: paths fixed.',
      relayKey: 'auto-relay:ps_1:e_9',
    });
    expect(decideAutoRelay(base)).toEqual(decideAutoRelay(base));
  });

  it("with the mail id, the key is the mail's: the same for every run of it, whatever ids the host gives (B-10, G-32)", () => {
    const first = decideAutoRelay({ ...base, mailId: 'm_1' });
    // The same mail run again after a crash: the host's session and last entry are new.
    const rerun = decideAutoRelay({ ...base, mailId: 'm_1', platformSessionId: 'ps_2', lastEntryId: 'e_31' });
    const closedClient = decideAutoRelay({ ...base, mailId: 'm_1', lastEntryId: '' });
    expect(first).toMatchObject({ send: true, relayKey: 'auto-relay:mail:m_1' });
    expect(rerun).toEqual(first);
    expect(closedClient).toEqual(first);
    expect(decideAutoRelay({ ...base, mailId: 'm_2' })).toMatchObject({ relayKey: 'auto-relay:mail:m_2' });
  });

  it('does not relay when the plan says no, and logs the plan’s reason', () => {
    const plan = planTurn({ mail: mail({ from_human: false }), selfName: SELF });
    const decision = decideAutoRelay({ ...base, plan });
    expect(decision).toEqual({ send: false, reason: expect.stringMatching(/sender is an agent/) });
  });

  it('relays only text parts, never reasoning', () => {
    const decision = decideAutoRelay({
      ...base,
      finalParts: [
        { type: 'reasoning', text: 'secret chain of thought' },
        { type: 'text', text: 'First.' },
        { type: 'thinking', text: 'more thoughts' },
        { type: 'tool-call' },
        { type: 'text', text: '  ' },
        { type: 'text', text: 'Second.\n' },
      ],
    });
    expect(decision).toMatchObject({ send: true, body: 'First.\n\nSecond.' });
  });

  it.each<[string, AutoRelayInput['finalParts']]>([
    ['no parts', []],
    ['only whitespace', [{ type: 'text', text: ' \n\t ' }]],
    ['only reasoning', [{ type: 'reasoning', text: 'I think…' }]],
    ['a text part without text', [{ type: 'text' }]],
  ])('sends no mail for %s', (_label, finalParts) => {
    expect(decideAutoRelay({ ...base, finalParts })).toEqual({
      send: false,
      reason: expect.stringMatching(/no text/),
    });
  });

  it.each([
    'alice@.pi-fix-import-paths',
    'alice',
    'alice@.',
    'alice@.other-session',
    ' alice@.pi-fix-import-paths ',
  ])('skips when the model already mailed the reply target (%j)', (target) => {
    const decision = decideAutoRelay({ ...base, explicitSendTargets: ['bob', target] });
    expect(decision).toEqual({
      send: false,
      reason: expect.stringMatching(/already mailed.*no second copy/),
    });
  });

  it('still relays when the model mailed someone else', () => {
    const decision = decideAutoRelay({ ...base, explicitSendTargets: ['bob', 'alicia@.x', 'pi@/srv/app.y'] });
    expect(decision.send).toBe(true);
  });

  it('gives a reason when no stable key can be built or no reply address is given', () => {
    expect(decideAutoRelay({ ...base, lastEntryId: '' })).toEqual({
      send: false,
      reason: expect.stringMatching(/no stable relay key: lastEntryId is empty/),
    });
    expect(decideAutoRelay({ ...base, replyAddress: ' ' })).toEqual({
      send: false,
      reason: expect.stringMatching(/no reply address/),
    });
  });
});

describe('isSameRecipient (SPEC B-10)', () => {
  it.each<[string, string, boolean]>([
    ['alice', 'alice@.s1', true],
    ['alice@.s2', 'alice@.s1', true],
    ['pi@/srv/app.s2', 'pi@/srv/app.s1', true],
    ['pi@/srv/app/.', 'pi@/srv/app.s1', true],
    ['pi', 'pi@/srv/app.s1', true],
    ['pi@/srv/other.', 'pi@/srv/app.s1', false],
    ['Alice', 'alice@.s1', false],
    ['bob', 'alice@.s1', false],
    ['', 'alice@.s1', false],
    ['alice@relative', 'alice@.s1', true], // unparsable: compared by name
  ])('%j vs %j → %s', (target, reply, same) => {
    expect(isSameRecipient(target, reply)).toBe(same);
  });
});
