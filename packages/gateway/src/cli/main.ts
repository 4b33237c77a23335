#!/usr/bin/env node
/**
 * Entry point of the `agentmail` binary: runs the program on the process's arguments and stdio
 * and sets the exit code (0 ok, 2 usage, 1 refusal). Everything else lives in program.ts.
 */
import { processIo } from './output.js';
import { runCli } from './program.js';

process.exitCode = await runCli(process.argv.slice(2), processIo());
