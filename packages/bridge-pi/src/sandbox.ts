/**
 * pi's tools in the workspace sandbox (SPEC P-1, P-12): pi lets an extension replace its built-in
 * tools with the same definitions on other operations (pi 1.6 `create*ToolDefinition(cwd, {
 * operations })`), so every command, every file write or edit (`bash`, `write`, `edit`, here) and
 * every file read (`read`, `ls`, `find`, `grep`: sandbox-read.ts, sandbox-grep.ts) runs inside
 * bubblewrap with the turn's policy: what the sandbox hides (pi's agent directory, the bridge's
 * data directory, the user's secrets) no tool of the turn can read, and only the workspace can be
 * written. What the worker itself does (pi's session file, the mail tools) stays outside (README
 * "Sandbox").
 */
import {
  type Sandbox,
  type SandboxPolicy,
  sandboxExec,
  sandboxRun,
  type TurnSandbox,
  turnSandbox,
} from '@agentmail/bridge-kit';
import type { Locale } from '@agentmail/shared-policy';
import type { ToolDefinition } from '@earendil-works/pi-coding-agent';
import { GUARDED_TOOLS } from './host.js';
import type { PiSdkModule } from './pi-sdk.js';
import { piSandboxedReadTools } from './sandbox-read.js';

/**
 * The guarded tools pi runs confined once the sandbox is verified (host.json): they run unasked in
 * `workspace` mode. pi's read-only tools are confined too, but never ask in any mode.
 */
export const PI_SANDBOX_CONFINES: readonly string[] = GUARDED_TOOLS;

/**
 * The policy of a pi turn in `workspace`: the workspace read-write, pi's agent directory hidden
 * (its auth.json holds the model keys); the kit adds its own hidden places (the data directory,
 * the agent key's places).
 */
export function piSandboxPolicy(workspace: string, agentDir: string): SandboxPolicy {
  return { workspace, hidden: [agentDir] };
}

/** Run `argv` in the sandbox; its stdout, or an Error with what it said (stderr) and its exit code. */
async function inSandbox(sandbox: Sandbox, argv: string[], input?: string): Promise<Buffer> {
  const out: Buffer[] = [];
  let said = '';
  const { exitCode } = await sandboxRun(sandbox, argv, {
    onStdout: (d) => out.push(d),
    onData: (d) => {
      said += d.toString('utf8');
    },
    ...(input === undefined ? {} : { input }),
  });
  if (exitCode !== 0) throw new Error(`${said.trim() || argv[0]} (exit ${exitCode}, in the sandbox)`);
  return Buffer.concat(out);
}

/**
 * pi's `bash`, `write`, `edit`, `read`, `ls`, `find` and `grep` for one turn in `cwd`, every
 * operation inside the sandbox of `job` (the kit's {@link turnSandbox} over {@link piSandboxPolicy}).
 * A write outside the workspace fails with the sandbox's own words (`Read-only file system`), a
 * read of a hidden place finds it missing or empty; the model reads either. `locale` is that of
 * the texts the bridge adds (grep without ripgrep).
 */
export function piSandboxedTools(
  sdk: PiSdkModule,
  job: TurnSandbox,
  cwd: string,
  agentDir: string,
  locale: Locale,
): ToolDefinition[] {
  const sandbox = turnSandbox(job, piSandboxPolicy(cwd, agentDir));
  const writeFile = async (path: string, content: string): Promise<void> => {
    await inSandbox(sandbox, ['/bin/sh', '-c', 'cat > "$1"', 'sh', path], content);
  };
  return [
    sdk.createBashToolDefinition(cwd, {
      operations: {
        exec: (command, dir, o) =>
          sandboxExec(sandbox, command, {
            cwd: dir,
            shell: '/bin/bash',
            onData: o.onData,
            ...(o.signal ? { signal: o.signal } : {}),
            ...(o.timeout === undefined ? {} : { timeout: o.timeout }),
            ...(o.env ? { env: o.env } : {}),
          }),
      },
    }),
    sdk.createWriteToolDefinition(cwd, {
      operations: {
        writeFile,
        mkdir: async (dir) => {
          await inSandbox(sandbox, ['/bin/mkdir', '-p', '--', dir]);
        },
      },
    }),
    sdk.createEditToolDefinition(cwd, {
      operations: {
        readFile: (path) => inSandbox(sandbox, ['/bin/cat', '--', path]),
        writeFile,
        access: async (path) => {
          await inSandbox(sandbox, ['/bin/sh', '-c', 'test -r "$1" && test -w "$1"', 'sh', path]);
        },
      },
    }),
    ...piSandboxedReadTools(sdk, sandbox, cwd, { agentDir, locale }),
  ] as unknown as ToolDefinition[];
}
