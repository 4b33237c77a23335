/**
 * The mail tools served on a process's stdio, as every MCP host starts a stdio server: the one
 * start shared by `agentmail-mcp` (mcp-main.ts, the plugin bundle's `mcp.js`) and the `agentmail
 * mcp` command of the CLI (packages/gateway), so the two cannot drift.
 */
import type { Readable, Writable } from 'node:stream';
import type { Locale } from '@agentmail/shared-policy';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { createMailToolServer, type MailToolBackend } from './mcp-server.js';

/** Options of {@link serveMailToolsOnStdio}. */
export interface ServeMailToolsOptions {
  /** Where each tool call runs (see `backendFromEnv`, `standaloneBackend`, `turnBackendFromEnv`). */
  backend: MailToolBackend;
  /** Locale of the tool descriptions and texts. @default 'en' */
  locale?: Locale;
  /** The MCP channel in. @default process.stdin */
  input?: Readable;
  /** The MCP channel out: nothing else may be written there. @default process.stdout */
  output?: Writable;
  /** Where the one "serving" line goes (never stdout). @default process.stderr */
  log?: (line: string) => void;
  /** Name in the "serving" line. @default 'agentmail-mcp' */
  name?: string;
}

/**
 * Serve the 11 mail tools (SPEC B-17) over MCP on stdio until the host closes the input, then
 * answer the calls still running and close the server. Resolves once closed; the caller decides whether to exit (open HTTP
 * keep-alive sockets may hold the event loop a few seconds).
 * @example
 * await serveMailToolsOnStdio({ backend: backendFromEnv(process.env, 'en') });
 * process.exit(0);
 */
export async function serveMailToolsOnStdio(options: ServeMailToolsOptions): Promise<void> {
  const input = options.input ?? process.stdin;
  const log = options.log ?? ((line: string) => void process.stderr.write(`${line}\n`));
  // Calls still running when the input ends are answered before the server closes: a host (or a
  // shell pipe) may send its last request and close stdin at once.
  const pending = new Set<Promise<unknown>>();
  const backend: MailToolBackend = {
    mode: options.backend.mode,
    call: (name, args, signal) => {
      const call = options.backend.call(name, args, signal);
      pending.add(call);
      void call.finally(() => pending.delete(call));
      return call;
    },
  };
  const server = createMailToolServer({ backend, locale: options.locale ?? 'en' });
  // Listen before connecting: a host may send its requests and close stdin at once.
  const ended = new Promise<void>((resolve) => {
    input.on('end', resolve);
    input.on('close', resolve);
  });
  await server.connect(new StdioServerTransport(input, options.output ?? process.stdout));
  log(`${options.name ?? 'agentmail-mcp'}: serving the mail tools (${options.backend.mode})`);
  await ended;
  // A request read just before the end may start its call a turn of the loop later.
  await new Promise((resolve) => setImmediate(resolve));
  while (pending.size > 0) await Promise.allSettled([...pending]);
  // The answer of the last call is written once its handler resumes, a turn of the loop later.
  await new Promise((resolve) => setImmediate(resolve));
  await server.close();
}
