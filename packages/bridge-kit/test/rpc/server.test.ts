import { createConnection } from 'node:net';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { AgentMailError } from '@agentmail/shared-policy';
import { afterEach, describe, expect, expectTypeOf, it } from 'vitest';
import type { BridgeEvent } from '../../src/events.js';
import type { MailToolResult } from '../../src/mail-tools.js';
import type { GuardedCall } from '../../src/permission-flow.js';
import { TurnRpcClient } from '../../src/rpc/client.js';
import type { PermissionQuery } from '../../src/rpc/schemas.js';
import { type TurnRpcHandlers, TurnRpcServer } from '../../src/rpc/server.js';
import { TURN_RPC_LINE_MAX_CHARS } from '../../src/rpc/wire.js';
import { contextView, deferred, never, stubHandlers, tempDirs, within } from './fixtures/support.js';

// The server's contract in one process (the cross-process behaviour is in turn-rpc.test.ts):
// G-10-style validation, handler failures answered (never a crash), shutdown answers everything.

const dirs = tempDirs('am-rpc-srv-');
const servers: TurnRpcServer<string>[] = [];

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
  dirs.cleanup();
});

const CALL = { toolName: 'Bash', input: {}, toolCallId: '1', platformSessionId: 'p', cwd: '/' };

/** A permission handler that never decides; `asked` resolves when it runs. */
function hangingPermission() {
  const asked = deferred<void>();
  return {
    asked: asked.promise,
    decidePermission: () => {
      asked.resolve();
      return never<never>();
    },
  };
}

async function start(overrides: Partial<TurnRpcHandlers<string>> = {}, signal?: AbortSignal) {
  const dir = dirs.make();
  const logged: BridgeEvent[] = [];
  const emit = (e: BridgeEvent): void => void logged.push(e);
  const server = new TurnRpcServer<string>({
    dir: join(dir, 'run'),
    handlers: { ...stubHandlers(), ...overrides },
    emit,
    ...(signal === undefined ? {} : { signal }),
  });
  servers.push(server);
  await server.start();
  const lease = server.openTurn('turn-1');
  return { server, lease, client: TurnRpcClient.fromEnv(lease.env), logged };
}

/** Send raw lines on one connection; resolves with the first `count` answer lines. */
function raw(socketPath: string, lines: string[], count: number): Promise<Record<string, unknown>[]> {
  return new Promise((resolve, reject) => {
    const socket = createConnection(socketPath);
    const got: Record<string, unknown>[] = [];
    createInterface({ input: socket }).on('line', (l) => {
      got.push(JSON.parse(l) as Record<string, unknown>);
      if (got.length === count) {
        socket.destroy();
        resolve(got);
      }
    });
    socket.on('error', reject);
    for (const l of lines) socket.write(`${l}\n`);
  });
}

describe('TurnRpcServer', () => {
  it('tokens are fresh per turn, carry ≥ 32 random bytes and name the socket', async () => {
    const { server, lease } = await start();
    const other = server.openTurn('turn-2');
    expect(other.token).not.toBe(lease.token);
    const secret = lease.token.split('.')[1] ?? '';
    expect(Buffer.from(secret, 'base64url').length).toBeGreaterThanOrEqual(32);
    expect(lease.env).toEqual({
      AGENTMAIL_BRIDGE_SOCKET: server.socketPath,
      AGENTMAIL_TURN_TOKEN: lease.token,
    });
  });

  it('invalid params are refused naming the field and the accepted fields (G-10 style); no handler runs', async () => {
    let ran = 0;
    const { client } = await start({
      callTool: async () => {
        ran += 1;
        return { text: '' };
      },
      askQuestion: async () => {
        ran += 1;
        return { declined: false, answers: [] };
      },
    });
    await expect(
      client.callTool({ name: 'read_inbox', arguments: 'limit=3' as never }),
    ).rejects.toMatchObject({
      code: 'AM_RPC_PARAMS_INVALID',
      message: expect.stringMatching(
        /field "arguments": expected object, got string.*Accepted fields: name, arguments/,
      ),
    });
    await expect(
      client.askQuestion({ questions: [{ question: 'Tone?', options: 'formal' as never }] }),
    ).rejects.toMatchObject({
      code: 'AM_RPC_PARAMS_INVALID',
      message: expect.stringContaining('field "questions[0].options": expected array of objects, got string'),
    });
    await expect(client.recordSend({ targets: ['a'], extra: 1 } as never)).rejects.toMatchObject({
      code: 'AM_RPC_PARAMS_INVALID',
      message: expect.stringContaining('unknown field "extra"'),
    });
    const denied = await client.decidePermission({
      input: {},
      toolCallId: '',
      platformSessionId: '',
      cwd: '/',
    } as never);
    expect(denied).toMatchObject({ allow: false, code: 'AM_RPC_PARAMS_INVALID' });
    expect((denied as { reason: string }).reason).toContain('field "toolName": required, expected string');
    expect(ran).toBe(0);
  });

  it('unreadable request lines are answered, not fatal: the same connection serves the next request', async () => {
    const { server, lease } = await start();
    const answers = await raw(
      server.socketPath,
      [
        'this is not json',
        JSON.stringify({ id: 7, method: 'context', token: lease.token, params: {}, extra: true }),
        JSON.stringify({ id: 8, method: 'nope', token: 'forged.x' }),
        JSON.stringify({ id: 9, method: 'nope', token: lease.token }),
        JSON.stringify({ id: 10, method: 'context', token: lease.token }),
      ],
      5,
    );
    expect(answers[0]).toMatchObject({ id: null, error: { code: 'AM_RPC_REQUEST_INVALID' } });
    expect(answers[1]).toMatchObject({
      id: 7,
      error: { code: 'AM_RPC_REQUEST_INVALID', message: expect.stringContaining('"extra"') },
    });
    // Authentication comes first: a stranger learns nothing about the methods.
    expect(answers[2]).toMatchObject({ id: 8, error: { code: 'AM_RPC_TOKEN_INVALID' } });
    expect(answers[3]).toMatchObject({
      id: 9,
      error: {
        code: 'AM_RPC_REQUEST_INVALID',
        message: expect.stringContaining('context, callTool, decidePermission'),
      },
    });
    expect(answers[4]).toEqual({ id: 10, result: contextView('turn-1') });
  });

  it('a request line past the limit is answered AM_RPC_REQUEST_INVALID and the connection is closed', async () => {
    const { server } = await start();
    const socket = createConnection(server.socketPath);
    const answer = new Promise<string>((resolve) => {
      let text = '';
      socket.setEncoding('utf8');
      socket.on('data', (c: string) => {
        text += c;
      });
      socket.on('close', () => resolve(text));
    });
    socket.on('error', () => undefined);
    socket.write('x'.repeat(TURN_RPC_LINE_MAX_CHARS + 1));
    const text = await within(answer, 10_000, 'the answer and the close');
    expect(JSON.parse(text)).toMatchObject({ id: null, error: { code: 'AM_RPC_REQUEST_INVALID' } });
  });

  it('a handler that throws is answered with its message and code; the server keeps serving; a permission is denied', async () => {
    let fail = true;
    const { client, logged } = await start({
      callTool: async () => {
        if (fail) throw new AgentMailError('AM_TOOL_ARGS_INVALID', 'field "to": required');
        return { text: 'second try' };
      },
      decidePermission: () => {
        throw new Error('grant file unreadable');
      },
    });
    await expect(client.callTool({ name: 'send_mail' })).rejects.toMatchObject({
      code: 'AM_RPC_HANDLER_FAILED',
      remoteCode: 'AM_TOOL_ARGS_INVALID',
      message: 'field "to": required',
    });
    fail = false;
    expect(await client.callTool({ name: 'send_mail' })).toEqual({ text: 'second try', isError: false });
    const denied = await client.decidePermission(CALL);
    expect(denied).toMatchObject({ allow: false, code: 'AM_RPC_HANDLER_FAILED' });
    expect((denied as { reason: string }).reason).toContain('grant file unreadable');
    expect(logged).toContainEqual(
      expect.objectContaining({ type: 'rpc_problem', problem: 'handler_failed' }),
    );
  });

  it('a handler result of the wrong shape never leaves the bridge: an error, and for a permission a denial', async () => {
    const { client } = await start({
      callTool: async () => ({ text: 5 }) as never,
      decidePermission: async () => ({ allow: 'yes' }) as never,
      context: async () => ({ ...contextView('m'), permissionMode: 'FULL' }) as never,
    });
    await expect(client.callTool({ name: 'read_inbox' })).rejects.toMatchObject({
      code: 'AM_RPC_HANDLER_FAILED',
      message: expect.stringContaining('"text"'),
    });
    await expect(client.context()).rejects.toMatchObject({ code: 'AM_RPC_HANDLER_FAILED' });
    expect(await client.decidePermission(CALL)).toMatchObject({
      allow: false,
      code: 'AM_RPC_HANDLER_FAILED',
    });
  });

  it('extra fields of a handler result are dropped (a MailToolResult passes as it is)', async () => {
    const { client } = await start({
      callTool: async () => ({ text: 'sent', isError: false, details: { id: 'm-9' } }) as never,
    });
    expect(await client.callTool({ name: 'send_mail' })).toEqual({ text: 'sent', isError: false });
  });

  it('close() answers every running call at once (tool: AM_RPC_SERVER_CLOSED) and aborts the handlers', async () => {
    const running = deferred<AbortSignal>();
    const { server, client } = await start({
      callTool: (_t, _p, call) => {
        running.resolve(call.signal);
        return new Promise(() => undefined);
      },
    });
    const pending = client.callTool({ name: 'download_attachment' }).catch((e: unknown) => e);
    const signal = await within(running.promise, 5_000, 'callTool handler called');
    await server.close();
    expect(await within(pending, 2_000, 'the tool call answered')).toMatchObject({
      code: 'AM_RPC_SERVER_CLOSED',
    });
    expect(signal.aborted).toBe(true);
    expect(server.inFlight).toBe(0);
  });

  it('after close: start() and openTurn() throw AM_RPC_SERVER_CLOSED; close() is idempotent', async () => {
    const { server } = await start();
    await Promise.all([server.close(), server.close()]);
    expect(() => server.openTurn('late')).toThrow(expect.objectContaining({ code: 'AM_RPC_SERVER_CLOSED' }));
    await expect(server.start()).rejects.toMatchObject({ code: 'AM_RPC_SERVER_CLOSED' });
  });

  it("aborting the server's signal closes it (a waiting permission is denied with the shutdown reason)", async () => {
    const stop = new AbortController();
    const { asked, decidePermission } = hangingPermission();
    const { server, client } = await start({ decidePermission }, stop.signal);
    const decision = client.decidePermission(CALL);
    await within(asked, 5_000, 'permission handler called');
    stop.abort();
    expect(await within(decision, 2_000, 'decision')).toMatchObject({
      allow: false,
      code: 'AM_RPC_SERVER_CLOSED',
    });
    await server.close();
  });

  it('the shutdown denial is written in the turn locale', async () => {
    const { asked, decidePermission } = hangingPermission();
    const { server } = await start({ decidePermission });
    const lease = server.openTurn('zh-turn', { locale: 'zh-CN' });
    const decision = TurnRpcClient.fromEnv(lease.env).decidePermission(CALL);
    await within(asked, 5_000, 'permission handler called');
    await server.close();
    expect(((await decision) as { reason: string }).reason).toContain('正在关闭');
  });

  it("the handler types fit the kit's own: params pass straight to decideGuardedCall, a MailToolResult is a callTool result", () => {
    // Checked by tsc (pnpm typecheck): a drift between the wire shapes and the kit fails the build.
    expectTypeOf<PermissionQuery>().toExtend<GuardedCall>();
    expectTypeOf<MailToolResult>().toExtend<Awaited<ReturnType<TurnRpcHandlers<unknown>['callTool']>>>();
  });
});
