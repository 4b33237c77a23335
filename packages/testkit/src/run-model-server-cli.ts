import { isAbsolute, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { TESTKIT_ERROR_CODES, TestkitError } from './errors.js';
import { type ModelServer, startModelServer } from './model-server.js';
import { loadScenarioFile } from './scenario-file.js';

const USAGE = 'usage: agentmail-model-server <scenario.json> [--port <n>]';

/**
 * Where a scenario file named on the command line is: an absolute path as it is; a relative one
 * against the directory the person ran the command in — `INIT_CWD` when pnpm runs it
 * (`pnpm model-server …` from the repository root runs in packages/testkit), else the cwd.
 */
export function scenarioPath(file: string, env: NodeJS.ProcessEnv): string {
  return isAbsolute(file) ? file : resolve(env.INIT_CWD || process.cwd(), file);
}

/** The line printed on stdout once the server listens (one JSON object, then `\n`). */
export interface ModelServerReadyLine {
  /** Origin, e.g. `http://127.0.0.1:40123`. */
  url: string;
  /** OpenAI base URL for the host, `${url}/v1`. */
  baseUrl: string;
  port: number;
  pid: number;
}

/**
 * Starts a model server from a scenario file and writes one {@link ModelServerReadyLine} to
 * `stdout`. The caller owns the returned server. The `agentmail-model-server` bin
 * (src/model-server-cli.ts) runs this and closes the server on SIGTERM/SIGINT.
 * @throws {TestkitError} `AM_TESTKIT_CLI_USAGE` for bad arguments, `AM_TESTKIT_SCENARIO_INVALID` for a bad file.
 * @example
 * // child process: agentmail-model-server ./scenarios.json
 * // stdout: {"url":"http://127.0.0.1:40123","baseUrl":"http://127.0.0.1:40123/v1","port":40123,"pid":4242}
 */
export async function runModelServerCli(
  argv: readonly string[],
  stdout: { write(text: string, callback: () => void): unknown },
): Promise<ModelServer> {
  let file: string | undefined;
  let port = 0;
  try {
    const { positionals, values } = parseArgs({
      args: [...argv],
      options: { port: { type: 'string' } },
      allowPositionals: true,
      strict: true,
    });
    if (positionals.length !== 1)
      throw new Error(`expected exactly one scenario file, got ${positionals.length}`);
    file = positionals[0];
    if (values.port !== undefined) {
      port = Number(values.port);
      if (!Number.isInteger(port) || port < 0 || port > 65_535)
        throw new Error(`--port must be 0..65535, got ${values.port}`);
    }
  } catch (error) {
    throw new TestkitError(TESTKIT_ERROR_CODES.CLI_USAGE, `${(error as Error).message}; ${USAGE}`);
  }
  const scenarioFile = await loadScenarioFile(scenarioPath(file as string, process.env));
  const server = await startModelServer({ ...scenarioFile, port });
  const line: ModelServerReadyLine = {
    url: server.url,
    baseUrl: server.baseUrl,
    port: server.port,
    pid: process.pid,
  };
  await new Promise<void>((resolve) => stdout.write(`${JSON.stringify(line)}\n`, resolve));
  return server;
}
