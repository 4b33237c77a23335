import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { TurnRpcClient } from '../../src/rpc/client.js';
import { LineSplitter } from '../../src/rpc/wire.js';
import { deferred, within } from './fixtures/support.js';

// The client fails closed (SPEC B-21, P-5): whatever goes wrong between a hook and the bridge,
// a permission is denied (never thrown, never allowed) and other calls throw a typed error.
// The "bridge" here is a fake socket server that misbehaves on purpose.

const dirs: string[] = [];
const fakes: Server[] = [];

afterEach(async () => {
  await Promise.all(fakes.splice(0).map((s) => new Promise((r) => s.close(r))));
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function socketPath(): string {
  const dir = mkdtempSync(join(tmpdir(), 'am-rpc-cli-'));
  dirs.push(dir);
  return join(dir, 'bridge.sock');
}

/** A fake bridge: `onRequest` gets each request line and the socket. */
async function fakeBridge(
  onRequest: (line: string, socket: Socket) => void,
): Promise<{ path: string; got: Promise<string> }> {
  const path = socketPath();
  const got = deferred<string>();
  const server = createServer((socket) => {
    const lines = new LineSplitter();
    socket.setEncoding('utf8');
    socket.on('error', () => undefined);
    socket.on('data', (chunk: string) => {
      for (const line of lines.push(chunk)) {
        got.resolve(line);
        onRequest(line, socket);
      }
    });
  });
  fakes.push(server);
  await new Promise<void>((r) => server.listen(path, r));
  return { path, got: got.promise };
}

const CALL = {
  toolName: 'Bash',
  input: { command: 'ls' },
  toolCallId: 't1',
  platformSessionId: 'p1',
  cwd: '/srv',
};
const client = (path: string, extra: { locale?: 'en' | 'zh-CN' } = {}) =>
  new TurnRpcClient({ socketPath: path, token: 'id.secret', ...extra });

describe('TurnRpcClient.fromEnv', () => {
  it('names both variables when neither is set, and the one that is missing', () => {
    expect(() => TurnRpcClient.fromEnv({})).toThrow(
      expect.objectContaining({
        code: 'AM_RPC_ENV_MISSING',
        message: expect.stringMatching(/^AGENTMAIL_BRIDGE_SOCKET and AGENTMAIL_TURN_TOKEN are not set/),
      }),
    );
    expect(() =>
      TurnRpcClient.fromEnv({ AGENTMAIL_BRIDGE_SOCKET: '/run/b.sock', AGENTMAIL_TURN_TOKEN: ' ' }),
    ).toThrow(
      expect.objectContaining({ message: expect.stringMatching(/^AGENTMAIL_TURN_TOKEN is not set/) }),
    );
    expect(() =>
      TurnRpcClient.fromEnv({ AGENTMAIL_BRIDGE_SOCKET: 'run/b.sock', AGENTMAIL_TURN_TOKEN: 't' }),
    ).toThrow(
      expect.objectContaining({ code: 'AM_RPC_ENV_MISSING', message: expect.stringContaining('absolute') }),
    );
  });

  it('refuses a timeout that is not a positive number of ms', () => {
    expect(() => new TurnRpcClient({ socketPath: '/x.sock', token: 't', timeoutMs: 0 })).toThrow(
      expect.objectContaining({ code: 'AM_OPTION_OUT_OF_RANGE' }),
    );
  });
});

describe('TurnRpcClient fails closed', () => {
  it('no socket at the path: a permission is denied, other calls throw AM_RPC_BRIDGE_UNREACHABLE', async () => {
    const rpc = client(socketPath());
    const denied = await rpc.decidePermission(CALL);
    expect(denied).toMatchObject({ allow: false, code: 'AM_RPC_BRIDGE_UNREACHABLE' });
    expect((denied as { reason: string }).reason).toMatch(/could not be reached \(.*no socket at this path/);
    for (const call of [
      () => rpc.context(),
      () => rpc.callTool({ name: 'read_inbox' }),
      () => rpc.recordSend({ targets: ['bob'] }),
      () => rpc.askQuestion({ questions: [{ question: 'q' }] }),
    ]) {
      await expect(call()).rejects.toMatchObject({ code: 'AM_RPC_BRIDGE_UNREACHABLE' });
    }
  });

  it('the connection drops after the request arrived: denied / AM_RPC_BRIDGE_UNREACHABLE', async () => {
    const { path } = await fakeBridge((_line, socket) => socket.destroy());
    const rpc = client(path);
    expect(await rpc.decidePermission(CALL)).toMatchObject({
      allow: false,
      code: 'AM_RPC_BRIDGE_UNREACHABLE',
    });
    await expect(rpc.context()).rejects.toMatchObject({
      code: 'AM_RPC_BRIDGE_UNREACHABLE',
      message: expect.stringContaining('closed before the answer'),
    });
  });

  it('a malformed answer (not JSON, no result, an unknown code, a truthy non-true allow) is never an allow', async () => {
    const answers = [
      'hello\n',
      '{"id":1}\n',
      '{"id":1,"error":{"code":"E_WHAT","message":"?"}}\n',
      '{"id":1,"result":{"allow":"yes"}}\n',
      '{"id":1,"result":{"allow":1}}\n',
      '{"id":1,"result":{"allow":true,"always":"yes"}}\n',
      '{"id":1,"result":null}\n',
    ];
    for (const answer of answers) {
      const { path } = await fakeBridge((_line, socket) => socket.write(answer));
      const decision = await client(path).decidePermission(CALL);
      expect(decision, answer).toMatchObject({ allow: false });
    }
    const { path } = await fakeBridge((_line, socket) => socket.write('{"id":1,"result":{"text":1}}\n'));
    await expect(client(path).callTool({ name: 'x' })).rejects.toMatchObject({
      code: 'AM_RPC_BRIDGE_UNREACHABLE',
    });
  });

  it('a well-formed allow passes, and only that (the guards accept what a bridge sends)', async () => {
    const { path } = await fakeBridge((_line, socket) => socket.write('{"id":1,"result":{"allow":true}}\n'));
    expect(await client(path).decidePermission(CALL)).toEqual({ allow: true });
  });

  it('the request carries the token, the method and the params on one line', async () => {
    const { path, got } = await fakeBridge((_line, socket) => socket.write('{"id":1,"result":{}}\n'));
    await client(path).recordSend({ targets: ['bob@/srv.'] });
    expect(JSON.parse(await got)).toEqual({
      id: 1,
      method: 'recordSend',
      token: 'id.secret',
      params: { targets: ['bob@/srv.'] },
    });
  });

  it('a caller deadline denies a permission (AM_RPC_TIMEOUT) and throws for other calls; the connection is closed', async () => {
    const closed = deferred<void>();
    const { path } = await fakeBridge((_line, socket) => socket.on('close', () => closed.resolve()));
    const rpc = client(path);
    const denied = await rpc.decidePermission(CALL, { timeoutMs: 150 });
    expect(denied).toMatchObject({ allow: false, code: 'AM_RPC_TIMEOUT' });
    expect((denied as { reason: string }).reason).toContain('within 1 s');
    // The bridge sees the hang-up (its handler's signal aborts: turn-rpc.test.ts).
    await within(closed.promise, 2_000, 'the bridge saw the connection close');
    await expect(rpc.context({ timeoutMs: 150 })).rejects.toMatchObject({ code: 'AM_RPC_TIMEOUT' });
  });

  it('a tool that waits for a person (ask_person, P-10) has no default limit; other tool calls keep theirs', async () => {
    const waiting: Socket[] = [];
    const { path } = await fakeBridge((line, socket) => {
      if ((JSON.parse(line) as { params: { name: string } }).params.name === 'ask_person')
        waiting.push(socket);
    });
    const rpc = new TurnRpcClient({ socketPath: path, token: 'id.secret', timeoutMs: 150 });
    const asked = rpc.callTool(
      { name: 'ask_person', arguments: { question: 'Go?' } },
      { waitsForPerson: true },
    );
    await expect(rpc.callTool({ name: 'read_inbox', arguments: {} })).rejects.toMatchObject({
      code: 'AM_RPC_TIMEOUT',
    });
    // Past the client's own limit the question is still waiting; the person's answer comes through.
    expect(waiting).toHaveLength(1);
    waiting[0]?.write('{"id":1,"result":{"text":"The person chose: yes","isError":false}}\n');
    expect(await asked).toEqual({ text: 'The person chose: yes', isError: false });
  });

  it('an abort denies a permission (AM_RPC_ABORTED) and throws for other calls, also when aborted before the call', async () => {
    const { path, got } = await fakeBridge(() => undefined);
    const rpc = client(path);
    const stop = new AbortController();
    const decision = rpc.decidePermission(CALL, { signal: stop.signal });
    await got;
    stop.abort(new Error('hook cancelled'));
    expect(await decision).toMatchObject({ allow: false, code: 'AM_RPC_ABORTED' });
    await expect(rpc.context({ signal: stop.signal })).rejects.toMatchObject({ code: 'AM_RPC_ABORTED' });
  });

  it('the denial texts follow the client locale', async () => {
    const denied = await client(socketPath(), { locale: 'zh-CN' }).decidePermission(CALL);
    expect((denied as { reason: string }).reason).toMatch(/^已拒绝：无法连接/);
  });
});

describe('LineSplitter', () => {
  it('joins lines split across chunks, drops empty lines, and refuses a line past the limit', () => {
    const s = new LineSplitter(10);
    expect(s.push('{"a"')).toEqual([]);
    expect(s.push(':1}\n\n{"b":2}\n{')).toEqual(['{"a":1}', '{"b":2}']);
    expect(s.push('}\n')).toEqual(['{}']);
    expect(() => s.push('x'.repeat(11))).toThrow(expect.objectContaining({ code: 'AM_RPC_REQUEST_INVALID' }));
    expect(() => new LineSplitter(10).push(`${'x'.repeat(11)}\n`)).toThrow(
      expect.objectContaining({ code: 'AM_RPC_REQUEST_INVALID' }),
    );
  });
});
