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

describe('`pnpm model-server` from a fresh clone (the bridge READMEs\u2019 "try it locally")', () => {
  it('regression: the documented command runs from the repository root, no build, with the example scenario file', async () => {
    const { spawn } = await import('node:child_process');
    const { createInterface } = await import('node:readline');
    const repo = join(import.meta.dirname, '..', '..', '..');
    // Its own process group: the test ends pnpm and the server under it together.
    const child = spawn('pnpm', ['model-server', 'packages/testkit/examples/hello.json', '--port', '0'], {
      cwd: repo,
      detached: true,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    cleanups.push(async () => {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, 'SIGTERM');
    });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (s: string) => {
      stderr += s;
    });
    const ready = await new Promise<ModelServerReadyLine>((done, fail) => {
      child.once('exit', (code) => fail(new Error(`pnpm model-server exited with ${code}: ${stderr}`)));
      createInterface({ input: child.stdout }).on('line', (line) => {
        if (line.startsWith('{')) done(JSON.parse(line) as ModelServerReadyLine);
      });
    });
    const answer = await fetch(`${ready.baseUrl}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'scripted-model',
        messages: [{ role: 'user', content: 'a mail arrived' }],
        tools: [{ type: 'function', function: { name: 'read_mail', parameters: { type: 'object' } } }],
      }),
    }).then((r) => r.json() as Promise<{ choices: { message: { content: string } }[] }>);
    expect(answer.choices[0]?.message.content).toContain('scripted model');
  });

  it('a relative scenario path is the one of the directory pnpm ran in (INIT_CWD)', async () => {
    const { scenarioPath } = await import('../src/run-model-server-cli.js');
    expect(scenarioPath('x/s.json', { INIT_CWD: '/home/me/agentmail' })).toBe('/home/me/agentmail/x/s.json');
    expect(scenarioPath('/abs/s.json', { INIT_CWD: '/home/me' })).toBe('/abs/s.json');
  });
});
