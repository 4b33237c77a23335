/**
 * The confinement of a sandboxed turn (SPEC P-1, P-12) as bubblewrap arguments: the whole
 * filesystem read-only, the workspace and the session's own state read-write, `.git/hooks` and the
 * host's own config read-only inside them, the user's secrets and the bridge's own state not
 * visible, private `/tmp`, `/run` and `/dev/shm`, every path-named socket of the host masked, no
 * network (new network namespace: loopback only), new PID namespace, `--die-with-parent`.
 */
import { accessSync, constants, existsSync, readFileSync, statSync } from 'node:fs';
import { homedir, userInfo } from 'node:os';
import { delimiter, isAbsolute, join, resolve, sep } from 'node:path';

/** What a sandboxed turn may touch. Every path absolute. */
export interface SandboxPolicy {
  /** The turn's working directory: read-write. */
  workspace: string;
  /** More read-write places: the session's own state (e.g. pi's session file directory). */
  writable?: readonly string[];
  /**
   * Read-only inside the read-write places: the host's own config (e.g. pi's agent directory).
   * `<workspace>/.git/hooks` and `<workspace>/.git/config` are always added (code that would run
   * later, outside the sandbox: a hook, or a `core.hooksPath` pointing at one).
   */
  readOnly?: readonly string[];
  /**
   * Not visible at all (a directory becomes an empty tmpfs, a file `/dev/null`): the agent key
   * file, the bridge's data directory, more secrets. {@link DEFAULT_HIDDEN} is always added.
   */
  hidden?: readonly string[];
}

/** What the host looks like when a sandbox starts (read fresh for each spawn). */
export interface HostFacts {
  /** Path-named Unix sockets the host listens on ({@link pathSockets}). */
  sockets: readonly string[];
  /** The user's home directory (`HOME`). */
  home: string;
  /** The home directory the user database names, when it differs from `HOME` (both are hidden). */
  userHome?: string;
  /** When the bridge runs as root: every other user's home (their secrets are hidden too). */
  otherHomes?: string[];
  /** The bridge runs as root (uid 0). */
  root?: boolean;
  /** `XDG_RUNTIME_DIR`, when set (D-Bus, ssh-agent and similar sockets live there). */
  runtimeDir?: string;
}

/**
 * Secrets of the user a sandbox never shows, relative to the home directory: SSH and GnuPG keys,
 * cloud and container credentials, AgentMail's own config (keys, tokens).
 */
export const DEFAULT_HIDDEN = [
  '.ssh',
  '.gnupg',
  '.aws',
  '.azure',
  '.docker',
  '.kube',
  '.netrc',
  '.git-credentials',
  '.npmrc',
  '.pypirc',
  '.cargo/credentials.toml',
  '.config/agentmail',
  '.config/gh',
  '.config/gcloud',
  '.claude',
  '.claude.json',
  '.pi',
  '.local/share/keyrings',
  '.password-store',
] as const;

/**
 * System trees a workspace may not be in: writing there unasked (as root: cron, sshd's keys,
 * the kernel's settings) would reach far outside the turn.
 */
const SYSTEM_TREES = [
  '/etc',
  '/usr',
  '/boot',
  '/bin',
  '/sbin',
  '/lib',
  '/lib32',
  '/lib64',
  '/libx32',
  '/proc',
  '/sys',
  '/dev',
  '/run',
  '/var/lib',
  '/var/spool',
  '/var/log',
] as const;

/** Hidden too when the bridge runs as root: the system's own secrets. */
const ROOT_HIDDEN = ['/etc/shadow', '/etc/gshadow', '/etc/ssh', '/etc/sudoers', '/etc/sudoers.d'] as const;

/** procfs paths a root process could write host-wide (kernel settings, sysrq): read-only inside. */
const PROC_READ_ONLY = ['/proc/sys', '/proc/sysrq-trigger', '/proc/irq', '/proc/bus'] as const;

/** Private in every sandbox (host sockets and temp files live there). */
const PRIVATE_DIRS = ['/tmp', '/run', '/dev/shm', '/var/tmp'] as const;

/**
 * The path-named Unix sockets of this network namespace (`/proc/net/unix`): what a read-only
 * root would still let a sandboxed process connect to (a Docker or D-Bus socket hands authority
 * across it), so each is masked. [] when the table cannot be read.
 */
export function pathSockets(table = '/proc/net/unix'): string[] {
  let text: string;
  try {
    text = readFileSync(table, 'utf8');
  } catch {
    return [];
  }
  const paths = new Set<string>();
  for (const line of text.split('\n').slice(1)) {
    // Seven fields, then the path, which may itself hold spaces.
    const m = /^\s*(?:\S+\s+){7}(\/.*)$/.exec(line);
    if (m?.[1]) paths.add(m[1]);
  }
  return [...paths];
}

/** The host's facts now: its path sockets, home and runtime directory. */
export function hostFacts(env: Readonly<Record<string, string | undefined>> = process.env): HostFacts {
  const runtimeDir = env.XDG_RUNTIME_DIR?.trim();
  const home = env.HOME?.trim() || homedir();
  let userHome: string | undefined;
  try {
    userHome = userInfo().homedir;
  } catch {
    userHome = undefined;
  }
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  return {
    sockets: pathSockets(),
    home,
    ...(root ? { root, otherHomes: passwdHomes().filter((h) => resolve(h) !== resolve(home)) } : {}),
    // A HOME pointing elsewhere must not leave the real home's secrets in sight.
    ...(userHome && isAbsolute(userHome) && resolve(userHome) !== resolve(home) ? { userHome } : {}),
    ...(runtimeDir && isAbsolute(runtimeDir) ? { runtimeDir } : {}),
  };
}

/** The home directories of `/etc/passwd` that exist (other users' secrets, for a root bridge). */
function passwdHomes(): string[] {
  let text = '';
  try {
    text = readFileSync('/etc/passwd', 'utf8');
  } catch {
    return [];
  }
  const homes = new Set<string>();
  for (const line of text.split('\n')) {
    const home = line.split(':')[5];
    if (home && home.startsWith('/') && home !== '/' && isDir(home)) homes.add(home);
  }
  return [...homes];
}

/**
 * Why a turn in `workspace` cannot be sandboxed, or undefined when it can: a workspace of `/`, or
 * one that holds the user's home or a place the sandbox must hide (the bridge's data directory,
 * the agent key) would bind those back read-write. The turn then asks per call (P-1).
 */
export function unsandboxableWorkspace(
  workspace: string,
  hidden: readonly string[],
  facts: HostFacts,
): string | undefined {
  const ws = resolve(workspace);
  if (ws === '/') return 'the workspace is / (everything would be writable)';
  if (ws.split(sep).filter(Boolean).length < 2) return `the workspace ${ws} is a top-level directory`;
  const system = SYSTEM_TREES.find((t) => within(ws, t));
  if (system) return `the workspace ${ws} is inside the system directory ${system}`;
  for (const home of [facts.home, facts.userHome, ...(facts.otherHomes ?? [])]) {
    if (home && within(resolve(home), ws)) return `the workspace ${ws} holds the home directory ${home}`;
  }
  const inside = hidden.map((h) => resolve(h)).find((h) => within(h, ws));
  if (inside) return `the workspace ${ws} holds ${inside}, which the sandbox hides`;
  return undefined;
}

/** Names the bubblewrap executable instead of the search on `PATH` (an absolute path). */
export const BWRAP_ENV = 'AGENTMAIL_BWRAP';

/** True for an executable regular file (what a sandboxed tool may run: bwrap, a search binary). */
export function isExecutableFile(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return statSync(path).isFile();
  } catch {
    return false;
  }
}

/**
 * The bubblewrap executable: `AGENTMAIL_BWRAP` when set (absolute), else `bwrap` on `PATH`
 * (Debian's `bubblewrap`; never downloaded); undefined when there is none.
 * @example findBubblewrap(process.env) // '/usr/bin/bwrap'
 */
export function findBubblewrap(
  env: Readonly<Record<string, string | undefined>> = process.env,
): string | undefined {
  const named = env[BWRAP_ENV]?.trim();
  if (named) return isAbsolute(named) && isExecutableFile(named) ? named : undefined;
  for (const dir of (env.PATH ?? '').split(delimiter)) {
    if (!isAbsolute(dir)) continue;
    const candidate = join(dir, 'bwrap');
    if (isExecutableFile(candidate)) return candidate;
  }
  return undefined;
}

/**
 * The places every sandbox hides (see {@link DEFAULT_HIDDEN}), for the home directories in
 * `facts` (and, for a root bridge, the system's secrets), plus `$XDG_RUNTIME_DIR`.
 */
export function hiddenPlaces(facts: HostFacts): string[] {
  const homes = [facts.home, ...(facts.userHome ? [facts.userHome] : []), ...(facts.otherHomes ?? [])];
  return [
    ...homes.flatMap((h) => DEFAULT_HIDDEN.map((p) => join(h, p))),
    ...(facts.runtimeDir ? [facts.runtimeDir] : []),
    ...(facts.root ? ROOT_HIDDEN : []),
  ];
}

/** True when `path` is `root` or below it. */
function within(path: string, root: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : `${root}${sep}`);
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** A place made invisible: an empty tmpfs for a directory, `/dev/null` over a file. */
function hide(path: string): string[] {
  if (!existsSync(path)) return [];
  return isDir(path) ? ['--tmpfs', path] : ['--ro-bind', '/dev/null', path];
}

/**
 * The bubblewrap arguments of `policy` (before the `--` and the command). The order matters and
 * is the point: the read-only root, then the private and hidden places, then the read-write
 * places, then the read-only places inside them, then every host socket masked.
 * @throws Error when a path of the policy is not absolute.
 * @example spawn('bwrap', [...bwrapArgs(policy, hostFacts()), '--', '/bin/sh', '-c', cmd])
 */
export function bwrapArgs(policy: SandboxPolicy, facts: HostFacts): string[] {
  const all = [
    policy.workspace,
    ...(policy.writable ?? []),
    ...(policy.readOnly ?? []),
    ...(policy.hidden ?? []),
  ];
  for (const p of all) if (!isAbsolute(p)) throw new Error(`sandbox policy: "${p}" is not an absolute path`);
  const workspace = resolve(policy.workspace);
  const writable = [workspace, ...(policy.writable ?? []).map((p) => resolve(p))];
  const args = ['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'];
  // A fresh procfs is writable where root may write: the host's kernel settings stay read-only.
  for (const p of PROC_READ_ONLY) if (existsSync(p)) args.push('--ro-bind', p, p);
  for (const dir of PRIVATE_DIRS) if (isDir(dir)) args.push('--tmpfs', dir);
  const hidden = [...hiddenPlaces(facts), ...(policy.hidden ?? []).map((p) => resolve(p))];
  const refused = unsandboxableWorkspace(workspace, hidden, facts);
  if (refused) throw new Error(`sandbox: ${refused}`);
  // A hidden place that holds a read-write one (the bridge's data dir holding the session state)
  // is hidden first; the read-write binds below then show just those.
  for (const p of hidden) args.push(...hide(p));
  for (const p of writable) if (existsSync(p)) args.push('--bind', p, p);
  // Code that git would run later, outside: the whole repository (hooks, config, commondir) is
  // read-only, and as a mount point it cannot be renamed away. Commits are made outside.
  const readOnly = [join(workspace, '.git'), ...(policy.readOnly ?? []).map((p) => resolve(p))];
  for (const p of readOnly) if (existsSync(p)) args.push('--ro-bind', p, p);
  // A socket on the read-only root is still connectable: mask each one outside the writable places.
  for (const s of facts.sockets) {
    if (writable.some((w) => within(s, w))) continue;
    if (PRIVATE_DIRS.some((d) => within(s, d)) || hidden.some((h) => within(s, h))) continue;
    if (existsSync(s)) args.push('--ro-bind', '/dev/null', s);
  }
  // No capabilities inside: bwrap run by root keeps them in its namespace (a remount would undo
  // the read-only root).
  args.push('--unshare-all', '--cap-drop', 'ALL', '--die-with-parent', '--new-session', '--chdir', workspace);
  return args;
}
