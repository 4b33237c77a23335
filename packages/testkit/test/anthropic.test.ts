import Anthropic, { APIError } from '@anthropic-ai/sdk';
import { afterEach, describe, expect, it } from 'vitest';
import { chatViewOfMessages } from '../src/anthropic.js';
import { type ModelServer, type Scenario, startModelServer } from '../src/index.js';

// The scripted model's Anthropic Messages endpoint, driven by Anthropic's own SDK (the wire Claude
// Code speaks): text, tool_use, errors, hangs, and the chat view scenarios match on.

const servers: ModelServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(scenarios: Scenario[]): Promise<{ server: ModelServer; client: Anthropic }> {
  const server = await startModelServer({ scenarios });
  servers.push(server);
  return { server, client: new Anthropic({ baseURL: server.url, apiKey: 'test', maxRetries: 0 }) };
}

const TOOLS = [{ name: 'Bash', input_schema: { type: 'object' as const, properties: {} } }];

describe('POST /v1/messages', () => {
  it('streams text and records the request in the chat view (system entries joined, the prompt last)', async () => {
    const { server, client } = await start([
      {
        match: { lastUserMessage: 'hello', systemPrompt: 'Be brief' },
        reply: { type: 'text', text: 'Hello there, from a scripted model.' },
      },
    ]);
    const stream = client.messages.stream({
      model: 'any-model',
      max_tokens: 100,
      system: [{ type: 'text', text: 'Be brief' }],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: '<system-reminder>x</system-reminder>' },
            { type: 'text', text: 'hello' },
          ],
        },
      ],
      tools: TOOLS,
    });
    const final = await stream.finalMessage();
    expect(final.content).toEqual([
      expect.objectContaining({ type: 'text', text: 'Hello there, from a scripted model.' }),
    ]);
    expect(final.stop_reason).toBe('end_turn');
    const [rec] = server.requests();
    expect(rec).toMatchObject({
      path: '/v1/messages',
      model: 'any-model',
      stream: true,
      toolNames: ['Bash'],
      response: { status: 200 },
    });
    expect(rec?.lastUserText).toContain('hello');
  });

  it('streams tool_use blocks (input_json_delta) and reads tool results back as tool results', async () => {
    const { server, client } = await start([
      {
        match: { hasToolResult: false },
        reply: { type: 'tool_calls', calls: [{ name: 'Bash', arguments: { command: 'ls' }, id: 'toolu_a' }] },
      },
      { match: { toolResultContains: 'file-1' }, reply: { type: 'text', text: 'two files' } },
    ]);
    const first = await client.messages
      .stream({ model: 'm', max_tokens: 10, messages: [{ role: 'user', content: 'list' }], tools: TOOLS })
      .finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    expect(first.content).toEqual([
      expect.objectContaining({ type: 'tool_use', id: 'toolu_a', name: 'Bash', input: { command: 'ls' } }),
    ]);
    const second = await client.messages.create({
      model: 'm',
      max_tokens: 10,
      tools: TOOLS,
      messages: [
        { role: 'user', content: 'list' },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: 'toolu_a', content: 'file-1 file-2' },
            { type: 'text', text: '<system-reminder>r</system-reminder>' },
          ],
        },
      ],
    });
    expect(second.content).toEqual([expect.objectContaining({ type: 'text', text: 'two files' })]);
    const rec = server.requests()[1];
    expect(rec?.toolResults).toEqual([
      { toolCallId: 'toolu_a', text: 'file-1 file-2\n<system-reminder>r</system-reminder>' },
    ]);
    expect(rec?.lastUserText, 'tool results do not replace the prompt').toBe('list');
  });

  it('answers scripted errors in the Anthropic error envelope', async () => {
    const { client } = await start([{ reply: { type: 'error', status: 529, message: 'scripted overload' } }]);
    const err = await client.messages
      .create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(APIError);
    expect((err as APIError).status).toBe(529);
    expect((err as APIError).error).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'scripted overload' },
    });
  });

  it('an unmatched request is a 400 naming the request; a non-Messages body is a 400 naming the field', async () => {
    const { server, client } = await start([
      { match: { lastUserMessage: 'never' }, reply: { type: 'text', text: 'x' } },
    ]);
    const err = (await client.messages
      .create({ model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)) as APIError;
    expect(err.status).toBe(400);
    expect(JSON.stringify(err.error)).toContain('No scenario matched');
    const raw = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm' }),
    });
    expect(raw.status).toBe(400);
    expect(await raw.text()).toContain('messages');
  });

  it('a hang sends message_start and the partial text, then nothing until the client gives up', async () => {
    const { server, client } = await start([{ reply: { type: 'hang', text: 'partial' } }]);
    const abort = new AbortController();
    const stream = client.messages.stream(
      { model: 'm', max_tokens: 1, messages: [{ role: 'user', content: 'x' }] },
      { signal: abort.signal },
    );
    const ended = stream.finalMessage().catch((e: unknown) => e);
    const text = await new Promise<string>((resolve) =>
      stream.on('text', (_d, snapshot) => snapshot === 'partial' && resolve(snapshot)),
    );
    expect(text).toBe('partial');
    const [rec] = server.requests();
    expect(rec?.response.end).toBe('pending');
    abort.abort();
    expect(await server.waitForEnd(rec!)).toBe('client_closed');
    expect(await ended).toBeInstanceOf(Error);
  });

  it('no_finish_reason ends the stream without message_delta/message_stop', async () => {
    const { server } = await start([{ reply: { type: 'no_finish_reason', text: 'cut' } }]);
    const res = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      body: JSON.stringify({ model: 'm', stream: true, messages: [{ role: 'user', content: 'x' }] }),
    });
    const body = await res.text();
    expect(body).toContain('event: message_start');
    expect(body).toContain('"text":"cut"');
    expect(body).not.toContain('message_stop');
  });
});

describe('chatViewOfMessages', () => {
  it('maps tool_use to tool_calls and keeps unknown roles', () => {
    const view = chatViewOfMessages({
      messages: [
        {
          role: 'assistant',
          content: [
            { type: 'text', text: 'hi' },
            { type: 'tool_use', id: 't1', name: 'Bash', input: { a: 1 } },
          ],
        },
      ],
    });
    expect(view.messages).toEqual([
      {
        role: 'assistant',
        content: 'hi',
        tool_calls: [{ id: 't1', type: 'function', function: { name: 'Bash', arguments: '{"a":1}' } }],
      },
    ]);
  });
});
