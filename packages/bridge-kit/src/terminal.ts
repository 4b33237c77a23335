/**
 * Plain lines for a person who starts a bridge daemon by hand (stderr is a TTY): a failure to
 * start said with its fix, a Gateway that is not up yet as a "waiting" line, the connection as a
 * "connected" line. The pino JSON log stays as it is (journald reads that); these lines only add
 * what a person at a terminal reads. Shared by `agentmail-pi` and the drivers (`agentmail-claude`,
 * `agentmail-zcode`), so each says the same in the same words.
 */
import type { BridgeEvent } from './events.js';

/** Writes one plain line and its fix, or nothing when the stream is not a terminal. */
export type SayLine = (line: string, fix?: string) => void;

/**
 * The {@link SayLine} of daemon `name` on `stream` (default stderr): `<name>: <line>` and, given a
 * fix, `  fix: <fix>` below; nothing at all when `stream` is not a TTY.
 * @example const say = terminalLines('agentmail-zcode'); say(`bad configuration: ${err.message}`);
 */
export function terminalLines(
  name: string,
  stream: { isTTY?: boolean; write(text: string): unknown } = process.stderr,
): SayLine {
  const onTerminal = stream.isTTY === true;
  return (line, fix) => {
    if (onTerminal) stream.write(`${name}: ${line}\n${fix === undefined ? '' : `  fix: ${fix}\n`}`);
  };
}

/** The agent a daemon starts as, for its lines. */
export interface StartingAgent {
  gatewayUrl: string;
  agentName: string;
}

/**
 * The words of a start the Gateway refused for good (SPEC G-13, a permanent 4xx from the
 * client: `status` and the problem body's `detail` / `suggestion`): which Gateway, what it
 * said, the fix.
 */
export function startRefusal(err: unknown, agent: StartingAgent): { line: string; fix?: string } {
  const e = err as { status?: unknown; body?: { detail?: unknown; suggestion?: unknown } };
  const detail = typeof e.body?.detail === 'string' ? e.body.detail : (err as Error).message;
  const fix = typeof e.body?.suggestion === 'string' ? e.body.suggestion : undefined;
  return {
    line: `the Gateway at ${agent.gatewayUrl} refused agent "${agent.agentName}": ${detail} (HTTP ${String(e.status)})`,
    ...(fix === undefined ? {} : { fix }),
  };
}

/**
 * Say a Gateway that is not up yet (`start_failed`, not permanent: "waiting … trying again in
 * N s") and the connection (`ready`: "connected to … as agent …") of a bridge's event bus.
 * @returns the unsubscribe function.
 */
export function sayStartProgress<E extends { type: string }>(
  events: { subscribe(listener: (event: E) => void): () => void },
  say: SayLine,
  agent: StartingAgent,
): () => void {
  return events.subscribe((event) => {
    // The kit's own events among the bridge's (a host adds its own types).
    const e = event as unknown as BridgeEvent;
    if (e.type === 'start_failed' && !e.permanent)
      say(
        `waiting for the Gateway at ${agent.gatewayUrl} (${e.error}); trying again in ${Math.round(e.retry_ms / 1000)} s`,
      );
    else if (e.type === 'ready') say(`connected to ${agent.gatewayUrl} as agent "${agent.agentName}"`);
  });
}
