import type { Readable, Writable } from 'node:stream';
import { formatText, resolveLocale, type TextKey, type TextParams } from '@agentmail/shared-policy';
import { type CliError, isCliError } from './errors.js';
import { jsonForTerminal, terminalSafe } from './terminal-text.js';

/** Where the CLI writes and what it reads; injected so the program can run in a test. */
export interface CliIo {
  /** Write to standard output (a newline is added). */
  out(text: string): void;
  /** Write to standard error (a newline is added). */
  err(text: string): void;
  /** Environment variables. */
  env: NodeJS.ProcessEnv;
  /** Standard input as bytes (for `--body -`), read as far as the caller wants. */
  stdin(): AsyncIterable<Uint8Array>;
  /** The directory relative paths (`--attach`, `-o`, `--data-dir`) are taken from. @default process.cwd() */
  cwd?: string;
  /** The raw standard input and output, for `agentmail mcp` (stdout is then its MCP channel). */
  stdio?: { input: Readable; output: Writable };
}

/**
 * Make a stream whose reader went away (`agentmail inbox | head -c 10`, `| grep -q`) end quietly:
 * its `EPIPE` marks it closed instead of crashing with an unhandled-error stack, and later writes
 * are skipped, so the command finishes with its own exit code (0 when it succeeded) and `serve`
 * keeps serving. Any other stream error is rethrown as before. Returns "is it still open?".
 */
export function quietOnClosedReader(stream: NodeJS.WriteStream): () => boolean {
  let open = true;
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    open = false;
  });
  return () => open && !stream.destroyed;
}

/** The process's own stdio and environment; a closed stdout or stderr reader ends output quietly. */
export function processIo(): CliIo {
  const stdoutOpen = quietOnClosedReader(process.stdout);
  const stderrOpen = quietOnClosedReader(process.stderr);
  return {
    out: (text) => {
      if (stdoutOpen()) process.stdout.write(`${text}\n`);
    },
    err: (text) => {
      if (stderrOpen()) process.stderr.write(`${text}\n`);
    },
    env: process.env,
    stdin: () => process.stdin,
    cwd: process.cwd(),
    stdio: { input: process.stdin, output: process.stdout },
  };
}

/**
 * The CLI's writer for people: every line `io` prints goes through {@link terminalSafe} (line
 * breaks and tabs kept), so no command can print a control character or an escape sequence from
 * untrusted text, even one that forgot to mark a field (SPEC H-1). JSON output passes unchanged:
 * {@link printJson} writes it with {@link jsonForTerminal}, which has nothing left to replace.
 */
export function terminalIo(io: CliIo): CliIo {
  return {
    ...io,
    out: (text) => io.out(terminalSafe(text, { multiline: true })),
    err: (text) => io.err(terminalSafe(text, { multiline: true })),
  };
}

/**
 * An untrusted string shown inside one line (a subject, a name, an address): made inert for the
 * terminal and its line breaks shown as `\n`, so it can not fake a line of its own (SPEC H-1).
 */
export function oneLine(text: string): string {
  return terminalSafe(text);
}

/** An untrusted block of text (a mail body, a question): inert, with its own line breaks. */
export function textBlock(text: string): string {
  return terminalSafe(text, { multiline: true });
}

/** Widest a table cell gets before it is cut with `…`. @default 60 */
export const CELL_MAX_CHARS = 60;

/** Cut `text` to `max` characters, folding whitespace, marking the cut with `…`; inert for the terminal. */
export function truncate(text: string, max: number = CELL_MAX_CHARS): string {
  const flat = oneLine(text.replace(/\s+/g, ' ').trim());
  return flat.length <= max ? flat : `${flat.slice(0, Math.max(0, max - 1))}…`;
}

/** Render rows as a left-aligned table with a header row and two spaces between columns; every cell is one inert line. */
export function table(headers: readonly string[], rawRows: readonly (readonly string[])[]): string {
  const rows = rawRows.map((r) => r.map(oneLine));
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `2026-11-29T22:52:45.123Z` → `2026-11-29 22:52` (UTC); other strings unchanged. */
export function shortTime(iso: string | null): string {
  if (iso === null) return '';
  const m = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(iso);
  return m ? `${m[1]} ${m[2]}` : iso;
}

/**
 * Print a value as pretty JSON on stdout (the `--json` output of every command): exactly the
 * value, with the characters a terminal would act on escaped inside its strings (SPEC H-1).
 */
export function printJson(io: CliIo, value: unknown): void {
  io.out(jsonForTerminal(value, 2));
}

/** Print a value as one JSON line (serve's events, `--json` errors); see {@link printJson}. */
export function printJsonLine(write: (text: string) => void, value: unknown): void {
  write(jsonForTerminal(value));
}

/** Indent every line of `text` under the message. */
function indented(label: string, text: string): string[] {
  return text.split('\n').map((line, i) => `  ${i === 0 ? label : ' '.repeat(label.length)}${line}`);
}

/**
 * Print an error on stderr for a person (SPEC H-2): the message on the first line, the detail on
 * its own line, and the fix on another (`try: agentmail …`) — words for people, never the HTTP
 * route or the server's field lists. With `--json`, one JSON line instead, with the server's body
 * exactly as it came (SPEC G-13). Returns the exit code: 2 for usage errors, 1 for everything else.
 */
export function reportError(io: CliIo, err: unknown, json: boolean): number {
  if (!isCliError(err)) {
    const message = err instanceof Error ? (err.stack ?? err.message) : String(err);
    if (json) printJsonLine(io.err, { code: 'AM_CLI_INTERNAL', message: String(err) });
    else io.err(`agentmail: unexpected failure: ${message}`);
    return 1;
  }
  const e: CliError = err;
  if (json) {
    printJsonLine(io.err, {
      ...e.extra,
      code: e.code,
      message: e.message,
      ...(e.status === undefined ? {} : { status: e.status }),
      ...(e.body === undefined ? {} : { body: e.body }),
      ...(e.detail === undefined ? {} : { detail: e.detail }),
      ...(e.suggestion === undefined ? {} : { suggestion: e.suggestion }),
    });
    return e.exitCode;
  }
  const lines = [`agentmail: ${e.message}`];
  if (e.detail !== undefined) lines.push(...indented('', e.detail));
  if (e.suggestion !== undefined) lines.push(...indented('try: ', e.suggestion));
  io.err(lines.join('\n'));
  return e.exitCode;
}

/** Words of the CLI's own lines in the person's locale (`AGENTMAIL_LOCALE`). */
export function say(env: NodeJS.ProcessEnv, key: TextKey, params: TextParams = {}): string {
  return formatText(key, params, resolveLocale(env.AGENTMAIL_LOCALE));
}
