/** A person's answer to an approval request (see SPEC P-4). */
export type ApprovalDecision = 'approve_once' | 'approve_always' | 'deny';

// Exact phrases, compared after normalizeApprovalText. The wire words of @agentmail/protocol
// (`approve_once`, `approve_always`, and the human route's `approve`, `always`) are included so
// one parser serves typed replies and decision events alike.
const ONCE: ReadonlySet<string> = new Set([
  'approve',
  'approved',
  'approve once',
  'yes',
  'allow',
  'allowed',
  'allow once',
  'once',
  '批准',
  '同意',
  '允许',
  '准许',
  '可以',
  '批准一次',
  '同意一次',
  '允许一次',
  '仅此一次',
  '本次允许',
  '只允许这一次',
]);

const ALWAYS: ReadonlySet<string> = new Set([
  'always',
  'always approve',
  'approve always',
  'always allow',
  'allow always',
  '总是允许',
  '始终允许',
  '一直允许',
  '永远允许',
  '总是批准',
  '始终批准',
  '一直批准',
  '总是同意',
  '始终同意',
]);

/**
 * Normalise a typed reply for matching: Unicode NFKC (full-width `！` becomes `!`), lower case,
 * `_`/`-` and runs of whitespace folded to one space, then trailing `.`, `!`, `。` stripped.
 * A question mark is kept, so `approve?` stays a question and is not an approval.
 */
function normalizeApprovalText(text: string): string {
  return text
    .normalize('NFKC')
    .toLowerCase()
    .replace(/[\s_-]+/gu, ' ')
    .trim()
    .replace(/[.!。]+$/u, '')
    .trim();
}

/**
 * Parse a person's approval reply (see SPEC P-4). Only an explicit approval passes:
 * - `approve_once`: approve, approved, approve once, yes, allow, allow once, once, 批准, 同意,
 *   允许, 准许, 可以, 批准一次, 允许一次, 仅此一次 … (and the wire word `approve_once`);
 * - `approve_always`: always, always approve, approve always, always allow, 总是允许, 始终允许,
 *   始终批准, 总是同意 … (and the wire word `approve_always`);
 * - everything else is `deny`: empty text, `no`, `maybe`, `approve?` (a question, not an
 *   approval), `yes but …` (a condition the tool cannot honour), any unknown word.
 *
 * The whole reply must be one of the phrases (case, `_`/`-`, extra spaces and a trailing
 * `.`/`!`/`。` do not matter); a phrase inside a longer sentence does not count.
 *
 * @example parseApproval('Always approve!') // 'approve_always'
 * @example parseApproval('approve?') // 'deny'
 */
export function parseApproval(text: string): ApprovalDecision {
  if (typeof text !== 'string') return 'deny';
  const t = normalizeApprovalText(text);
  if (ALWAYS.has(t)) return 'approve_always';
  if (ONCE.has(t)) return 'approve_once';
  return 'deny';
}
