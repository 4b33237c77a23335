import { chmodSync, lstatSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { BridgeEvent } from '../../src/events.js';
import { TurnRpcClient } from '../../src/rpc/client.js';
import { TurnRpcServer } from '../../src/rpc/server.js';
import { UNIX_SOCKET_PATH_MAX_BYTES } from '../../src/rpc/socket-file.js';
import { killAll, spawnFixture, stubHandlers, tempDirs } from './fixtures/support.js';

// SPEC B-21: "a local channel only the bridge's user can open" — the socket's directory is 0700,
// the socket 0600; a crashed bridge's socket is replaced, a live bridge's never.

const dirs = tempDirs('am-rpc-sock-');
const tempDir = dirs.make;
const servers: TurnRpcServer<string>[] = [];

afterEach(async () => {
  await killAll();
  await Promise.all(servers.splice(0).map((s) => s.close()));
  dirs.cleanup();
});

const handlers = stubHandlers();

function server(dir: string, fileName?: string, emit?: (e: BridgeEvent) => void): TurnRpcServer<string> {
  const s = new TurnRpcServer<string>({
    dir,
    handlers,
    ...(fileName === undefined ? {} : { fileName }),
    ...(emit === undefined ? {} : { emit }),
  });
  servers.push(s);
  return s;
}

async function contextVia(s: TurnRpcServer<string>, turn: string): Promise<string> {
  const lease = s.openTurn(turn);
  const client = TurnRpcClient.fromEnv(lease.env);
  return (await client.context()).mailId;
}

const mode = (path: string): number => lstatSync(path).mode & 0o777;

describe('the socket file (SPEC B-21)', () => {
  it('the directory is created 0700 and the socket is 0600; close() removes the socket', async () => {
    const dir = join(tempDir(), 'data', 'run');
    const s = server(dir);
    await s.start();
    expect(mode(dir)).toBe(0o700);
    expect(lstatSync(s.socketPath).isSocket()).toBe(true);
    expect(mode(s.socketPath)).toBe(0o600);
    expect(await contextVia(s, 'm-1')).toBe('m-1');
    await s.close();
    expect(() => lstatSync(s.socketPath)).toThrow(/ENOENT/);
  });

  it('an existing directory with a loose mode is tightened to 0700', async () => {
    const dir = join(tempDir(), 'run');
    mkdirSync(dir, { mode: 0o755 });
    chmodSync(dir, 0o755);
    const s = server(dir);
    await s.start();
    expect(mode(dir)).toBe(0o700);
  });

  it("a crashed (SIGKILLed) bridge's stale socket is replaced without an rpc_problem (nothing listens on it)", async () => {
    const dir = join(tempDir(), 'run');
    const host = spawnFixture('./server-host.ts', [dir]);
    const ready = await host.next('ready');
    const socketPath = ready.socketPath as string;
    host.proc.kill('SIGKILL');
    await host.exited();
    expect(lstatSync(socketPath).isSocket()).toBe(true); // left behind by the crash
    const stale = TurnRpcClient.fromEnv(ready.env as Record<string, string>);
    await expect(stale.context()).rejects.toMatchObject({
      code: 'AM_RPC_BRIDGE_UNREACHABLE',
      message: expect.stringContaining('connection refused'),
    });

    // Regression: the failed first listen (EADDRINUSE) was also logged as a warning
    // (`rpc_problem` server_error) although the stale socket was then replaced.
    const events: BridgeEvent[] = [];
    const s = server(dir, undefined, (e) => void events.push(e));
    await s.start();
    expect(s.socketPath).toBe(socketPath);
    expect(mode(socketPath)).toBe(0o600);
    expect(await contextVia(s, 'after-crash')).toBe('after-crash');
    expect(events.filter((e) => e.type === 'rpc_problem')).toEqual([]);
  });

  it('a second live server on the same path is refused with AM_RPC_SOCKET_IN_USE; the first keeps serving', async () => {
    const dir = join(tempDir(), 'run');
    const first = server(dir);
    await first.start();
    const second = server(dir);
    await expect(second.start()).rejects.toMatchObject({
      code: 'AM_RPC_SOCKET_IN_USE',
      message: expect.stringContaining(first.socketPath),
    });
    expect(await contextVia(first, 'still-me')).toBe('still-me');
    // The refused server's close() must not remove the live server's socket.
    await second.close();
    expect(await contextVia(first, 'still-here')).toBe('still-here');
  });

  it('a live bridge in another process is not replaced either', async () => {
    const dir = join(tempDir(), 'run');
    const host = spawnFixture('./server-host.ts', [dir]);
    await host.next('ready');
    await expect(server(dir).start()).rejects.toMatchObject({ code: 'AM_RPC_SOCKET_IN_USE' });
  });

  it('a file that is not a socket is never deleted: AM_RPC_SOCKET_DIR_INVALID', async () => {
    const dir = join(tempDir(), 'run');
    mkdirSync(dir, { mode: 0o700 });
    const path = join(dir, 'bridge.sock');
    writeFileSync(path, 'precious');
    await expect(server(dir).start()).rejects.toMatchObject({ code: 'AM_RPC_SOCKET_DIR_INVALID' });
    expect(readFileSync(path, 'utf8')).toBe('precious');
  });

  it('a symlinked or relative directory is refused: AM_RPC_SOCKET_DIR_INVALID', async () => {
    const base = tempDir();
    mkdirSync(join(base, 'elsewhere'));
    symlinkSync(join(base, 'elsewhere'), join(base, 'run'));
    await expect(server(join(base, 'run')).start()).rejects.toMatchObject({
      code: 'AM_RPC_SOCKET_DIR_INVALID',
      message: expect.stringContaining('symlink'),
    });
    await expect(server('relative/run').start()).rejects.toMatchObject({ code: 'AM_RPC_SOCKET_DIR_INVALID' });
  });

  it('a socket path longer than the kernel allows is refused, naming the path and the fix', async () => {
    const base = tempDir();
    const dir = join(base, 'x'.repeat(UNIX_SOCKET_PATH_MAX_BYTES - base.length - 'bridge.sock'.length));
    const s = server(dir);
    expect(Buffer.byteLength(s.socketPath)).toBeGreaterThan(UNIX_SOCKET_PATH_MAX_BYTES);
    const err = await s.start().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'AM_RPC_SOCKET_PATH_TOO_LONG' });
    expect((err as Error).message).toContain(s.socketPath);
    expect((err as Error).message).toMatch(/shorter data directory/);
    // The longest allowed path works (the limit is the kernel's, not a guess).
    const over = Buffer.byteLength(s.socketPath) - UNIX_SOCKET_PATH_MAX_BYTES;
    const fits = server(dir.slice(0, -over));
    expect(Buffer.byteLength(fits.socketPath)).toBe(UNIX_SOCKET_PATH_MAX_BYTES);
    await fits.start();
    expect(await contextVia(fits, 'long-path')).toBe('long-path');
  });
});
