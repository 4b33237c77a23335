import { z } from 'zod';

/**
 * A host descriptor: the one place a coding-agent host is described (`packages/<bridge>/host.json`).
 * The bridge reads it for its platform id and guarded tools (SPEC P-3); the Gateway CLI discovers
 * every `packages/*\/host.json` of its checkout for `service install`, `doctor` and the crash
 * report (SPEC §8), without importing or building the bridge. Paths are relative to the bridge
 * package's own directory. See docs/BRIDGE-CONTRACT.md "Adding a host".
 */

/** Name of the descriptor file at a bridge package's root. */
export const HOST_DESCRIPTOR_FILE = 'host.json';

const Slug = z
  .string()
  .regex(/^[a-z][a-z0-9-]*$/, 'lower-case letters, digits and "-", starting with a letter');
const EnvVariable = z.string().regex(/^[A-Z_][A-Z0-9_]*$/, 'an environment variable name (A-Z, 0-9, "_")');
/** A path inside the bridge package (relative, no `..`). */
const PackagePath = z
  .string()
  .min(1)
  .refine(
    (p) => !p.startsWith('/') && !p.split('/').includes('..'),
    'a path inside the package (relative, no "..")',
  );

/**
 * A file in the user's home: `config` = `$XDG_CONFIG_HOME` (absolute) or `~/.config`, `home` = `~`;
 * `path` below it.
 */
export const HostFile = z.strictObject({
  base: z.enum(['config', 'home']),
  path: z.string().min(1),
});
export type HostFile = z.infer<typeof HostFile>;

/**
 * How a bridge's plugin reaches its host, as one of a few generic steps (the bridge README's
 * install). Values named `…Path`/`dir` are package paths; the CLI makes them absolute.
 */
export const PluginStep = z.discriminatedUnion('kind', [
  /** The bridge loads its own code (pi's daemon): nothing to install. */
  z.strictObject({ kind: z.literal('none') }),
  /**
   * Add the absolute `value` path to the JSON list at `keyPath` of `file` (created when missing;
   * an entry `[value, options]` counts as present). With `variable`, the unit's env also names the
   * path there (a driver passes it to its host runs).
   */
  z.strictObject({
    kind: z.literal('json-list-entry'),
    file: HostFile,
    keyPath: z.array(z.string().min(1)).min(1),
    value: PackagePath,
    variable: EnvVariable.optional(),
  }),
  /**
   * Run the host executable with `args` (`{package}` = the bridge package's absolute dir). Doctor
   * finds it done when `check.file` contains `check.contains`.
   */
  z.strictObject({
    kind: z.literal('host-command'),
    args: z.array(z.string()).min(1),
    /** What to tell a person when the command fails (why it may fail, where the README says more). */
    failureHint: z.string().min(1),
    check: z.strictObject({ file: HostFile, contains: z.string().min(1) }),
  }),
  /**
   * Name the plugin dir in the unit's env `variable` (the driver gives it to every host run);
   * doctor checks that `dir/proof` exists (the built hook).
   */
  z.strictObject({
    kind: z.literal('env-dir'),
    dir: PackagePath,
    variable: EnvVariable,
    proof: PackagePath,
  }),
]);
export type PluginStep = z.infer<typeof PluginStep>;

/** One part of a bridge's stop budget: `kit` = the kit's own (turns' grace, goodbye), else a named wait. */
export const StopPart = z.union([
  z.literal('kit'),
  z.strictObject({
    /** Words for the unit's comment (`workers`, `the claude run`, `opencode itself`). */
    what: z.string().min(1),
    /** Its share in ms; none when the host's own part is not counted. */
    ms: z.number().int().positive().optional(),
  }),
]);
export type StopPart = z.infer<typeof StopPart>;

/** How the bridge runs as a systemd service (`agentmail service install`, SPEC §8, B-15, B-19). */
export const HostService = z.strictObject({
  /** The service (and unit) name: `agentmail-<name>.service`. */
  name: Slug.refine((s) => s !== 'gateway', 'the name "gateway" is the Gateway\'s'),
  /** `[Unit] Description=`. */
  description: z.string().min(1),
  /** What the unit runs: a Node entry of the bridge, or the host executable with arguments. */
  exec: z.discriminatedUnion('kind', [
    z.strictObject({ kind: z.literal('node-entry'), entry: PackagePath }),
    z.strictObject({
      kind: z.literal('host'),
      /** A bare name looked up on PATH, or a package path (`node_modules/.bin/dsh`). */
      defaultBin: z.string().min(1),
      args: z.array(z.string()),
    }),
  ]),
  /** Env-file variable naming the host executable (for the unit, the driver and doctor). */
  hostBinVariable: EnvVariable.optional(),
  /** The pinned host executable `pnpm install` puts in the package, taken before PATH (package path). */
  pinnedHostBin: PackagePath.optional(),
  /** The host version this bridge is tested against (doctor warns on another one). */
  supportedHostVersion: z.string().min(1).optional(),
  /** A host without an executable: the `package.json` whose version doctor reads (package path). */
  hostPackage: PackagePath.optional(),
  /** Fixed env-file settings the host needs (`OPENCODE_DISABLE_AUTOUPDATE=1`). */
  env: z.record(EnvVariable, z.string()).optional(),
  /** A URL the unit's start hook requests once the host is up (opencode boots its instance on one). */
  bootUrl: z.url().optional(),
  /** The bridge's shutdown budget (B-15), in order; `TimeoutStopSec` must be longer. */
  stopBudget: z.array(StopPart).min(1),
  /** `TimeoutStopSec=` in seconds. */
  timeoutStopSec: z.number().int().positive(),
  /** `MemoryMax=` default (`4G`). */
  memoryMax: z.string().regex(/^\d+[KMGT]?$/),
  /** Files the unit needs (package paths): missing means "not built". */
  builtFiles: z.array(PackagePath).min(1),
  /** The command that makes {@link builtFiles}, run in the checkout. */
  buildCommand: z.string().min(1),
});
export type HostService = z.infer<typeof HostService>;

/** The descriptor (`host.json`). */
export const HostDescriptor = z.strictObject({
  /** Editors' note (the file's own comment). */
  $comment: z.string().optional(),
  /** The platform id the bridge registers with (and its data-dir variable is named after). */
  platform: Slug,
  /** Human name for texts (`Claude Code`). */
  displayName: z.string().min(1),
  /** Default agent name of the bridge. */
  defaultAgentName: z.string().min(1),
  /** README of the bridge package (package path). */
  readme: PackagePath,
  /**
   * The host's guarded tools by the names the host gives them: shell, file write, file edit,
   * patch apply, code execution (SPEC P-3). Compared ignoring case.
   */
  guardedTools: z.array(z.string().min(1)).min(1),
  /** Where {@link guardedTools} come from (the host version and source files read). */
  guardedToolsSource: z.string().min(1),
  /**
   * Why the workspace sandbox cannot wrap this host's tools (SPEC P-12), reported as
   * `sandbox: unverified: <this>`; absent when the bridge confines them (pi).
   */
  sandboxUnsupported: z.string().min(1).max(300).optional(),
  service: HostService,
  /** How the plugin reaches the host. */
  plugin: PluginStep,
});
export type HostDescriptor = z.infer<typeof HostDescriptor>;

/**
 * Parse a descriptor's JSON text.
 * @throws Error naming `file` and the first bad field (`host.json: service.exec.kind: …`).
 */
export function parseHostDescriptor(text: string, file: string): HostDescriptor {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw new Error(`${file}: not JSON (${(err as Error).message})`);
  }
  const parsed = HostDescriptor.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  const field = issue?.path.length ? issue.path.join('.') : '(the file)';
  throw new Error(`${file}: ${field}: ${issue?.message ?? 'invalid'}`);
}
