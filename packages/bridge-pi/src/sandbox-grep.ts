/**
 * pi's `grep` in the workspace sandbox (SPEC P-12). pi's own grep spawns ripgrep in the worker
 * (its operations only say whether a path is a directory: "override the tool's execute() for remote
 * search"), so this is pi's definition with another `execute`: the same ripgrep arguments, run
 * inside bubblewrap, and the same reading of its JSON events and the same output and bounds. A
 * place the sandbox hides is an empty directory to ripgrep, through a symlink too.
 */
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, delimiter, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { isExecutableFile, type Sandbox } from '@agentmail/bridge-kit';
import { formatText, type Locale } from '@agentmail/shared-policy';
import type { GrepToolDetails } from '@earendil-works/pi-coding-agent';
import type { PiSdkModule } from './pi-sdk.js';
import { NOT_FOUND_EXIT, runRecords } from './sandbox-records.js';

/** pi's grep line cut (its `GREP_MAX_LINE_LENGTH`, not exported; `truncateLine`'s default). */
const GREP_MAX_LINE_LENGTH = 500;
/** pi's default match limit of `grep`. */
const GREP_DEFAULT_LIMIT = 100;

/** The parameters of pi's `grep` (its schema, which pi validates before `execute`). */
interface GrepParams {
  pattern: string;
  path?: string;
  glob?: string;
  ignoreCase?: boolean;
  literal?: boolean;
  context?: number;
  limit?: number;
}

/** An event of `rg --json` (the fields pi reads). */
interface RgEvent {
  type?: string;
  data?: { path?: RgText; lines?: RgText; line_number?: unknown };
}
type RgText = { text?: string; bytes?: string };

/** A ripgrep JSON text field: UTF-8 as `text`, anything else base64 in `bytes` (as pi decodes it). */
function rgText(data: RgText | undefined): string {
  if (typeof data?.text === 'string') return data.text;
  if (typeof data?.bytes === 'string') return Buffer.from(data.bytes, 'base64').toString('utf-8');
  return '';
}

/**
 * A path as pi's tools resolve it (pi's `resolveToCwd`, not exported): unicode spaces made plain,
 * a leading `@` dropped, `~` expanded, a `file://` URL read, then resolved against `cwd`.
 */
function resolveLikePi(input: string, cwd: string): string {
  let path = input.replace(/[\u00A0\u2000-\u200A\u202F\u205F\u3000]/g, ' ');
  if (path.startsWith('@')) path = path.slice(1);
  if (path === '~') path = homedir();
  else if (path.startsWith('~/')) path = join(homedir(), path.slice(2));
  else if (path.startsWith('file://')) path = fileURLToPath(path);
  return resolve(cwd, path);
}

/**
 * The ripgrep pi would run: its own copy in `<agentDir>/bin/rg` first, then `rg` on `PATH` (pi's
 * `getToolPath`); the real path, which the grep's sandbox binds read-only (pi's agent directory is
 * hidden from the sandbox). Undefined when there is none: pi would download one, the bridge never does.
 */
export function findRipgrep(agentDir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  const candidates = [
    join(agentDir, 'bin', 'rg'),
    ...(env.PATH ?? '').split(delimiter).flatMap((dir) => (isAbsolute(dir) ? [join(dir, 'rg')] : [])),
  ];
  const found = candidates.find(isExecutableFile);
  return found === undefined ? undefined : realpathSync(found);
}

/**
 * pi's `grep` with ripgrep run in the sandbox: the same arguments, the same reading of its JSON
 * events and the same output (`path:line: text`, context lines `path-line- text`, pi's match limit,
 * line cut and 50 KB bound with its notices). The search path's kind is checked by the same run.
 * @throws Error (the model reads it as the tool's error, as pi's own grep throws): ripgrep missing
 *   (catalogue text `sandbox.grep.no_ripgrep`), pi's `Path not found: <path>`, ripgrep's own
 *   words (a bad pattern), `Operation aborted`.
 */
export async function sandboxedGrep(
  sdk: PiSdkModule,
  sandbox: Sandbox,
  options: {
    agentDir: string;
    locale: Locale;
    cwd: string;
    /** Where `rg` is looked for on `PATH`. @default process.env */
    env?: NodeJS.ProcessEnv;
  },
  params: GrepParams,
  signal: AbortSignal | undefined,
): Promise<{ content: Array<{ type: 'text'; text: string }>; details: GrepToolDetails | undefined }> {
  const rg = findRipgrep(options.agentDir, options.env);
  if (!rg)
    throw new Error(
      formatText('sandbox.grep.no_ripgrep', { dir: join(options.agentDir, 'bin') }, options.locale),
    );
  const searchPath = resolveLikePi(params.path || '.', options.cwd);
  const contextValue =
    params.context && params.context > 0 ? Math.min(Math.floor(params.context), Number.MAX_SAFE_INTEGER) : 0;
  const effectiveLimit = Math.max(1, Math.floor(params.limit ?? GREP_DEFAULT_LIMIT));
  const args = ['--no-config', '--json', '--line-number', '--color=never', '--hidden'];
  if (params.ignoreCase) args.push('--ignore-case');
  if (params.literal) args.push('--fixed-strings');
  if (params.glob) args.push('--glob', params.glob.replace(/^(!?)(?:\.\/)+/, '$1'));
  if (contextValue > 0) args.push('--context', String(contextValue));
  // As pi: a directory is searched from inside it (rg roots --glob at its cwd), a file by its path.
  // The first line says which (d, f); a missing path exits before anything runs.
  const script =
    `if [ -d "$1" ]; then cd "$1" || exit 2; echo d; shift; exec "$@" .; fi; ` +
    `if [ -e "$1" ]; then echo f; p=$1; shift; exec "$@" "$p"; fi; exit ${NOT_FOUND_EXIT}`;
  let isDirectory: boolean | undefined;
  const formatPath = (filePath: string): string => {
    if (isDirectory) {
      const rel = relative(searchPath, resolve(searchPath, filePath));
      if (rel && !rel.startsWith('..')) return rel.replace(/\\/g, '/');
    }
    return basename(filePath);
  };

  const outputLines: string[] = [];
  let outputBytes = 0;
  let outputLineCount = 0;
  let matchCount = 0;
  let matchLimitReached = false;
  let linesTruncated = false;
  let lastFile: string | undefined;
  let limitHit = false;
  let trailingContextEnd = 0;
  const pushLine = (filePath: string, lineNumber: number, lineText: string, isMatch: boolean): void => {
    lastFile = filePath;
    const { text, wasTruncated } = sdk.truncateLine(lineText.replace(/\r?\n?$/, ''));
    if (wasTruncated) linesTruncated = true;
    const line = isMatch
      ? `${formatPath(filePath)}:${lineNumber}: ${text}`
      : `${formatPath(filePath)}-${lineNumber}- ${text}`;
    // Past the byte bound nothing is shown: counted, not kept.
    if (outputBytes - 1 <= sdk.DEFAULT_MAX_BYTES) outputLines.push(line);
    outputBytes += Buffer.byteLength(line, 'utf-8') + 1;
    outputLineCount++;
  };
  const run = await runRecords(
    { ...sandbox, policy: { ...sandbox.policy, readOnly: [...(sandbox.policy.readOnly ?? []), rg] } },
    ['/bin/sh', '-c', script, 'sh', searchPath, rg, ...args, '--', params.pattern],
    '\n',
    (line) => {
      if (isDirectory === undefined) {
        isDirectory = line === 'd';
        return undefined;
      }
      let event: RgEvent;
      try {
        event = JSON.parse(line) as RgEvent;
      } catch {
        return undefined;
      }
      const isMatch = event.type === 'match';
      if (!isMatch && event.type !== 'context') return undefined;
      const filePath = rgText(event.data?.path);
      const lineNumber = event.data?.line_number;
      if (!filePath || typeof lineNumber !== 'number') return undefined;
      const lineText = rgText(event.data?.lines);
      if (!limitHit) {
        pushLine(filePath, lineNumber, lineText, isMatch);
        if (isMatch && ++matchCount >= effectiveLimit) {
          limitHit = true;
          trailingContextEnd = lineNumber + contextValue;
        }
        return undefined;
      }
      // Past the limit: the last match's trailing context still shows; one more match proves the cut.
      const inWindow = filePath === lastFile && lineNumber <= trailingContextEnd;
      if (inWindow) pushLine(filePath, lineNumber, lineText, false);
      if (isMatch) matchLimitReached = true;
      return matchLimitReached && !(inWindow && lineNumber < trailingContextEnd) ? 'stop' : undefined;
    },
    signal,
  );
  if (run.exitCode === NOT_FOUND_EXIT && isDirectory === undefined)
    throw new Error(`Path not found: ${searchPath}`);
  if (!run.stopped && run.exitCode !== 0 && run.exitCode !== 1)
    throw new Error(run.stderr || `ripgrep exited with code ${run.exitCode}`);
  if (matchCount === 0) return { content: [{ type: 'text', text: 'No matches found' }], details: undefined };

  const truncation = sdk.truncateHead(outputLines.join('\n'), { maxLines: Number.MAX_SAFE_INTEGER });
  truncation.totalLines = outputLineCount;
  truncation.totalBytes = outputBytes - 1;
  let output = truncation.content;
  const details: GrepToolDetails = {};
  const notices: string[] = [];
  if (matchLimitReached) {
    notices.push(
      `${effectiveLimit} matches limit reached. Use limit=${effectiveLimit * 2} for more, or refine pattern`,
    );
    details.matchLimitReached = effectiveLimit;
  }
  if (truncation.truncated) {
    notices.push(`${sdk.formatSize(sdk.DEFAULT_MAX_BYTES)} limit reached`);
    details.truncation = truncation;
  }
  if (linesTruncated) {
    notices.push(`Some lines truncated to ${GREP_MAX_LINE_LENGTH} chars. Use read tool to see full lines`);
    details.linesTruncated = true;
  }
  if (notices.length > 0) output += `\n\n[${notices.join('. ')}]`;
  return {
    content: [{ type: 'text', text: output }],
    details: Object.keys(details).length > 0 ? details : undefined,
  };
}
