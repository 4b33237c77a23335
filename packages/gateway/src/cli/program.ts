import { Command, CommanderError } from 'commander';
import pkg from '../../package.json' with { type: 'json' };
import { registerAdminCommands } from './admin.js';
import { registerAttachmentCommands } from './attachments.js';
import { registerConnectionCommands } from './connection.js';
import { createContext } from './context.js';
import { registerDoctorCommand } from './doctor.js';
import { CliError } from './errors.js';
import { registerMailCommands } from './mail.js';
import { registerMcpCommand } from './mcp.js';
import { type CliIo, reportError, terminalIo } from './output.js';
import { registerPermissionCommands } from './permissions.js';
import { registerServeCommand } from './serve.js';
import { registerServiceCommands } from './service.js';

/** Exit code of a usage error (bad flag, missing argument). */
export const EXIT_USAGE = 2;
/** Exit code of a refusal or failure (the server said no, or could not be reached). */
export const EXIT_FAILURE = 1;

/**
 * Build the `agentmail` program: every command, writing through `io`. Commander's own usage
 * errors are thrown as `CommanderError` (not exiting the process) so {@link runCli} can map them
 * to exit code 2.
 */
export function buildProgram(io: CliIo, options: { json?: boolean } = {}): Command {
  const ctx = createContext(io);
  const program = new Command('agentmail')
    .description('AgentMail: run the Gateway, and read, send and decide from the command line')
    .version(pkg.version)
    .option(
      '--url <url>',
      'Gateway URL (env AGENTMAIL_GATEWAY_URL, config file; default http://127.0.0.1:8787)',
    )
    .option('--token <token>', 'user token (env AGENTMAIL_TOKEN, config file)')
    .option('--config <path>', 'config file (env AGENTMAIL_CONFIG; default ~/.config/agentmail/config.json)')
    .option('--json', 'machine-readable output')
    // Set before adding commands: commander copies these settings into every subcommand.
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.replace(/\n$/, '')),
      // With --json, commander's own error text stays unprinted: runCli prints the one JSON line.
      writeErr: (s) => {
        if (!options.json) io.err(s.replace(/\n$/, ''));
      },
    })
    .showHelpAfterError('(add --help for usage)');
  registerServeCommand(program, ctx);
  registerConnectionCommands(program, ctx);
  registerMailCommands(program, ctx);
  registerAttachmentCommands(program, ctx);
  registerPermissionCommands(program, ctx);
  registerAdminCommands(program, ctx);
  registerServiceCommands(program, ctx);
  registerDoctorCommand(program, ctx);
  registerMcpCommand(program, ctx);
  return program;
}

/**
 * Run the CLI on `argv` (without the node and script entries) and return the exit code:
 * 0 success, 2 usage error, 1 server refusal or failure. Errors are printed on stderr with the
 * server's `error`, `detail` and `suggestion` (see SPEC G-13).
 *
 * @example process.exitCode = await runCli(process.argv.slice(2), processIo());
 */
export async function runCli(argv: readonly string[], rawIo: CliIo): Promise<number> {
  // One writer for every command: nothing printed can carry a control or escape sequence (H-1).
  const io = terminalIo(rawIo);
  const json = argv.includes('--json');
  const program = buildProgram(io, { json });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version "errors" are successes; commander already printed the usage message
      // (without --json). With --json a usage error is one JSON line, like every other error.
      if (err.exitCode === 0) return 0;
      if (json) reportError(io, new CliError('USAGE', err.message.replace(/^error: /, '')), true);
      return EXIT_USAGE;
    }
    return reportError(io, err, json);
  }
}
