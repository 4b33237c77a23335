/**
 * A synthetic pi session file (JSONL, version 3; see ../../shared/research/pi.md §2) of a chosen
 * size, like a long interactive coding session: a header line, a `model_change`, then rounds of
 * user prompt → assistant `read` tool call → tool result (a few KB of file text) → assistant answer,
 * each entry a child of the one before (one branch, the leaf is the last line).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** What to write. */
export interface PiSessionSpec {
  /** Session id (header `id`): what the heartbeat snapshot reports as `platform_id`. */
  id: string;
  /** Working directory of the session (header `cwd`). */
  cwd: string;
  /** Size to reach (the file ends after the first round that passes it), in bytes. */
  targetBytes: number;
  /** Model of the assistant messages and the `model_change` entry, e.g. `scripted` / `scripted-model`. */
  provider: string;
  model: string;
  /** Time of the header; entries follow one second apart. @default 2 days ago */
  startMs?: number;
}

/** What was written. */
export interface PiSessionFileInfo {
  path: string;
  bytes: number;
  /** Lines after the header. */
  entries: number;
  /** `message` entries (the model context when the session resumes). */
  messages: number;
}

/** pi's folder for the sessions of `cwd`: `--<cwd with / → ->--` (as `SessionManager.create` names it). */
export function piSessionFolder(cwd: string): string {
  return `--${cwd.replace(/^[/\\]/, '').replace(/[/\\:]/g, '-')}--`;
}

/** Path pi would give the session: `<agentDir>/sessions/<cwd folder>/<timestamp>_<id>.jsonl`. */
export function piSessionPath(
  agentDir: string,
  spec: Pick<PiSessionSpec, 'id' | 'cwd'>,
  startMs: number,
): string {
  const stamp = new Date(startMs).toISOString().replace(/[:.]/g, '-');
  return join(agentDir, 'sessions', piSessionFolder(spec.cwd), `${stamp}_${spec.id}.jsonl`);
}

const FILE_TEXT = Array.from(
  { length: 60 },
  (_, i) => `  ${i + 1}\texport function step${i}(input: number): number { return input * ${i} + 1; }`,
).join('\n');

/** The lines of the session, header first, each ending with `\n`. */
export function piSessionLines(spec: PiSessionSpec): { text: string; entries: number; messages: number } {
  const startMs = spec.startMs ?? Date.now() - 2 * 24 * 3600 * 1000;
  const lines: string[] = [
    JSON.stringify({
      type: 'session',
      version: 3,
      id: spec.id,
      timestamp: new Date(startMs).toISOString(),
      cwd: spec.cwd,
    }),
  ];
  let bytes = lines[0]!.length + 1;
  let seq = 0;
  let parentId: string | null = null;
  let messages = 0;
  const usage = {
    input: 1200,
    output: 80,
    cacheRead: 0,
    cacheWrite: 0,
    totalTokens: 1280,
    cost: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, total: 0 },
  };
  const push = (entry: Record<string, unknown>): void => {
    seq += 1;
    const id = seq.toString(16).padStart(8, '0');
    const timestamp = new Date(startMs + seq * 1000).toISOString();
    const line = JSON.stringify({ ...entry, id, parentId, timestamp });
    parentId = id;
    lines.push(line);
    bytes += line.length + 1;
  };
  const message = (msg: Record<string, unknown>): void => {
    messages += 1;
    push({ type: 'message', message: { ...msg, timestamp: startMs + (seq + 1) * 1000 } });
  };
  push({ type: 'model_change', provider: spec.provider, modelId: spec.model });
  const assistant = { api: 'openai-completions', provider: spec.provider, model: spec.model, usage };
  for (let round = 1; bytes < spec.targetBytes; round++) {
    const path = `${spec.cwd}/src/module-${round}.ts`;
    const callId = `call_${round.toString(36)}`;
    message({
      role: 'user',
      content: [
        {
          type: 'text',
          text: `Round ${round}: look at src/module-${round}.ts and tell me what step${round % 60} does.`,
        },
      ],
    });
    message({
      role: 'assistant',
      content: [{ type: 'toolCall', id: callId, name: 'read', arguments: { path } }],
      ...assistant,
      stopReason: 'toolUse',
    });
    message({
      role: 'toolResult',
      toolCallId: callId,
      toolName: 'read',
      content: [{ type: 'text', text: `// ${path}\n${FILE_TEXT}` }],
      isError: false,
    });
    message({
      role: 'assistant',
      content: [
        {
          type: 'text',
          text: `In round ${round}, step${round % 60} multiplies its input by ${round % 60} and adds one; nothing else in the module depends on it.`,
        },
      ],
      ...assistant,
      stopReason: 'stop',
    });
  }
  return { text: `${lines.join('\n')}\n`, entries: lines.length - 1, messages };
}

/** Writes the session under `<agentDir>/sessions` where pi would keep it (see {@link piSessionPath}). */
export async function writePiSession(agentDir: string, spec: PiSessionSpec): Promise<PiSessionFileInfo> {
  const startMs = spec.startMs ?? Date.now() - 2 * 24 * 3600 * 1000;
  const path = piSessionPath(agentDir, spec, startMs);
  const { text, entries, messages } = piSessionLines({ ...spec, startMs });
  await mkdir(dirname(path), { recursive: true });
  await writeFile(path, text);
  return { path, bytes: Buffer.byteLength(text), entries, messages };
}
