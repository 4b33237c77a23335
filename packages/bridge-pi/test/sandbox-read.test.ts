import { chmod, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { deflateSync } from 'node:zlib';
import { findBubblewrap, turnSandbox } from '@agentmail/bridge-kit';
import type { ToolDefinition } from '@earendil-works/pi-coding-agent';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { importPiSdk } from '../src/pi-sdk.js';
import { piSandboxPolicy } from '../src/sandbox.js';
import { piSandboxedReadTools } from '../src/sandbox-read.js';

// pi's read tools in the workspace sandbox (SPEC P-12) on pi's own definitions, run directly (no
// Gateway, no model) in the real bubblewrap: what pi's tools show and bound stays as pi has it, and
// a hidden place is missing.
// The turn-level tests (a scripted model, a hidden data dir, pi's agent dir) are in sandbox.test.ts.

const BWRAP = findBubblewrap();
if (!BWRAP) throw new Error('bwrap not found on PATH: apt-get install --no-install-recommends bubblewrap');

let base: string;
let ws: string;
let hidden: string;
let tools: Map<string, ToolDefinition>;

/** A valid 1×1 PNG (pi's detector checks the IHDR chunk; its resizer decodes the image). */
function png(): Buffer {
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const ihdr = Buffer.from([0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0]);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', ihdr),
    chunk('IDAT', deflateSync(Buffer.from([0, 255, 0, 0]))),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

function crc32(data: Buffer): number {
  let c = ~0;
  for (const byte of data) {
    c ^= byte;
    for (let k = 0; k < 8; k++) c = (c >>> 1) ^ (0xedb88320 & -(c & 1));
  }
  return ~c >>> 0;
}

beforeAll(async () => {
  // On the real filesystem, outside the places every sandbox makes private (/tmp, /var/tmp).
  await mkdir(join(homedir(), '.cache'), { recursive: true });
  base = await mkdtemp(join(homedir(), '.cache', 'am-pi-read-test-'));
  ws = join(base, 'ws');
  hidden = join(base, 'agent');
  await mkdir(join(ws, 'src', 'deep'), { recursive: true });
  await mkdir(join(ws, 'node_modules', 'dep'), { recursive: true });
  await mkdir(hidden, { recursive: true });
  await writeFile(join(hidden, 'auth.json'), '{"key":"HIDDEN-KEY"}\n');
  await symlink(hidden, join(ws, 'agent-link'));
  await writeFile(join(ws, 'notes.txt'), 'alpha\nbeta\n');
  await writeFile(join(ws, '.env.example'), 'X=1\n');
  await writeFile(join(ws, 'src', 'deep', 'main.ts'), 'export const x = 1;\n');
  await writeFile(join(ws, 'node_modules', 'dep', 'index.ts'), 'export {};\n');
  await writeFile(join(ws, 'pixel.png'), png());
  for (let i = 0; i < 12; i++) await writeFile(join(ws, 'src', `m${i}.txt`), `match ${i}\n`);
  const { sdk } = await importPiSdk();
  const sandbox = turnSandbox({ bwrap: BWRAP, confines: [], hidden: [] }, piSandboxPolicy(ws, hidden));
  tools = new Map(
    piSandboxedReadTools(sdk, sandbox, ws, { agentDir: hidden, locale: 'en' }).map((t) => [t.name, t]),
  );
});
afterAll(() => rm(base, { recursive: true, force: true }));

/** The text pi's tool answers with (its error's message when it throws). */
async function call(
  name: string,
  params: Record<string, unknown>,
  from: Map<string, ToolDefinition> = tools,
): Promise<string> {
  const tool = from.get(name);
  if (!tool) throw new Error(`no ${name}`);
  try {
    const result = await tool.execute('call', params as never, undefined, undefined, { cwd: ws } as never);
    return result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type} ${c.mimeType}]`)).join('\n');
  } catch (err) {
    return `ERROR ${(err as Error).message}`;
  }
}

describe("pi's read tools in the sandbox, as pi's own show them", () => {
  it('read: text with pi’s offset/limit notice, an image as an image, a hidden file missing', async () => {
    expect(await call('read', { path: 'notes.txt' })).toBe('alpha\nbeta\n');
    expect(await call('read', { path: 'notes.txt', limit: 1 })).toBe(
      'alpha\n\n[2 more lines in file. Use offset=2 to continue.]',
    );
    expect(await call('read', { path: 'pixel.png' })).toMatch(
      /^Read image file \[image\/png\][\s\S]*\[image image\/png\]$/,
    );
    expect(await call('read', { path: join(hidden, 'auth.json') })).toMatch(
      /^ERROR .*No such file or directory/,
    );
    expect(await call('read', { path: 'agent-link/auth.json' })).toMatch(
      /^ERROR .*No such file or directory/,
    );
  });

  it('ls: sorted, directories with /, pi’s limit notice; a missing path is pi’s words; the hidden dir is empty', async () => {
    expect(await call('ls', { path: 'src', limit: 3 })).toBe(
      'deep/\nm0.txt\nm1.txt\n\n[3 entries limit reached. Use limit=6 for more]',
    );
    expect(await call('ls', { path: 'nope' })).toBe(`ERROR Path not found: ${join(ws, 'nope')}`);
    expect(await call('ls', { path: 'agent-link' })).toBe('(empty directory)');
  });

  it('find: a name at any depth, dotfiles, node_modules skipped, smart case, the limit; nothing through the link', async () => {
    expect(await call('find', { pattern: '*.ts' })).toBe('src/deep/main.ts');
    expect(await call('find', { pattern: 'src/*' })).toMatch(/^(src\/\S+\n?)+$/);
    expect((await call('find', { pattern: 'src/**' })).split('\n')).toContain('src/deep/');
    expect(await call('find', { pattern: '.env*' })).toBe('.env.example');
    expect(await call('find', { pattern: '*.TS' }), 'a pattern with capitals is case-sensitive').toBe(
      'No files found matching pattern',
    );
    expect(await call('find', { pattern: 'm*.txt', limit: 2 })).toMatch(/\n\n\[2 results limit reached\]$/);
    expect(await call('find', { pattern: '*', path: 'agent-link' })).toBe('No files found matching pattern');
    expect(await call('find', { pattern: '*', path: 'nope' })).toBe(
      `ERROR Path not found: ${join(ws, 'nope')}`,
    );
  });

  it("a sandbox that does not start (bwrap refused, e.g. no user namespaces) says so: never 'no matches' or 'not found'", async () => {
    const fakeBwrap = join(base, 'bwrap-refused');
    await writeFile(
      fakeBwrap,
      "#!/bin/sh\necho 'bwrap: setting up uid map: Permission denied' >&2\nexit 1\n",
    );
    await chmod(fakeBwrap, 0o755);
    const { sdk } = await importPiSdk();
    const refused = new Map(
      piSandboxedReadTools(
        sdk,
        turnSandbox({ bwrap: fakeBwrap, confines: [], hidden: [] }, piSandboxPolicy(ws, hidden)),
        ws,
        { agentDir: hidden, locale: 'en' },
      ).map((t) => [t.name, t]),
    );
    for (const [name, params] of [
      ['read', { path: 'notes.txt' }],
      ['ls', {}],
      ['find', { pattern: '*' }],
      ['grep', { pattern: 'nothing-matches-this' }],
    ] as const)
      expect(await call(name, params, refused), name).toBe(
        'ERROR bwrap: setting up uid map: Permission denied',
      );
  });

  it('grep: path:line: text, pi’s match limit notice, a file by its name; nothing through the link', async () => {
    expect(await call('grep', { pattern: 'beta' })).toBe('notes.txt:2: beta');
    expect(await call('grep', { pattern: 'alpha', path: 'notes.txt', context: 1 })).toBe(
      'notes.txt:1: alpha\nnotes.txt-2- beta',
    );
    expect(await call('grep', { pattern: '^match', path: 'src', limit: 5 })).toMatch(
      /^(m\d+\.txt:1: match \d+\n){5}\n\[5 matches limit reached\. Use limit=10 for more, or refine pattern\]$/,
    );
    expect(await call('grep', { pattern: 'HIDDEN-KEY', path: 'agent-link' })).toBe('No matches found');
    expect(await call('grep', { pattern: 'HIDDEN-KEY', path: hidden })).toBe('No matches found');
    expect(await call('grep', { pattern: 'x', path: 'nope' })).toBe(
      `ERROR Path not found: ${join(ws, 'nope')}`,
    );
  });
});
