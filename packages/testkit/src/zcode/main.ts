#!/usr/bin/env node
/**
 * The ZCode stand-in as an executable (`zcode …`): see cli.ts. SIGTERM and SIGINT abort the turn
 * (the model request, running tools) and close the MCP servers before the exit; the exit code on a
 * signal is 128 + its number (UNVERIFIED for the real CLI, research/zcode.md §3).
 */
import { runZcodeCli } from './cli.js';

const controller = new AbortController();
let signalled: NodeJS.Signals | undefined;
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.on(signal, () => {
    signalled ??= signal;
    controller.abort(new Error(`CLI received ${signal}`));
  });
const code = await runZcodeCli(process.argv.slice(2), {
  stdout: (t) => process.stdout.write(t),
  stderr: (t) => process.stderr.write(t),
  env: process.env,
  signal: controller.signal,
});
process.exitCode = signalled === 'SIGTERM' ? 143 : signalled === 'SIGINT' ? 130 : code;
// Stray handles (an MCP server that ignores stdin closing) must not keep a finished run alive.
setTimeout(() => process.exit(), 200).unref();
