/**
 * A child process for bridge-lock.test.ts: takes the bridge lock (waiting as a standby) and
 * reports on stdout, one JSON line each: `{"event":"waiting","owner":…}`, `{"event":"held"}`.
 * SIGTERM releases the lock and exits 0. Args: dir, agent name, stale ms, retry ms.
 */
import { BridgeLock } from '../../src/bridge-lock.js';

const [dir = '', agentName = '', staleMs = '15000', retryMs = '2000'] = process.argv.slice(2);
const say = (line: object): void => {
  process.stdout.write(`${JSON.stringify(line)}\n`);
};
const lock = new BridgeLock({
  dir,
  agentName,
  staleMs: Number(staleMs),
  retryMs: Number(retryMs),
  onLost: (err) => say({ event: 'lost', err: err.message }),
});
const stop = new AbortController();
process.on('SIGTERM', () => {
  stop.abort();
  void lock.release().then(() => process.exit(0));
});
const held = await lock.acquire(stop.signal, (owner) => say({ event: 'waiting', owner }));
if (held) say({ event: 'held', pid: process.pid });
// Stay alive (the lock's refresh timer is unref'd).
setInterval(() => undefined, 60_000);
