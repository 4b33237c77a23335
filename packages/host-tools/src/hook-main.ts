#!/usr/bin/env node
import { runHook } from './hook-runner.js';
/**
 * `agentmail-hook <host>`: one hook event of a host (see hook-runner.ts). The host writes the event
 * as JSON on stdin; the decision goes to stdout in the host's shape. An unknown host id exits 2,
 * which blocks the call (a hook that cannot tell its host must not let a call pass).
 */
import { HOSTS, hostProfile } from './hosts.js';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const id = process.argv[2] ?? '';
const host = hostProfile(id);
if (!host) {
  process.stderr.write(
    `agentmail-hook: unknown host "${id}"; run it as \`agentmail-hook <host>\` with one of: ${Object.keys(HOSTS).join(', ')}\n`,
  );
  process.exitCode = 2;
} else {
  const out = await runHook({ host, stdin: await readStdin() });
  if (out.stderr) process.stderr.write(out.stderr);
  if (out.stdout) process.stdout.write(out.stdout);
  process.exitCode = out.exitCode;
}
