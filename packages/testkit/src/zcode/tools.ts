/**
 * The stand-in's built-in tools, with the names, inputs and capabilities of ZCode v3.15.1
 * (jimpablo/ZCode `core/src/tool/handlers/{bash,read,write,edit}.ts`, `index.ts` builtInTools;
 * `ApplyPatch` is commented out there): `Bash {command, description?, timeout?}` (a real shell),
 * `Read {file_path, offset?, limit?}`, `Write {file_path, content}` (an existing file must have
 * been read first: "File has not been read yet. Read it first before writing to it."),
 * `Edit {file_path, old_string, new_string, replace_all?}`, and `AskUserQuestion`, which needs
 * user interaction (headless: denied by the deny broker).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import type { ToolCapability } from './permissions.js';

/** What a tool call returned: the text the model reads, and whether it failed. */
export interface ToolOutput {
  text: string;
  isError: boolean;
}

/** A built-in tool. */
export interface BuiltinTool {
  name: string;
  description: string;
  inputSchema: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
  capability: ToolCapability;
  run(input: Record<string, unknown>, ctx: ToolRunContext): Promise<ToolOutput>;
}

/** What a tool run gets. */
export interface ToolRunContext {
  cwd: string;
  env: NodeJS.ProcessEnv;
  signal: AbortSignal;
  /** Files read in this session (Write/Edit freshness). */
  readFiles: Set<string>;
}

/** Time a Bash call may take, in ms (ZCode's default). @default 120_000 */
export const BASH_TIMEOUT_MS = 120_000;

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function pathOf(input: Record<string, unknown>, cwd: string): string {
  const p = str(input.file_path);
  if (!p) throw new Error('file_path is required');
  return isAbsolute(p) ? p : resolve(cwd, p);
}

function runBash(command: string, ctx: ToolRunContext, timeoutMs: number): Promise<ToolOutput> {
  return new Promise((done) => {
    const child = spawn('/bin/bash', ['-c', command], { cwd: ctx.cwd, env: ctx.env });
    let out = '';
    const add = (d: Buffer): void => {
      if (out.length < 100_000) out += d.toString();
    };
    child.stdout.on('data', add);
    child.stderr.on('data', add);
    const kill = (): void => {
      child.kill('SIGKILL');
    };
    const timer = setTimeout(kill, timeoutMs);
    ctx.signal.addEventListener('abort', kill, { once: true });
    child.once('error', (err) => {
      clearTimeout(timer);
      done({ text: String(err), isError: true });
    });
    child.once('close', (code, signal) => {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', kill);
      const status = code === 0 ? '' : `\nExit code ${code ?? signal}`;
      done({ text: `${out.trimEnd()}${status}`.trim() || '(no output)', isError: code !== 0 });
    });
  });
}

/** The built-in tools. */
export const BUILTIN_TOOLS: readonly BuiltinTool[] = [
  {
    name: 'Bash',
    description: 'Executes a bash command in the working directory and returns its output.',
    inputSchema: {
      type: 'object',
      properties: {
        command: { type: 'string' },
        description: { type: 'string' },
        timeout: { type: 'number' },
      },
      required: ['command'],
    },
    capability: {
      readOnly: false,
      destructive: true,
      needsApproval: true,
      sideEffectScope: 'workspace',
      riskLevel: 'high',
    },
    run: (input, ctx) => {
      const command = str(input.command);
      if (!command) return Promise.resolve({ text: 'command is required', isError: true });
      const t = typeof input.timeout === 'number' && input.timeout > 0 ? input.timeout : BASH_TIMEOUT_MS;
      return runBash(command, ctx, t);
    },
  },
  {
    name: 'Read',
    description: 'Reads a file from the local filesystem (numbered lines).',
    inputSchema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, offset: { type: 'number' }, limit: { type: 'number' } },
      required: ['file_path'],
    },
    capability: {
      readOnly: true,
      destructive: false,
      needsApproval: false,
      sideEffectScope: 'none',
      riskLevel: 'low',
    },
    async run(input, ctx) {
      const file = pathOf(input, ctx.cwd);
      const text = await readFile(file, 'utf8');
      ctx.readFiles.add(file);
      const offset = typeof input.offset === 'number' ? Math.max(1, input.offset) : 1;
      const lines = text.split('\n');
      const limit = typeof input.limit === 'number' ? input.limit : lines.length;
      return {
        text: lines
          .slice(offset - 1, offset - 1 + limit)
          .map((l, i) => `${String(offset + i).padStart(6)}\t${l}`)
          .join('\n'),
        isError: false,
      };
    },
  },
  {
    name: 'Write',
    description: 'Writes a file to the local filesystem, overwriting if one exists.',
    inputSchema: {
      type: 'object',
      properties: { file_path: { type: 'string' }, content: { type: 'string' } },
      required: ['file_path', 'content'],
    },
    capability: {
      readOnly: false,
      destructive: false,
      needsApproval: true,
      sideEffectScope: 'workspace',
      riskLevel: 'medium',
      permission: 'edit',
    },
    async run(input, ctx) {
      const file = pathOf(input, ctx.cwd);
      const existed = existsSync(file);
      if (existed && !ctx.readFiles.has(file))
        return { text: 'File has not been read yet. Read it first before writing to it.', isError: true };
      await mkdir(dirname(file), { recursive: true });
      await writeFile(file, str(input.content) ?? '');
      ctx.readFiles.add(file);
      return {
        text: existed
          ? `The file ${str(input.file_path)} has been updated successfully.`
          : `File created successfully at: ${str(input.file_path)}`,
        isError: false,
      };
    },
  },
  {
    name: 'Edit',
    description: 'Replaces text in a file that was read before.',
    inputSchema: {
      type: 'object',
      properties: {
        file_path: { type: 'string' },
        old_string: { type: 'string' },
        new_string: { type: 'string' },
        replace_all: { type: 'boolean' },
      },
      required: ['file_path', 'old_string', 'new_string'],
    },
    capability: {
      readOnly: false,
      destructive: false,
      needsApproval: true,
      sideEffectScope: 'workspace',
      riskLevel: 'medium',
      permission: 'edit',
    },
    async run(input, ctx) {
      const file = pathOf(input, ctx.cwd);
      if (!ctx.readFiles.has(file))
        return { text: 'File has not been read yet. Read it first before writing to it.', isError: true };
      const text = await readFile(file, 'utf8');
      const from = str(input.old_string) ?? '';
      const to = str(input.new_string) ?? '';
      const count = from === '' ? 0 : text.split(from).length - 1;
      if (count === 0) return { text: 'String to replace not found in file.', isError: true };
      if (count > 1 && input.replace_all !== true)
        return {
          text: `Found ${count} matches of the string to replace; set replace_all or add context.`,
          isError: true,
        };
      await writeFile(file, input.replace_all === true ? text.split(from).join(to) : text.replace(from, to));
      return { text: `The file ${str(input.file_path)} has been updated successfully.`, isError: false };
    },
  },
  {
    name: 'AskUserQuestion',
    description: 'Asks the user questions with options.',
    inputSchema: { type: 'object', properties: { questions: { type: 'array' } }, required: ['questions'] },
    capability: {
      readOnly: true,
      destructive: false,
      needsApproval: false,
      sideEffectScope: 'userInteraction',
      riskLevel: 'low',
    },
    run: () => Promise.resolve({ text: 'The stand-in has no interactive question surface.', isError: true }),
  },
];
