import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ModelServer,
  type ModelServerReadyLine,
  parseScenarioFile,
  runModelServerCli,
} from '../src/index.js';

const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

async function scenarioFile(content: unknown): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'testkit-cli-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'scenarios.json');
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

async function run(argv: string[]): Promise<{ server: ModelServer; lines: string[] }> {
  const lines: string[] = [];
  const server = await runModelServerCli(argv, {
    write: (text: string, callback: () => void) => {
      lines.push(text);
      callback();
    },
  });
  cleanups.push(() => server.close());
  return { server, lines };
}

describe('model server CLI', () => {
  it('starts from a scenario file and prints the base URL as one JSON line', async () => {
    const file = await scenarioFile({
      models: ['fake-model'],
      scenarios: [
        {
          name: 'regexp',
          match: { lastUserMessage: { regexp: '^HELLO', flags: 'i' }, hasToolResult: false },
          reply: { type: 'tool_calls', calls: [{ name: 'read_inbox', arguments: { limit: 5 } }] },
        },
        { name: 'rest', times: 1, reply: { type: 'text', text: 'rest' } },
      ],
    });
    const { server, lines } = await run([file]);
    expect(lines).toHaveLength(1);
    expect(lines[0]?.endsWith('\n')).toBe(true);
    const ready = JSON.parse(lines[0] ?? '') as ModelServerReadyLine;
    expect(ready).toEqual({
      url: server.url,
      baseUrl: `${server.url}/v1`,
      port: server.port,
      pid: process.pid,
    });

    const ask = (content: string) =>
      fetch(`${ready.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'fake-model', messages: [{ role: 'user', content }] }),
      }).then((r) => r.json() as Promise<{ choices: { message: unknown }[] }>);
    expect((await ask('hello there')).choices[0]?.message).toMatchObject({
      tool_calls: [{ function: { name: 'read_inbox', arguments: '{"limit":5}' } }],
    });
    expect((await ask('other')).choices[0]?.message).toMatchObject({ content: 'rest' });
    expect(server.requests().map((r) => r.scenario)).toEqual(['regexp', 'rest']);
    await ask('other again');
    expect(server.unmatched()).toHaveLength(1); // `times: 1` came from the file
    const models = (await (await fetch(`${ready.baseUrl}/models`)).json()) as { data: { id: string }[] };
    expect(models.data.map((m) => m.id)).toEqual(['fake-model']);
  });

  it('rejects bad arguments with AM_TESTKIT_CLI_USAGE', async () => {
    await expect(run([])).rejects.toMatchObject({ code: 'AM_TESTKIT_CLI_USAGE' });
    const file = await scenarioFile({ scenarios: [] });
    await expect(run([file, '--port', 'x'])).rejects.toMatchObject({ code: 'AM_TESTKIT_CLI_USAGE' });
    await expect(run([file, '--verbose'])).rejects.toMatchObject({ code: 'AM_TESTKIT_CLI_USAGE' });
  });

  it('rejects a missing or invalid file with AM_TESTKIT_SCENARIO_INVALID naming the field', async () => {
    await expect(run([join(tmpdir(), 'no-such-testkit-file.json')])).rejects.toMatchObject({
      code: 'AM_TESTKIT_SCENARIO_INVALID',
    });
    const bad = await scenarioFile({ scenarios: [{ reply: { type: 'text', txt: 'typo' } }] });
    const error = await run([bad]).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'AM_TESTKIT_SCENARIO_INVALID' });
    expect((error as Error).message).toContain('scenarios.0.reply');
    const unknownKey = await scenarioFile({
      scenarios: [{ reply: { type: 'text', text: 'x', colour: 'red' } }],
    });
    await expect(run([unknownKey])).rejects.toThrow(/scenarios\.0\.reply.*colour/);
    expect(() =>
      parseScenarioFile('{"scenarios": [{"reply": {"type": "hang"}, "match": {"model": {"regexp": "("}}}]}'),
    ).toThrow(/scenarios\.0\.match\.model.*invalid RegExp/);
    expect(() => parseScenarioFile('not json')).toThrow(/not JSON/);
  });
});
