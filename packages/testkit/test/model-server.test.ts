import OpenAI, { APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletionChunk,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import { afterEach, describe, expect, it } from 'vitest';
import { JOURNAL_PATH, type ModelServer, type Scenario, startModelServer } from '../src/index.js';

const servers: ModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(
  scenarios: Scenario[],
  models?: string[],
): Promise<{ server: ModelServer; client: OpenAI }> {
  const server = await startModelServer(models === undefined ? { scenarios } : { scenarios, models });
  servers.push(server);
  return { server, client: new OpenAI({ baseURL: server.baseUrl, apiKey: 'sk-test', maxRetries: 0 }) };
}

function tool(name: string): ChatCompletionTool {
  return { type: 'function', function: { name, parameters: { type: 'object', properties: {} } } };
}

async function collect(stream: AsyncIterable<ChatCompletionChunk>): Promise<ChatCompletionChunk[]> {
  const chunks: ChatCompletionChunk[] = [];
  for await (const chunk of stream) chunks.push(chunk);
  return chunks;
}

function textOf(chunks: ChatCompletionChunk[]): string {
  return chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
}

function finishReasons(chunks: ChatCompletionChunk[]): string[] {
  return chunks.flatMap((c) =>
    c.choices.flatMap((choice) => (choice.finish_reason ? [choice.finish_reason] : [])),
  );
}

async function rawPost(server: ModelServer, body: unknown): Promise<Response> {
  return fetch(`${server.baseUrl}/chat/completions`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

const LONG_TEXT = 'Hello from the scripted model, streamed in several deltas.';

describe('text replies', () => {
  it('streams text deltas, finish_reason stop, a usage chunk and data: [DONE]', async () => {
    const { server, client } = await start([
      {
        match: { lastUserMessage: 'hello' },
        reply: { type: 'text', text: LONG_TEXT, usage: { promptTokens: 7 } },
      },
    ]);
    const chunks = await collect(
      await client.chat.completions.create({
        model: 'fake-model',
        messages: [{ role: 'user', content: 'hello there' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(textOf(chunks)).toBe(LONG_TEXT);
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBeGreaterThan(1);
    expect(finishReasons(chunks)).toEqual(['stop']);
    const usage = chunks.at(-1);
    expect(usage?.choices).toEqual([]);
    expect(usage?.usage?.prompt_tokens).toBe(7);
    expect(usage?.usage?.total_tokens).toBe(7 + (usage?.usage?.completion_tokens ?? Number.NaN));
    expect(chunks[0]?.model).toBe('fake-model');

    const raw = await (
      await rawPost(server, { model: 'm', stream: true, messages: [{ role: 'user', content: 'hello' }] })
    ).text();
    expect(raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(raw).not.toContain('"usage"'); // usage only when stream_options.include_usage asks for it
  });

  it('answers a non-streaming request with a JSON completion', async () => {
    const { client } = await start([
      {
        match: { lastUserMessage: 'long' },
        reply: { type: 'text', text: 'cut off', finishReason: 'length' },
      },
      { reply: { type: 'text', text: 'plain json' } },
    ]);
    const completion = await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(completion.choices[0]?.message.content).toBe('plain json');
    expect(completion.choices[0]?.finish_reason).toBe('stop');
    expect(completion.usage?.completion_tokens).toBeGreaterThan(0);
    const long = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'long' }],
    });
    expect(long.choices[0]?.finish_reason).toBe('length');
  });

  it('lists the configured models on GET /v1/models', async () => {
    const { client } = await start([], ['fake-model', 'fake-small']);
    const models = await client.models.list();
    expect(models.data.map((m) => m.id)).toEqual(['fake-model', 'fake-small']);
    // Hosts whose base URL has no /v1 reach the same endpoints; other routes get an OpenAI-style 404.
    const bare = await fetch(`${client.baseURL.replace(/\/v1$/, '')}/models`);
    expect(((await bare.json()) as { data: unknown[] }).data).toHaveLength(2);
    const unknown = await fetch(`${client.baseURL}/embeddings`, { method: 'POST', body: '{}' });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toMatchObject({ error: { code: 'unknown_route' } });
  });
});

describe('tool calls', () => {
  it('round trip: parallel tool calls, then text once the tool results come back', async () => {
    const { server, client } = await start([
      {
        name: 'call-tools',
        match: { lastUserMessage: 'list the files', hasToolResult: false },
        reply: {
          type: 'tool_calls',
          calls: [
            { name: 'list_dir', arguments: { path: '.' } },
            { name: 'read_file', arguments: '{"path":"README.md"}', id: 'call_read' },
          ],
        },
      },
      {
        name: 'answer',
        match: { hasToolResult: true, toolResultContains: 'README.md' },
        reply: { type: 'text', text: 'There are 2 files.' },
      },
    ]);
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'please list the files' }];
    const tools = [tool('list_dir'), tool('read_file')];
    const first = await client.chat.completions
      .stream({ model: 'fake-model', messages, tools, stream_options: { include_usage: true } })
      .finalChatCompletion();
    const choice = first.choices[0];
    expect(choice?.finish_reason).toBe('tool_calls');
    const calls = (choice?.message.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [c] : []));
    expect(calls.map((c) => [c.id, c.function.name, JSON.parse(c.function.arguments)])).toEqual([
      ['call_1_0', 'list_dir', { path: '.' }],
      ['call_read', 'read_file', { path: 'README.md' }],
    ]);

    messages.push(
      { role: 'assistant', content: null, tool_calls: calls },
      { role: 'tool', tool_call_id: 'call_1_0', content: 'README.md\npackage.json' },
      { role: 'tool', tool_call_id: 'call_read', content: '# readme' },
    );
    const second = await client.chat.completions
      .stream({ model: 'fake-model', messages, tools })
      .finalChatCompletion();
    expect(second.choices[0]?.message.content).toBe('There are 2 files.');
    expect(second.choices[0]?.finish_reason).toBe('stop');

    const [, answered] = server.requests();
    expect(answered?.scenario).toBe('answer');
    expect(answered?.toolResults).toEqual([
      { toolCallId: 'call_1_0', text: 'README.md\npackage.json' },
      { toolCallId: 'call_read', text: '# readme' },
    ]);
  });

  it('streams text before the tool calls when the reply has both', async () => {
    const { client } = await start([
      { reply: { type: 'tool_calls', text: 'Let me look.', calls: [{ name: 'read_inbox' }] } },
    ]);
    const done = await client.chat.completions
      .stream({ model: 'm', messages: [{ role: 'user', content: 'x' }], tools: [tool('read_inbox')] })
      .finalChatCompletion();
    expect(done.choices[0]?.message.content).toBe('Let me look.');
    const call = done.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? [call.function.name, call.function.arguments] : []).toEqual([
      'read_inbox',
      '{}',
    ]);
  });
});

describe('matching on content', () => {
  it('an extra title request in between does not consume the turn scenarios', async () => {
    const { server, client } = await start([
      {
        name: 'title',
        match: { hasTools: false, systemPrompt: /title/i },
        reply: { type: 'text', text: 'Files question' },
      },
      {
        name: 'turn-1',
        match: { lastUserMessage: 'task 7', toolOffered: 'read_inbox', hasToolResult: false },
        times: 1,
        reply: { type: 'tool_calls', calls: [{ name: 'read_inbox' }] },
      },
      {
        name: 'turn-2',
        match: { toolResultContains: 'inbox: 1 mail' },
        reply: { type: 'text', text: 'DONE 7' },
      },
    ]);
    const title = () =>
      client.chat.completions.create({
        model: 'm',
        messages: [
          { role: 'system', content: 'Generate a short title for this conversation.' },
          { role: 'user', content: 'Summarise:' },
          { role: 'user', content: 'task 7: read your inbox' },
        ],
        tools: [],
      });
    const turn1 = client.chat.completions
      .stream({
        model: 'm',
        messages: [{ role: 'user', content: 'task 7: read your inbox' }],
        tools: [tool('read_inbox')],
      })
      .finalChatCompletion();
    // Title requests before, in parallel with, and after the first turn.
    const [titleA, first, titleB] = await Promise.all([title(), turn1, title()]);
    const titleC = await title();
    const call = first.choices[0]?.message.tool_calls?.[0];
    expect(call?.type === 'function' ? call.function.name : undefined).toBe('read_inbox');
    for (const t of [titleA, titleB, titleC]) expect(t.choices[0]?.message.content).toBe('Files question');

    const second = await client.chat.completions.create({
      model: 'm',
      tools: [tool('read_inbox')],
      messages: [
        { role: 'user', content: 'task 7: read your inbox' },
        { role: 'assistant', content: null, tool_calls: first.choices[0]?.message.tool_calls ?? [] },
        { role: 'tool', tool_call_id: call?.id ?? '', content: 'inbox: 1 mail' },
      ],
    });
    expect(second.choices[0]?.message.content).toBe('DONE 7');
    expect(server.requests({ scenario: 'title' })).toHaveLength(3);
    expect(server.requests({ scenario: 'turn-1' })).toHaveLength(1);
    expect(server.unmatched()).toEqual([]);
  });

  it('times limits a scenario, then later scenarios answer (fall-through in order)', async () => {
    const { client } = await start([
      { match: { lastUserMessage: 'flaky' }, times: 2, reply: { type: 'error', status: 500 } },
      { match: { lastUserMessage: 'flaky' }, reply: { type: 'text', text: 'recovered' } },
    ]);
    const ask = () =>
      client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'flaky call' }] });
    await expect(ask()).rejects.toMatchObject({ status: 500 });
    await expect(ask()).rejects.toMatchObject({ status: 500 });
    expect((await ask()).choices[0]?.message.content).toBe('recovered');
  });

  it('each condition selects only the requests it describes', async () => {
    const { server } = await start([
      { name: 'regexp-user', match: { lastUserMessage: /^order \d+$/ }, reply: { type: 'text', text: 'a' } },
      { name: 'system', match: { systemPrompt: 'You are agent B' }, reply: { type: 'text', text: 'b' } },
      { name: 'model', match: { model: 'model-c' }, reply: { type: 'text', text: 'c' } },
      {
        name: 'header',
        match: { headers: { 'X-Session-Id': 'sess-d' } },
        reply: { type: 'text', text: 'd' },
      },
      { name: 'tool', match: { toolOffered: 'send_mail' }, reply: { type: 'text', text: 'e' } },
      {
        name: 'predicate',
        match: { predicate: (r) => r.body?.temperature === 0.5 },
        reply: { type: 'text', text: 'f' },
      },
      {
        name: 'no-tool-result',
        match: { hasToolResult: false, lastUserMessage: 'g' },
        reply: { type: 'text', text: 'g' },
      },
      { name: 'tool-result', match: { toolResultContains: 'needle' }, reply: { type: 'text', text: 'h' } },
      { name: 'fallback', reply: { type: 'text', text: 'z' } },
    ]);
    const send = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
      // The path without /v1 is served too (a host whose base URL lacks it).
      await fetch(`${server.url}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ model: 'm', ...body }),
      }).then((r) => r.text());
      return server.requests().at(-1)?.scenario;
    };
    const user = (content: string) => [{ role: 'user', content }];
    expect(await send({ messages: user('order 12') })).toBe('regexp-user');
    expect(await send({ messages: user('order 12 please') })).toBe('fallback');
    const earlierTurn = [...user('order 12'), { role: 'assistant', content: 'ok' }, ...user('later')];
    expect(await send({ messages: earlierTurn })).toBe('fallback'); // only the last user message counts
    expect(await send({ messages: [{ role: 'system', content: 'You are agent B.' }, ...user('x')] })).toBe(
      'system',
    );
    expect(await send({ messages: [{ role: 'developer', content: 'You are agent B.' }, ...user('x')] })).toBe(
      'system',
    );
    expect(await send({ messages: [{ role: 'system', content: 'You are agent C.' }, ...user('x')] })).toBe(
      'fallback',
    );
    expect(await send({ model: 'model-c', messages: user('x') })).toBe('model');
    expect(await send({ model: 'model-cc', messages: user('x') })).toBe('fallback');
    expect(await send({ messages: user('x') }, { 'x-session-id': 'sess-d' })).toBe('header');
    expect(await send({ messages: user('x') }, { 'x-session-id': 'sess-dd' })).toBe('fallback');
    const tools = [tool('read_inbox'), tool('send_mail')];
    expect(await send({ messages: user('x'), tools })).toBe('tool');
    expect(await send({ messages: user('x'), tools: [tool('read_inbox')] })).toBe('fallback');
    expect(await send({ messages: user('x'), temperature: 0.5 })).toBe('predicate');
    expect(await send({ messages: user('x'), temperature: 0.7 })).toBe('fallback');
    expect(await send({ messages: user('g') })).toBe('no-tool-result');
    const answeringTool = [
      ...user('g'),
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c1', type: 'function', function: { name: 't', arguments: '{}' } }],
      },
      { role: 'tool', tool_call_id: 'c1', content: 'result' },
    ];
    expect(await send({ messages: answeringTool })).toBe('fallback');
    const results = (first: string, second: string) => [
      ...answeringTool.slice(0, 2),
      { role: 'tool', tool_call_id: 'c1', content: first },
      { role: 'tool', tool_call_id: 'c2', content: second },
    ];
    expect(await send({ messages: results('needle', 'x') })).toBe('tool-result');
    expect(await send({ messages: results('x', 'needle') })).toBe('tool-result');
    // Tool results of an earlier, answered step are not "being answered" any more.
    const laterTurn = [...results('needle', 'x'), { role: 'assistant', content: 'done' }, ...user('g')];
    expect(await send({ messages: laterTurn })).toBe('no-tool-result');
  });

  it('a reply function computes the answer from the request', async () => {
    const { client } = await start([
      { reply: (r) => ({ type: 'text', text: `echo ${/marker=(\w+)/.exec(r.lastUserText)?.[1] ?? '?'}` }) },
    ]);
    const completion = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'do it marker=M42' }] }],
    });
    expect(completion.choices[0]?.message.content).toBe('echo M42');
  });
});

describe('errors', () => {
  const cases = [
    { status: 500, type: 'server_error' },
    { status: 402, type: 'insufficient_quota' },
    { status: 400, type: 'invalid_request_error' },
  ];
  for (const { status, type } of cases) {
    it(`answers HTTP ${status} with an OpenAI-style error body`, async () => {
      const { client } = await start([
        { match: { lastUserMessage: 'fail' }, reply: { type: 'error', status } },
      ]);
      const error: unknown = await client.chat.completions
        .create({ model: 'm', messages: [{ role: 'user', content: 'fail now' }], stream: true })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(error).toBeInstanceOf(APIError);
      expect((error as APIError).status).toBe(status);
      expect((error as APIError).error).toMatchObject({ type, param: null, code: null });
      expect(typeof ((error as APIError).error as { message?: unknown }).message).toBe('string');
    });
  }

  it('an error reply carries a custom message, type, code and headers', async () => {
    const { server } = await start([
      {
        reply: {
          type: 'error',
          status: 503,
          message: 'overloaded',
          errorType: 'overloaded_error',
          code: 'busy',
          headers: { 'retry-after-ms': '50' },
        },
      },
    ]);
    const res = await rawPost(server, { model: 'm', messages: [{ role: 'user', content: 'x' }] });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after-ms')).toBe('50');
    expect(await res.json()).toEqual({
      error: { message: 'overloaded', type: 'overloaded_error', param: null, code: 'busy' },
    });
  });

  it('a request no scenario matches gets 400 no_scenario_matched and is listed by unmatched()', async () => {
    const { server, client } = await start([
      { match: { lastUserMessage: 'known' }, reply: { type: 'text', text: 'k' } },
    ]);
    const error = await client.chat.completions
      .create({ model: 'm', messages: [{ role: 'user', content: 'something else' }] })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 400, code: 'no_scenario_matched' });
    expect((error as APIError).message).toContain('something else');
    expect(server.unmatched().map((r) => [r.lastUserText, r.response.status])).toEqual([
      ['something else', 400],
    ]);
  });

  it('a throwing predicate or reply function gets 500 naming the failure, and is recorded', async () => {
    const { server } = await start([
      {
        match: {
          predicate: (r) => {
            if (r.lastUserText === 'boom-match') throw new Error('bad predicate');
            return false;
          },
        },
        reply: { type: 'text', text: 'never' },
      },
      {
        reply: () => {
          throw new Error('bad reply');
        },
      },
    ]);
    const send = (content: string) => rawPost(server, { model: 'm', messages: [{ role: 'user', content }] });
    const matchFailure = await send('boom-match');
    expect(matchFailure.status).toBe(500);
    expect(await matchFailure.json()).toMatchObject({
      error: { code: 'scenario_match_failed', message: /bad predicate/ },
    });
    const replyFailure = await send('boom-reply');
    expect(replyFailure.status).toBe(500);
    expect(await replyFailure.json()).toMatchObject({
      error: { code: 'scenario_reply_failed', message: /bad reply/ },
    });
    expect(server.requests().map((r) => [r.lastUserText, r.response.status])).toEqual([
      ['boom-match', 500],
      ['boom-reply', 500],
    ]);
  });

  it('an invalid body gets 400 invalid_body and is still recorded', async () => {
    const { server } = await start([{ reply: { type: 'text', text: 'never' } }]);
    const res = await rawPost(server, { model: 'm' });
    expect(res.status).toBe(400);
    expect(await res.json()).toMatchObject({ error: { code: 'invalid_body' } });
    expect(server.unmatched()[0]?.invalid).toContain('messages');
  });
});

describe('hang', () => {
  it('keeps the request open until the client aborts; the journal shows it on arrival', async () => {
    const { server, client } = await start([{ match: { lastUserMessage: 'hang' }, reply: { type: 'hang' } }]);
    const controller = new AbortController();
    let settled = false;
    const pending = client.chat.completions
      .create(
        { model: 'm', messages: [{ role: 'user', content: 'hang please' }], stream: true },
        { signal: controller.signal },
      )
      .finally(() => {
        settled = true;
      });
    const request = await server.waitForRequest({ lastUserMessage: 'hang' });
    expect(request.response).toEqual({ status: undefined, end: 'pending' });
    await expect(server.waitForEnd(request, 50)).rejects.toMatchObject({ code: 'AM_TESTKIT_WAIT_TIMEOUT' });
    expect(settled).toBe(false);
    controller.abort();
    await expect(pending).rejects.toBeInstanceOf(APIUserAbortError);
    expect(await server.waitForEnd(request)).toBe('client_closed');
  });

  it('close() ends a hung stream (after its partial text) and does not wait for the client', async () => {
    const { server, client } = await start([{ reply: { type: 'hang', text: 'partial answer' } }]);
    const stream = await client.chat.completions.create({
      model: 'm',
      messages: [{ role: 'user', content: 'x' }],
      stream: true,
    });
    let seen = '';
    let onPartial = (): void => {};
    const partialSeen = new Promise<void>((resolve) => {
      onPartial = resolve;
    });
    const reading = (async () => {
      for await (const chunk of stream) {
        seen += chunk.choices[0]?.delta.content ?? '';
        if (seen === 'partial answer') onPartial();
      }
    })();
    await partialSeen;
    const [request] = server.requests();
    expect(request?.response).toEqual({ status: 200, end: 'pending' });
    await server.close();
    // undici reports a body cut mid-stream as `TypeError: terminated`; the SDK passes it through.
    await expect(reading).rejects.toThrow(/terminated/);
    expect(request?.response.end).toBe('server_closed');
  });
});

describe('stream without finish_reason', () => {
  it('streams the text, then data: [DONE], with no finish_reason and no usage', async () => {
    const { server, client } = await start([{ reply: { type: 'no_finish_reason', text: LONG_TEXT } }]);
    const chunks = await collect(
      await client.chat.completions.create({
        model: 'm',
        messages: [{ role: 'user', content: 'x' }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    );
    expect(textOf(chunks)).toBe(LONG_TEXT);
    expect(finishReasons(chunks)).toEqual([]);
    expect(chunks.some((c) => c.usage)).toBe(false);
    // The SDK's accumulating helper sees a broken stream, as a host would.
    await expect(
      client.chat.completions
        .stream({ model: 'm', messages: [{ role: 'user', content: 'x' }] })
        .finalChatCompletion(),
    ).rejects.toThrow(/finish_reason/);
    const raw = await (
      await rawPost(server, { model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] })
    ).text();
    expect(raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(raw).not.toMatch(/"finish_reason":"/);
  });

  it('done: false ends the body without data: [DONE]; non-streaming gets finish_reason null', async () => {
    const { server } = await start([
      { match: { lastUserMessage: 'cut' }, reply: { type: 'no_finish_reason', text: 'abc', done: false } },
      { reply: { type: 'no_finish_reason', text: 'abc' } },
    ]);
    const raw = await (
      await rawPost(server, { model: 'm', stream: true, messages: [{ role: 'user', content: 'cut' }] })
    ).text();
    expect(raw).toContain('"content":"abc"');
    expect(raw).not.toContain('[DONE]');
    const res = await rawPost(server, { model: 'm', messages: [{ role: 'user', content: 'x' }] });
    const json = (await res.json()) as { choices: unknown[] };
    expect(json.choices[0]).toMatchObject({ message: { content: 'abc' }, finish_reason: null });
  });
});

describe('journal', () => {
  it('records every request with headers and views; filters by match and scenario', async () => {
    const { server, client } = await start([
      { name: 'a', match: { lastUserMessage: 'alpha' }, reply: { type: 'text', text: 'A' } },
      { name: 'b', reply: { type: 'text', text: 'B' } },
    ]);
    await client.chat.completions.create({
      model: 'fake-model',
      messages: [
        { role: 'system', content: 'sys prompt' },
        { role: 'user', content: 'alpha' },
      ],
    });
    await client.chat.completions.create({
      model: 'fake-model',
      messages: [{ role: 'user', content: 'beta' }],
    });
    const all = server.requests();
    expect(all.map((r) => [r.seq, r.scenario, r.lastUserText])).toEqual([
      [1, 'a', 'alpha'],
      [2, 'b', 'beta'],
    ]);
    expect(all[0]).toMatchObject({
      method: 'POST',
      path: '/v1/chat/completions',
      model: 'fake-model',
      stream: false,
      systemText: 'sys prompt',
      response: { status: 200, end: 'complete' },
    });
    expect(all[0]?.headers.authorization).toBe('Bearer sk-test');
    expect(server.requests({ match: { lastUserMessage: 'beta' } }).map((r) => r.seq)).toEqual([2]);
    expect(server.requests({ match: (r) => r.seq === 1 }).map((r) => r.lastUserText)).toEqual(['alpha']);
    expect(server.requests({ scenario: 'b' }).map((r) => r.seq)).toEqual([2]);

    const journal = (await (await fetch(`${server.url}${JOURNAL_PATH}`)).json()) as {
      requests: { scenario: string }[];
    };
    expect(journal.requests.map((r) => r.scenario)).toEqual(['a', 'b']);
  });

  it('waitForRequest resolves on a later arrival (event-driven) and on an earlier one; onRequest unsubscribes', async () => {
    const { server, client } = await start([{ reply: { type: 'text', text: 'ok' } }]);
    const seen: number[] = [];
    const unsubscribe = server.onRequest((r) => seen.push(r.seq));
    const waiting = server.waitForRequest({ lastUserMessage: 'second' });
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'first' }] });
    unsubscribe();
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'second' }] });
    expect((await waiting).seq).toBe(2);
    expect((await server.waitForRequest({ lastUserMessage: 'first' })).seq).toBe(1);
    expect(seen).toEqual([1]);
  });

  it('waitForRequest times out with the recorded requests in the message, and rejects on close', async () => {
    const { server, client } = await start([{ reply: { type: 'text', text: 'ok' } }]);
    await client.chat.completions.create({ model: 'm', messages: [{ role: 'user', content: 'only this' }] });
    const error = await server.waitForRequest({ lastUserMessage: 'never' }, 30).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'AM_TESTKIT_WAIT_TIMEOUT' });
    expect((error as Error).message).toContain('"only this"');
    const waiting = server.waitForRequest({ lastUserMessage: 'never' });
    await server.close();
    await expect(waiting).rejects.toMatchObject({ code: 'AM_TESTKIT_SERVER_CLOSED' });
  });

  it('rejects a scenario whose times is not a positive integer', async () => {
    await expect(
      startModelServer({ scenarios: [{ times: 0, reply: { type: 'text', text: '' } }] }),
    ).rejects.toMatchObject({
      code: 'AM_TESTKIT_SCENARIO_INVALID',
    });
  });
});
