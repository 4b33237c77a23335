import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { PermissionAnswer } from '../../src/rpc/schemas.js';
import { type TurnRpcHandlers, TurnRpcServer } from '../../src/rpc/server.js';
import { TURN_RPC_SOCKET_ENV, TURN_RPC_TOKEN_ENV } from '../../src/rpc/wire.js';
import {
  BASH_CALL,
  contextView,
  deferred,
  killAll,
  never,
  spawnFixture,
  tempDirs,
  within,
} from './fixtures/support.js';

// SPEC B-21, P-4..P-7, B-10: a host's tool and hook processes reach the bridge over its socket.
// Real child processes (the client side), real Unix sockets; every wait is on an event.

const CLIENT = './client-child.ts';
const HOST = './server-host.ts';
/** "Promptly": an answer that a shutdown or a dead bridge owes must arrive within this. */
const PROMPT_MS = 3_000;

interface Turn {
  mailId: string;
}

const dirs = tempDirs('am-rpc-');
const servers: TurnRpcServer<Turn>[] = [];

afterEach(async () => {
  await killAll();
  await Promise.all(servers.splice(0).map((s) => s.close()));
  dirs.cleanup();
});

/** Handlers that record every call; `decide` is what decidePermission waits for. */
function recordingHandlers(decide?: () => Promise<PermissionAnswer>) {
  const calls: { method: string; turn: Turn; params?: unknown }[] = [];
  const asked = deferred<{ signal: AbortSignal }>();
  const handlers: TurnRpcHandlers<Turn> = {
    context: async (turn) => {
      calls.push({ method: 'context', turn });
      return contextView(turn.mailId);
    },
    callTool: async (turn, params) => {
      calls.push({ method: 'callTool', turn, params });
      return { text: `ran ${params.name} with ${JSON.stringify(params.arguments)}` };
    },
    decidePermission: async (turn, params, call) => {
      calls.push({ method: 'decidePermission', turn, params });
      asked.resolve(call);
      return decide ? decide() : { allow: false, reason: 'no decider' };
    },
    askQuestion: async (turn, params) => {
      calls.push({ method: 'askQuestion', turn, params });
      return {
        declined: false,
        answers: params.questions.map((q) => ({ question: q.question, selected: ['formal'] })),
      };
    },
    recordSend: async (turn, params) => {
      calls.push({ method: 'recordSend', turn, params });
    },
  };
  return { calls, asked, handlers };
}

async function startServer(handlers: TurnRpcHandlers<Turn>): Promise<TurnRpcServer<Turn>> {
  const server = new TurnRpcServer<Turn>({ dir: join(dirs.make(), 'run'), handlers });
  servers.push(server);
  await server.start();
  return server;
}

/**
 * A bridge whose permission handler waits for `decide`, and a child that asks (then runs
 * `more` steps). Resolves once the handler runs: the proof that the child is waiting.
 */
async function childWaitingForPermission(decide: () => Promise<PermissionAnswer>, more: object[] = []) {
  const { asked, calls, handlers } = recordingHandlers(decide);
  const server = await startServer(handlers);
  const lease = server.openTurn({ mailId: 'm-1' });
  const steps = [{ method: 'decidePermission', params: BASH_CALL }, ...more];
  const child = spawnFixture(CLIENT, [JSON.stringify(steps)], lease.env);
  const call = await within(asked.promise, 20_000, 'the permission handler was called');
  return { server, lease, child, call, calls };
}

describe('turn RPC across processes (SPEC B-21)', () => {
  it('a host process gets its turn context, runs a mail tool and records a send; handlers get the registered turn', async () => {
    const { calls, handlers } = recordingHandlers();
    const server = await startServer(handlers);
    const turn = { mailId: 'm-42' };
    const lease = server.openTurn(turn);
    expect(Object.keys(lease.env).sort()).toEqual([TURN_RPC_SOCKET_ENV, TURN_RPC_TOKEN_ENV].sort());
    expect(lease.env.AGENTMAIL_BRIDGE_SOCKET).toBe(server.socketPath);

    const child = spawnFixture(
      CLIENT,
      [
        JSON.stringify([
          { method: 'context' },
          { method: 'callTool', params: { name: 'read_inbox', arguments: { limit: 3 } } },
          { method: 'recordSend', params: { targets: ['bob@/srv/app.', 'carol'] } },
          {
            method: 'askQuestion',
            params: {
              questions: [{ question: 'Which tone?', options: [{ label: 'formal' }, { label: 'casual' }] }],
            },
          },
        ]),
      ],
      lease.env,
    );
    await child.next('done');
    const results = child.lines.filter((l) => l.event === 'result');
    expect(results.map((r) => r.method)).toEqual(['context', 'callTool', 'recordSend', 'askQuestion']);
    expect(results[0]?.value).toEqual(contextView(turn.mailId));
    expect(results[1]?.value).toEqual({ text: 'ran read_inbox with {"limit":3}', isError: false });
    expect(results[2]?.value).toBeNull();
    expect(results[3]?.value).toEqual({
      declined: false,
      answers: [{ question: 'Which tone?', selected: ['formal'] }],
    });

    expect(calls.map((c) => c.method)).toEqual(['context', 'callTool', 'recordSend', 'askQuestion']);
    for (const c of calls) expect(c.turn).toBe(turn);
    expect(calls[2]?.params).toEqual({ targets: ['bob@/srv/app.', 'carol'] });
  });

  it('a permission waits for the person: the child is provably waiting, then the decision (always) reaches it', async () => {
    const decision = deferred<PermissionAnswer>();
    const { server, child, calls } = await childWaitingForPermission(() => decision.promise);
    // The handler running is the proof: the request arrived and the child awaits its answer.
    expect(server.inFlight).toBe(1);
    expect(child.lines.some((l) => l.event === 'result')).toBe(false);
    expect(calls[0]?.params).toEqual(BASH_CALL);

    decision.resolve({ allow: true, always: true });
    const result = await child.next('result');
    expect(result.value).toEqual({ allow: true, always: true });
    expect(server.inFlight).toBe(0);
  });

  it("a denial with the person's note reaches the child as the reason", async () => {
    const decision = deferred<PermissionAnswer>();
    const { child } = await childWaitingForPermission(() => decision.promise);
    const reason =
      'Denied by bob. Note: "not on main, use a branch". Mails that arrived while waiting: "stop"';
    decision.resolve({ allow: false, reason });
    const result = await child.next('result');
    expect(result.value).toEqual({ allow: false, reason });
  });

  it('the bridge shuts down while a child waits: the child gets a denial saying so, promptly; the handler is told (P-7)', async () => {
    const { server, child, call } = await childWaitingForPermission(never, [{ method: 'context' }]);

    const closedAt = Date.now();
    await within(server.close(), PROMPT_MS, 'close()');
    const result = await child.next('result', PROMPT_MS);
    expect(result.at - closedAt).toBeLessThan(PROMPT_MS);
    const answer = result.value as { allow: boolean; reason: string; code: string };
    expect(answer.allow).toBe(false);
    expect(answer.reason).toMatch(/shutting down/);
    expect(answer.code).toBe('AM_RPC_SERVER_CLOSED');
    expect(call.signal.aborted).toBe(true);
    // After close nothing listens and the socket file is gone: the next call fails closed.
    expect(existsSync(server.socketPath)).toBe(false);
    const next = await child.next('error', PROMPT_MS);
    expect(next).toMatchObject({ method: 'context', code: 'AM_RPC_BRIDGE_UNREACHABLE' });
  });

  it('a forged token is refused (AM_RPC_TOKEN_INVALID) and never reaches a handler; a forged permission is denied', async () => {
    const { calls, handlers } = recordingHandlers(async () => ({ allow: true }));
    const server = await startServer(handlers);
    const real = server.openTurn({ mailId: 'm-1' });
    const [id] = real.token.split('.');
    const forged = [
      `${id}.${Buffer.alloc(32, 7).toString('base64url')}`, // right id, wrong secret
      'not-a-token',
      `${real.token}x`,
    ];
    for (const token of forged) {
      const child = spawnFixture(
        CLIENT,
        [JSON.stringify([{ method: 'context' }, { method: 'decidePermission', params: BASH_CALL }])],
        { ...real.env, AGENTMAIL_TURN_TOKEN: token },
      );
      await child.next('done');
      expect(child.lines.find((l) => l.event === 'error')).toMatchObject({
        method: 'context',
        code: 'AM_RPC_TOKEN_INVALID',
      });
      expect(child.lines.find((l) => l.event === 'result')?.value).toMatchObject({
        allow: false,
        code: 'AM_RPC_TOKEN_INVALID',
      });
    }
    expect(calls).toEqual([]);
  });

  it('a revoked token (turn closed) is refused; a call still waiting when the turn closes is denied at once', async () => {
    const { server, lease, child: waiting, call, calls } = await childWaitingForPermission(never);
    lease.close();
    const denied = await waiting.next('result', PROMPT_MS);
    expect(denied.value).toMatchObject({ allow: false, code: 'AM_RPC_TOKEN_INVALID' });
    expect((denied.value as { reason: string }).reason).toMatch(/turn .* has ended/);
    expect(call.signal.aborted).toBe(true);

    const late = spawnFixture(CLIENT, [JSON.stringify([{ method: 'context' }])], lease.env);
    expect(await late.next('error')).toMatchObject({ code: 'AM_RPC_TOKEN_INVALID' });
    expect(calls.map((c) => c.method)).toEqual(['decidePermission']);
    // Another turn's token still works: revocation is per turn.
    const other = server.openTurn({ mailId: 'm-2' });
    const ok = spawnFixture(CLIENT, [JSON.stringify([{ method: 'context' }])], other.env);
    expect((await ok.next('result')).value).toMatchObject({ mailId: 'm-2' });
  });

  it('the bridge process is SIGKILLed while a child waits: the waiting call denies (fails closed), promptly', async () => {
    const dir = join(dirs.make(), 'run');
    const host = spawnFixture(HOST, [dir]);
    const ready = await host.next('ready');
    const env = ready.env as Record<string, string>;
    const child = spawnFixture(
      CLIENT,
      [JSON.stringify([{ method: 'decidePermission', params: BASH_CALL }])],
      env,
    );
    await host.next('asked');

    const killedAt = Date.now();
    host.proc.kill('SIGKILL');
    const result = await child.next('result', PROMPT_MS + 2_000);
    expect(result.at - killedAt).toBeLessThan(PROMPT_MS);
    expect(result.value).toMatchObject({ allow: false, code: 'AM_RPC_BRIDGE_UNREACHABLE' });
    expect((result.value as { reason: string }).reason).toMatch(/could not be reached/);
  });

  it('a host process killed while it waits (its host timed the hook out): the handler signal aborts', async () => {
    const { server, child, call } = await childWaitingForPermission(never);
    const aborted = new Promise<void>((resolve) => call.signal.addEventListener('abort', () => resolve()));
    child.proc.kill('SIGKILL');
    await within(aborted, PROMPT_MS, 'the handler signal aborted');
    expect(server.inFlight).toBe(0);
  });
});
