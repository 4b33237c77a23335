import { ASK_PERSON_TOOL, type Bridge } from '@agentmail/bridge-kit';
import { TurnRpcClient } from '@agentmail/bridge-kit/rpc-client';
import { formatAddress } from '@agentmail/protocol';
import { formatText } from '@agentmail/shared-policy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Stack, scriptedKitBridge, startStack } from '../src/index.js';

// ask_person (SPEC P-10) end to end: a real Gateway and person, bridges made with
// createBridge({ rpc: true }) whose host calls the mail tool the way an MCP tool server does —
// over the turn RPC, as Claude Code's and ZCode's do — and the answers as the model reads them.
// The conformance `question` scenario runs the same tool on every real host.

const STEP_MS = 30_000;

/** What the host's model asks in one turn: ask_person arguments, one call after the other. */
type Script = Array<Record<string, unknown>>;

interface AskerBridge {
  bridge: Bridge;
  name: string;
  /** The tool results of each turn, by mail subject, once the turn's calls returned. */
  results: Map<string, Array<{ text: string; isError: boolean }>>;
}

let stack: Stack;
const closers: Array<() => Promise<void>> = [];
beforeAll(async () => {
  stack = await startStack({ agentName: 'asker', platform: 'claude-code' });
}, 60_000);
afterAll(async () => {
  for (const close of closers) await close();
  await stack?.close();
});

/** A bridge for a new agent whose every turn runs `scripts[subject]` through the turn RPC. */
async function askerBridge(
  scripts: Record<string, Script>,
  config: { turnTimeoutMs?: number; questionTimeoutMs?: number } = {},
): Promise<AskerBridge> {
  const agent = await stack.addAgent('asker', 'claude-code');
  const results = new Map<string, Array<{ text: string; isError: boolean }>>();
  const { bridge, close } = await scriptedKitBridge({
    gatewayUrl: stack.gatewayUrl,
    agent,
    platform: 'claude-code',
    rpc: true,
    config,
    turn: async (ctx) => {
      const env = ctx.turn.rpcEnv;
      if (!env) throw new Error('no turn RPC env');
      const rpc = TurnRpcClient.fromEnv(env);
      const got: Array<{ text: string; isError: boolean }> = [];
      for (const args of scripts[ctx.mail.subject] ?? [])
        got.push(await rpc.callTool({ name: ASK_PERSON_TOOL, arguments: args }, { waitsForPerson: true }));
      results.set(ctx.mail.subject, got);
      return `RESULTS ${JSON.stringify(got)}`;
    },
  });
  closers.push(close);
  return { bridge, name: agent.name, results };
}

/** Mail `subject` to the asker; the sent mail. */
function mailTo(asker: AskerBridge, subject: string) {
  return stack.sendAs(undefined, formatAddress({ name: asker.name, path: stack.workdir, session: 'new' }), {
    subject,
    body: 'Ask me.',
  });
}

/** The next question whose text contains `text`. */
function questionAbout(text: string) {
  return stack.awaitPermission({
    timeoutMs: STEP_MS,
    where: (r) => r.kind === 'question' && r.question.includes(text),
  });
}

/** The tool results the turn of `subject` ended with, read from its reply. */
async function resultsOf(sent: { mail_id: string }): Promise<Array<{ text: string; isError: boolean }>> {
  const reply = await stack.awaitReply({ inReplyTo: sent.mail_id, timeoutMs: STEP_MS });
  return JSON.parse(reply.body.slice(reply.body.indexOf('RESULTS ') + 8).trim()) as Array<{
    text: string;
    isError: boolean;
  }>;
}

describe('ask_person over the turn RPC, a real Gateway and person (SPEC P-10, P-9, P-7)', () => {
  let asker: AskerBridge;
  beforeAll(async () => {
    asker = await askerBridge({
      'pick one': [{ question: 'Which colour, one?', options: ['red', 'green', 'blue'] }],
      'pick several': [
        { question: 'Which colours, several?', options: ['red', 'green', 'blue'], multi_select: true },
      ],
      'free text': [{ question: 'What name for the project?' }],
      decline: [{ question: 'May I guess the colour?', options: ['yes', 'no'] }],
      'with a note': [{ question: 'Which port, with a note?', options: ['80', '443'] }],
      'two in a row': [
        { question: 'First: which day?', options: ['monday', 'friday'] },
        { question: 'Second: which hour?' },
      ],
    });
  }, 60_000);

  it.concurrent('options answered by label: one question mail with exactly those options; the label reaches the model', async () => {
    const sent = await mailTo(asker, 'pick one');
    const q = await questionAbout('Which colour, one?');
    expect(q).toMatchObject({
      status: 'pending',
      options: ['red', 'green', 'blue'],
      session_id: sent.session_id,
    });
    expect(q.question).toContain(formatText('permission.question.hint_choose_one'));
    await stack.person.answer(q.id, ['green']);
    expect(await resultsOf(sent)).toEqual([
      { text: formatText('tools.ask_person.chose', { labels: 'green' }), isError: false },
    ]);
  });

  it.concurrent('multi-select: the person picks several labels, the model gets them all', async () => {
    const sent = await mailTo(asker, 'pick several');
    const q = await questionAbout('Which colours, several?');
    expect(q.question).toContain(formatText('permission.question.several_marker'));
    await stack.person.answer(q.id, ['blue', 'red']);
    expect(await resultsOf(sent)).toEqual([
      { text: formatText('tools.ask_person.chose', { labels: 'blue, red' }), isError: false },
    ]);
  });

  it.concurrent('free text: no options (never approve/deny), the words reach the model', async () => {
    const sent = await mailTo(asker, 'free text');
    const q = await questionAbout('What name for the project?');
    expect(q.options).toEqual([]);
    await stack.person.answer(q.id, ['Lighthouse 灯塔']);
    expect(await resultsOf(sent)).toEqual([
      { text: formatText('tools.ask_person.wrote', { text: 'Lighthouse 灯塔' }), isError: false },
    ]);
  });

  it.concurrent('decline: the model is told the person declined (an error result), the turn goes on to its reply', async () => {
    const sent = await mailTo(asker, 'decline');
    const q = await questionAbout('May I guess the colour?');
    await stack.person.decide(q.id, 'deny', 'ask Bob instead');
    expect(await resultsOf(sent), "the person's note comes with the refusal").toEqual([
      { text: formatText('permission.question.declined_note', { note: 'ask Bob instead' }), isError: true },
    ]);
  });

  it.concurrent('a note beside the chosen label reaches the model too', async () => {
    const sent = await mailTo(asker, 'with a note');
    const q = await questionAbout('Which port, with a note?');
    await stack.person.answer(q.id, ['443'], 'behind the proxy');
    expect(await resultsOf(sent)).toEqual([
      {
        text: formatText('tools.ask_person.chose_and_wrote', { labels: '443', text: 'behind the proxy' }),
        isError: false,
      },
    ]);
  });

  it.concurrent('two questions in one turn, in sequence: two question mails, each answer to its own call', async () => {
    const sent = await mailTo(asker, 'two in a row');
    const first = await questionAbout('First: which day?');
    await stack.person.answer(first.id, ['friday']);
    const second = await questionAbout('Second: which hour?');
    expect(second.id).not.toBe(first.id);
    await stack.person.answer(second.id, ['at nine']);
    expect(await resultsOf(sent)).toEqual([
      { text: formatText('tools.ask_person.chose', { labels: 'friday' }), isError: false },
      { text: formatText('tools.ask_person.wrote', { text: 'at nine' }), isError: false },
    ]);
  });
});

describe('a question whose turn ended (SPEC P-7, P-10)', () => {
  it.concurrent('the turn is stopped (turn timeout) while asking: the question is withdrawn, a late answer is told "no longer waiting"', async () => {
    const asker = await askerBridge(
      { stopped: [{ question: 'Still there, stopped?' }] },
      // The question would wait far longer: the turn's end stops it.
      { turnTimeoutMs: 4_000, questionTimeoutMs: 60_000 },
    );
    try {
      const withdrawn = asker.bridge.events.next('permission_withdrawn', undefined, { timeoutMs: STEP_MS });
      const timedOut = asker.bridge.events.next('turn_timed_out', undefined, { timeoutMs: STEP_MS });
      await mailTo(asker, 'stopped');
      const q = await questionAbout('Still there, stopped?');
      expect(await withdrawn).toMatchObject({ request_id: q.id, status: 'withdrawn' });
      await timedOut;
      expect((await stack.person.permissions('all')).find((r) => r.id === q.id)?.status).toBe('withdrawn');
      await expect(stack.person.answer(q.id, ['yes'])).rejects.toThrow(/no longer waiting/);
    } finally {
      await asker.bridge.stop();
    }
  });

  it.concurrent('the bridge shuts down while the question waits: the model gets "no answer" at once (declined, P-7), the question is withdrawn', async () => {
    const asker = await askerBridge({
      shutdown: [{ question: 'Still there, shutdown?', options: ['yes', 'no'] }],
    });
    await mailTo(asker, 'shutdown');
    const q = await questionAbout('Still there, shutdown?');
    const withdrawn = asker.bridge.events.next('permission_withdrawn', undefined, { timeoutMs: STEP_MS });
    await asker.bridge.stop();
    expect(await withdrawn).toMatchObject({ request_id: q.id, status: 'withdrawn' });
    const [result] = asker.results.get('shutdown') ?? [];
    expect(result?.isError).toBe(true);
    expect(result?.text).toMatch(/^No answer came/);
    expect((await stack.person.permissions('all')).find((r) => r.id === q.id)?.status).toBe('withdrawn');
  });
});
