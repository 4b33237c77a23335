#!/usr/bin/env node
// Bin entry `agentmail-model-server <scenario.json> [--port <n>]`: prints one JSON line
// (ModelServerReadyLine) once listening, exits 0 on SIGTERM/SIGINT, 2 on bad arguments, 1 on a bad
// file. Kept apart from run-model-server-cli.ts so that importing the package never starts a server.
import { TESTKIT_ERROR_CODES, TestkitError } from './errors.js';
import { runModelServerCli } from './run-model-server-cli.js';

runModelServerCli(process.argv.slice(2), process.stdout).then(
  (server) => {
    const stop = (): void => void server.close().then(() => process.exit(0));
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  },
  (error: unknown) => {
    const code = error instanceof TestkitError ? error.code : 'ERROR';
    process.stderr.write(`agentmail-model-server: ${code}: ${(error as Error).message}\n`);
    process.exit(code === TESTKIT_ERROR_CODES.CLI_USAGE ? 2 : 1);
  },
);
