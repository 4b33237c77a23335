/**
 * The one output sanitiser of the CLI (SPEC H-1), property-tested over arbitrary strings: nothing
 * it prints can start an escape sequence or act on the terminal, for people; `--json` stays the
 * exact value. The print functions of the commands (mail, inbox rows, permissions, errors) are run
 * on arbitrary mail fields through the real writer.
 */
import type { Mail, PermissionView } from '@agentmail/protocol';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { CliError } from '../src/cli/errors.js';
import { formatMail } from '../src/cli/mail.js';
import { type CliIo, printJson, reportError, table, terminalIo, truncate } from '../src/cli/output.js';
import { describePermission } from '../src/cli/permissions.js';
import { jsonForTerminal, terminalSafe } from '../src/cli/terminal-text.js';
import { actsOnTerminal } from './helpers/terminal.js';

/** Strings of any UTF-16 code units (lone surrogates too), rich in the characters that matter. */
const nasty = fc.oneof(
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.string({
    unit: fc.constantFrom(
      '\u001b',
      '[',
      '2J',
      '\u009b',
      '\u0007',
      '\r',
      '\n',
      '\u202e',
      'x',
      'é',
      '😀',
      ']8;;',
    ),
  }),
  fc.string({ unit: 'binary' }),
);

function capture(): CliIo & { text: () => string } {
  const lines: string[] = [];
  return {
    out: (s) => lines.push(s),
    err: (s) => lines.push(s),
    env: {},
    stdin: async function* () {},
    text: () => lines.join('\n'),
  };
}

const mailOf = (s: string): Mail => ({
  id: `m_${s}`,
  session_id: 's_1',
  session_alias: s,
  from_name: s,
  from_human: false,
  from_address: `${s}@/w.${s}`,
  to: [{ name: s, human: true, address: `${s}@.` }],
  cc: [{ name: 'x', human: true, address: s }],
  to_human: true,
  subject: s,
  snippet: s,
  created_at: '2026-12-01T10:00:00.000Z',
  status: 'unread',
  attachments: [
    {
      id: `a_${s}`,
      filename: s,
      content_type: s,
      size_bytes: 1,
      sha256: s,
      created_at: '2026-12-01T10:00:00.000Z',
    },
  ],
  in_reply_to: s,
  kind: 'mail',
  is_permission: false,
  relay: false,
  permission_mode: 'workspace',
  reply_address: s,
  self_address: s,
  platform_session_id: '',
  body: s,
  participants: [],
  parent_from: s,
});

const permissionOf = (s: string): PermissionView => ({
  id: `p_${s}`,
  kind: 'question',
  agent_name: s,
  session_id: 's_1',
  session_alias: s,
  question: s,
  options: [s, 'b'],
  multi_select: false,
  context: s,
  status: 'decided',
  decision: s,
  note: s,
  answers: [s],
  mail_id: 'm_1',
  created_at: '2026-12-01T10:00:00.000Z',
  decided_at: null,
});

describe('terminalSafe (SPEC H-1)', () => {
  it('leaves nothing a terminal acts on; one line has no break; a block keeps only its \\n and \\t', () => {
    fc.assert(
      fc.property(nasty, (s) => {
        const line = terminalSafe(s);
        expect(actsOnTerminal(line)).toBe(false);
        expect(line).not.toMatch(/[\n\t\r]/); // one line: no break of any kind
        const block = terminalSafe(s, { multiline: true });
        expect(actsOnTerminal(block)).toBe(false);
        expect(block).not.toContain('\r');
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps ordinary text of any script as it is', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), (s) => {
        const plain = s.replace(/[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]/gu, '');
        expect(terminalSafe(plain, { multiline: true })).toBe(plain);
      }),
    );
    expect(terminalSafe('Grüße, 你好 😀 — ok')).toBe('Grüße, 你好 😀 — ok');
  });

  it('shows what it replaced, inert: ESC as \\x1b, CSI as \\x9b, RLO as \\u202e', () => {
    expect(terminalSafe('\u001b[2Jx\u009b31m\u202egnp.exe')).toBe('\\x1b[2Jx\\x9b31m\\u202egnp.exe');
    expect(terminalSafe('a\r\nb\rc', { multiline: true })).toBe('a\nb\\rc');
    expect(terminalSafe('a\nb')).toBe('a\\nb');
  });
});

describe('jsonForTerminal: --json stays exact (SPEC H-1)', () => {
  it('parses back to the same value and carries nothing a terminal acts on', () => {
    fc.assert(
      fc.property(fc.jsonValue(), nasty, (value, s) => {
        const v = { value, s, list: [s, { s }] };
        const text = jsonForTerminal(v, 2);
        expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(v)));
        expect(actsOnTerminal(text)).toBe(false);
      }),
      { numRuns: 1000 },
    );
  });
});

describe('every print path of the CLI, through the real writer', () => {
  it('mails, inbox rows, permissions and errors with arbitrary fields print nothing a terminal acts on', async () => {
    await fc.assert(
      fc.asyncProperty(nasty, async (s) => {
        const sink = capture();
        const io = terminalIo(sink);
        io.out(formatMail(mailOf(s)));
        io.out(table(['ID', 'SUBJECT'], [[s, truncate(s)]]));
        io.out(describePermission(permissionOf(s)));
        printJson(io, mailOf(s));
        reportError(io, new CliError('SERVER_REFUSED', s, { detail: s, suggestion: s }), false);
        reportError(io, new CliError('SERVER_REFUSED', s, { body: { error: s, detail: s } }), true);
        reportError(io, new Error(s), false);
        expect(actsOnTerminal(sink.text())).toBe(false);
      }),
      { numRuns: 500 },
    );
  });

  it('a header field can not fake a header line: the subject stays on the Subject line', () => {
    const text = formatMail({ ...mailOf('x'), subject: 'hi\nFrom:     admin <admin@.>' });
    expect(text.split('\n').filter((l) => l.startsWith('From:'))).toHaveLength(1);
    expect(text).toContain('Subject:  hi\\nFrom:     admin <admin@.>');
  });
});
