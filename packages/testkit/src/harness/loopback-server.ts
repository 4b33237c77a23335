/**
 * The HTTP server of the harness's loopback stand-ins (the scripted model server, the Gateway
 * proxy): Node's own, with idle keep-alive connections kept for {@link LOOPBACK_KEEP_ALIVE_MS}.
 *
 * Why: Node closes an idle keep-alive connection after 5 s by default. A host's HTTP client that
 * keeps idle sockets longer (Claude Code's, the pi SDK's) may send its next request on a socket the
 * server is closing at that moment, and gets ECONNRESET — with retries off in the tests, a failed
 * turn. The server must never be the side that gives up an idle connection first.
 */
import { createServer, type Server } from 'node:http';

/** How long an idle keep-alive connection stays open, in ms (longer than any host client keeps one). @default 600_000 */
export const LOOPBACK_KEEP_ALIVE_MS = 600_000;

/** A `node:http` server (not listening yet) that keeps idle connections {@link LOOPBACK_KEEP_ALIVE_MS}. */
export function createLoopbackServer(): Server {
  const server = createServer();
  server.keepAliveTimeout = LOOPBACK_KEEP_ALIVE_MS;
  // Headers of a request must still arrive in time; a request may take as long as a turn.
  server.headersTimeout = LOOPBACK_KEEP_ALIVE_MS + 1_000;
  server.requestTimeout = 0;
  return server;
}
