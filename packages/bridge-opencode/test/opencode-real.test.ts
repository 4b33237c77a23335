/**
 * Real opencode binary (pinned opencode-ai) against the testkit scripted model: one `opencode
 * serve` for the file, a new session per test. Pins the turn-outcome quirks the TurnTracker
 * relies on and the platform facts in README "Platform facts".
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cleanEnv, ManagedProcess, type ModelServer, startModelServer } from '@agentmail/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EventCollector } from '../harness/events.js';
import { PROBE_PLUGIN_PATH } from '../harness/opencode-adapter.js';
import { createSandbox } from '../harness/sandbox.js';
import { type Serve, startServe } from '../harness/serve.js';
import {
  createSession,
  finalAssistantMessage,
  getSession,
  listSessionsSnapshot,
  promptAsync,
  readCatalogueKeys,
  renameSession,
  replyPermission,
  TitleWatcher,
} from '../src/opencode-facts.js';
import { TurnTracker } from '../src/turn-tracker.js';

const STEP_MS = 60_000;
const DENY_TEXT = 'DENIED-BY-HOOK: policy says no, put the plan in your reply';
const PERSON_NOTE = 'NOTE-FROM-PERSON: use ls instead';
const ASK_BASH = [{ permission: 'bash', pattern: '*', action: 'ask' as const }];

let root: string;
let model: ModelServer;
let serve: Serve;
let events: EventCollector;
const tracker = new TurnTracker();
const titles = new TitleWatcher();
const titleChanges: ReturnType<TitleWatcher['onEvent']>[] = [];
const procs: ManagedProcess[] = [];
let spawnAt = 0;
let logFile: string;
let workDir: string;

function bashCall(command: string) {
  return {
    type: 'tool_calls' as const,
    calls: [{ name: 'bash', arguments: { command, description: 'run it' } }],
  };
}

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'am-opencode-real-'));
  const work = join(root, 'work');
  mkdirSync(work);
  workDir = work;
  logFile = join(root, 'probe.log');
  model = await startModelServer({
    models: ['m1', 'm2'],
    scenarios: [
      { name: 'title', match: { hasTools: false }, reply: { type: 'text', text: 'Generated title' } },
      { match: { lastUserMessage: '[s:text]' }, reply: { type: 'text', text: 'DONE text' } },
      { match: { lastUserMessage: '[s:400]' }, reply: { type: 'error', status: 400 } },
      { match: { lastUserMessage: '[s:hang]' }, reply: { type: 'hang' } },
      { match: { lastUserMessage: '[s:deny]', hasToolResult: false }, reply: bashCall('echo deny-me') },
      { match: { lastUserMessage: '[s:reject]', hasToolResult: false }, reply: bashCall('echo reject-me') },
      {
        match: { hasToolResult: true },
        reply: (r) => ({ type: 'text', text: `SAW: ${r.toolResults.map((t) => t.text).join(' | ')}` }),
      },
    ],
  });
  const sandbox = createSandbox({
    root: join(root, 'state'),
    projectDir: work,
    modelProvider: 'scripted',
    modelBaseUrl: model.baseUrl,
    modelIds: ['m1', 'm2'],
    modelId: 'm1',
    plugin: {
      path: PROBE_PLUGIN_PATH,
      options: { logFile, denyTool: 'bash', denyIfArgsInclude: 'deny-me', denyMessage: DENY_TEXT },
    },
  });
  const spawn = (
    command: string,
    args: readonly string[],
    options: { env?: NodeJS.ProcessEnv; cwd?: string } = {},
  ) => {
    const proc = ManagedProcess.spawn('opencode', command, args, {
      env: options.env ?? cleanEnv(),
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
    });
    procs.push(proc);
    return proc;
  };
  spawnAt = Date.now();
  serve = await startServe(spawn, sandbox, cleanEnv());
  events = await EventCollector.open(serve.client);
  events.onEvent((e) => {
    tracker.onEvent(e);
    const change = titles.onEvent(e);
    if (change !== undefined) titleChanges.push(change);
  });
}, 120_000);

afterAll(async () => {
  events?.close();
  for (const proc of procs) await proc.stop(5_000);
  await model?.close();
  if (root !== undefined) rmSync(root, { recursive: true, force: true });
});

/** Creates a session, begins tracking, prompts; returns the session id and the outcome promise. */
async function turn(
  text: string,
  options: { modelID?: string; permission?: typeof ASK_BASH; title?: string } = {},
) {
  const session = await createSession(serve.client, {
    title: options.title ?? text.slice(0, 20),
    directory: workDir,
    ...(options.permission === undefined ? {} : { permission: options.permission }),
  });
  const began = Date.now();
  const outcome = tracker.begin(session.id);
  await promptAsync(serve.client, {
    sessionId: session.id,
    text,
    model: { providerID: 'scripted', modelID: options.modelID ?? 'm1' },
  });
  return { id: session.id, began, outcome };
}

describe('opencode serve (real binary)', () => {
  it('boots: listening, plugin booted (probe log), warm-up done', () => {
    const boot = readFileSync(logFile, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"kind":"boot"'))
      .map((l) => JSON.parse(l) as { t: number });
    expect(boot).toHaveLength(1);
    const bootMs = (boot[0]?.t ?? 0) - spawnAt;
    console.info(
      `[figures] spawn→listening ${Math.round(serve.timings.listenMs)} ms, spawn→plugin boot ${bootMs} ms, spawn→warm-up done ${Math.round(serve.timings.warmMs)} ms`,
    );
    expect(bootMs).toBeLessThanOrEqual(serve.timings.warmMs + 50);
  });

  it('success: one ok outcome; final text parts and message id from the messages', async () => {
    const t0 = performance.now();
    const { id, began, outcome } = await turn('[s:text] hello');
    await model.waitForRequest({ lastUserMessage: '[s:text] hello' }, STEP_MS);
    console.info(
      `[figures] promptAsync→first model request ${Math.round(performance.now() - t0)} ms (incl. session.create)`,
    );
    expect(await outcome).toEqual({ ok: true });
    const final = await finalAssistantMessage(serve.client, id, undefined, began);
    expect(final?.parts).toEqual([{ type: 'text', text: 'DONE text' }]);
    expect(final?.id).toMatch(/^msg_/);
    expect(final?.model).toBe('scripted/m1');
  });

  it('provider 400: error outcome with opencode words, settled once despite two idles', async () => {
    const { id, outcome } = await turn('[s:400] fail');
    expect(await outcome).toEqual({
      ok: false,
      kind: 'error',
      cause: 'APIError (HTTP 400): Scripted invalid request.',
      errorName: 'APIError',
    });
    const mark = events.mark();
    // The tail (message error, second idle) still arrives and must not disturb a new turn.
    await events.waitFor((e) => e.type === 'session.idle' && e.properties.sessionID === id, STEP_MS, mark);
    expect(tracker.pending).toBe(0);
  });

  it('fact (e): unknown model → session.error UnknownError at once, then idle, then a late second error', async () => {
    const t0 = performance.now();
    // Marked before the prompt: under load the first error can come before turn() returns.
    const mark = events.mark();
    const { id, outcome } = await turn('[s:text] unknown', { modelID: 'nope' });
    expect(await outcome).toEqual({
      ok: false,
      kind: 'error',
      cause: 'UnknownError: Model not found: scripted/nope.',
      errorName: 'UnknownError',
    });
    console.info(`[figures] unknown model: promptAsync→outcome ${Math.round(performance.now() - t0)} ms`);
    const ofSession = (type: string) => (e: { type: string; properties: Record<string, unknown> }) =>
      e.type === type && e.properties.sessionID === id;
    // The order is the fact; the timing is the machine's: wait for each event, then compare positions.
    const first = await events.waitFor(ofSession('session.error'), STEP_MS, mark);
    const idle = await events.waitFor(ofSession('session.idle'), STEP_MS, mark);
    const firstAt = events.events.indexOf(first);
    const idleAt = events.events.indexOf(idle);
    expect(JSON.stringify(first.properties)).toContain('UnknownError');
    expect(firstAt, 'the first error comes before the idle').toBeLessThan(idleAt);
    const late = await events.waitFor(ofSession('session.error'), STEP_MS, idleAt + 1);
    expect(JSON.stringify(late.properties)).toContain('ProviderModelNotFoundError');
    expect(model.requests({ match: { lastUserMessage: '[s:text] unknown' } })).toHaveLength(0);
  });

  it('abort while the model request is open → aborted', async () => {
    const { id, outcome } = await turn('[s:hang] wait');
    await model.waitForRequest({ lastUserMessage: '[s:hang] wait' }, STEP_MS);
    await serve.client.session.abort({ path: { id } });
    expect(await outcome).toMatchObject({ ok: false, kind: 'aborted', errorName: 'MessageAbortedError' });
  });

  it('fact (a): a throw in tool.execute.before for bash reaches the model verbatim and the loop goes on', async () => {
    const { outcome } = await turn('[s:deny] please');
    expect(await outcome).toEqual({ ok: true });
    const answer = await model.waitForRequest({ lastUserMessage: '[s:deny]', hasToolResult: true }, STEP_MS);
    expect(answer.toolResults.map((t) => t.text)).toEqual([DENY_TEXT]);
  });

  it('fact (c)+(b): per-session ask rule → permission.asked; reject without message stops the turn', async () => {
    const mark = events.mark();
    const { id, outcome } = await turn('[s:reject] no-note', { permission: ASK_BASH });
    const asked = await events.waitFor(
      (e) => e.type === 'permission.asked' && e.properties.sessionID === id,
      STEP_MS,
      mark,
    );
    expect(asked.properties).toMatchObject({ permission: 'bash', patterns: ['echo reject-me'] });
    await replyPermission(serve.client, { requestId: String(asked.properties.id), reply: 'reject' });
    expect(await outcome).toEqual({
      ok: false,
      kind: 'permission_rejected',
      cause: 'The user rejected permission to use this specific tool call.',
    });
    expect(
      model.requests({ match: { lastUserMessage: '[s:reject] no-note', hasToolResult: true } }),
    ).toHaveLength(0);
  });

  it('fact (b): reject WITH a message → the model sees the message and the loop goes on', async () => {
    const mark = events.mark();
    const { id, outcome } = await turn('[s:reject] with-note', { permission: ASK_BASH });
    const asked = await events.waitFor(
      (e) => e.type === 'permission.asked' && e.properties.sessionID === id,
      STEP_MS,
      mark,
    );
    await replyPermission(serve.client, {
      requestId: String(asked.properties.id),
      reply: 'reject',
      message: PERSON_NOTE,
    });
    expect(await outcome).toEqual({ ok: true });
    const answer = await model.waitForRequest(
      { lastUserMessage: '[s:reject] with-note', hasToolResult: true },
      STEP_MS,
    );
    expect(answer.toolResults.map((t) => t.text)).toEqual([
      `The user rejected permission to use this specific tool call with the following feedback: ${PERSON_NOTE}`,
    ]);
  });

  it('fact (c): default config does not ask for bash (the deny test above ran bash unasked)', () => {
    const askedForDeny = events.events.filter(
      (e) => e.type === 'permission.asked' && JSON.stringify(e.properties).includes('deny-me'),
    );
    expect(askedForDeny).toEqual([]);
  });

  it('facts: session snapshot, catalogue keys, get by id (404 → undefined), rename → session.updated', async () => {
    const { id, outcome } = await turn('[s:text] facts', { title: 'Mail: facts' });
    await outcome;
    const snapshot = await listSessionsSnapshot(serve.client);
    expect(snapshot.find((s) => s.platform_id === id)).toMatchObject({
      title: 'Mail: facts',
      path: expect.stringMatching(/work$/),
    });
    expect(await readCatalogueKeys(serve.client)).toEqual(
      expect.arrayContaining(['scripted/m1', 'scripted/m2']),
    );
    expect(await getSession(serve.client, id)).toMatchObject({ id, title: 'Mail: facts' });
    expect(await getSession(serve.client, 'ses_doesnotexist000000000000')).toBeUndefined();
    const mark = events.mark();
    await renameSession(serve.client, id, 'Renamed by a person');
    await events.waitFor((e) => e.type === 'session.updated' && e.properties.sessionID === id, STEP_MS, mark);
    expect(titleChanges.filter((c) => c?.sessionId === id)).toEqual([
      { sessionId: id, title: 'Renamed by a person', previousTitle: 'Mail: facts', generated: false },
    ]);
  });

  it("fact (d): opencode's own title generation replaces only the default title (generated: true)", async () => {
    const created = await serve.client.session.create({ body: {} });
    const id = created.data?.id ?? '';
    const outcome = tracker.begin(id);
    await promptAsync(serve.client, {
      sessionId: id,
      text: '[s:text] untitled',
      model: { providerID: 'scripted', modelID: 'm1' },
    });
    await outcome;
    await model.waitForRequest({ hasTools: false, lastUserMessage: 'untitled' }, STEP_MS);
    await events.waitFor(
      (e) =>
        e.type === 'session.updated' && (e.properties.info as { title?: string }).title === 'Generated title',
      STEP_MS,
    );
    expect(titleChanges.filter((c) => c?.sessionId === id)).toEqual([
      {
        sessionId: id,
        title: 'Generated title',
        previousTitle: expect.stringMatching(/^New session - /),
        generated: true,
      },
    ]);
  });
});
