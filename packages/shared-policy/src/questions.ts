import { formatText, type Locale } from './texts/index.js';

/** Most option labels one question mail carries (the Gateway's limit). @default 50 */
export const QUESTION_MAX_OPTIONS = 50;

/** One option of a question, as `ask_user_question`-style seams give it. */
export interface QuestionOption {
  label: string;
  description?: string;
}

/** One question of an `ask_user_question`-style tool call. */
export interface Question {
  question: string;
  /** Short heading (a few words). */
  header?: string;
  /** No options (or an empty list) means a free-text question. */
  options?: readonly QuestionOption[];
  /** The person may choose several options. @default false */
  multiSelect?: boolean;
}

/** Fields of a `POST /permission/request` body for a question (`session_id`, `relay_key`, `context` are the caller's). */
export interface QuestionMail {
  kind: 'question';
  /** The text the person reads: every question, its options with descriptions, and how to answer. */
  question: string;
  /** Union of every question's option labels, trimmed, de-duplicated, in first-seen order; [] for free text. */
  options: string[];
  /** True when any question allows several options, or more than one question has options. */
  multi_select: boolean;
}

function labelsOf(q: Question): string[] {
  return (q.options ?? []).map((o) => o.label.trim()).filter((l) => l !== '');
}

/**
 * Turn the questions of one tool call into one question mail (see SPEC P-9).
 *
 * Options are the union of all questions' labels. A question without options is free text: it
 * gets no options at all — never an approve/deny pair. When several questions carry options the
 * person must pick one per question, so `multi_select` is true.
 *
 * @example buildQuestionMail([{ question: 'Which tone?', options: [{ label: 'formal' }, { label: 'casual' }] }])
 */
export function buildQuestionMail(questions: readonly Question[], locale?: Locale): QuestionMail {
  const options: string[] = [];
  const seen = new Set<string>();
  let withOptions = 0;
  let anyMulti = false;
  let anyFree = false;
  const blocks: string[] = [];
  const numbered = questions.length > 1;

  questions.forEach((q, i) => {
    const labels = labelsOf(q);
    const head = q.header?.trim() ? `${q.header.trim()}: ${q.question.trim()}` : q.question.trim();
    const lines = [numbered ? `${i + 1}. ${head}` : head];
    const indent = numbered ? '   ' : '';
    if (labels.length === 0) {
      anyFree = true;
      lines.push(`${indent}${formatText('permission.question.free_text_marker', {}, locale)}`);
    } else {
      withOptions += 1;
      if (q.multiSelect === true) {
        anyMulti = true;
        lines.push(`${indent}${formatText('permission.question.several_marker', {}, locale)}`);
      }
      for (const o of q.options ?? []) {
        const label = o.label.trim();
        if (label === '') continue;
        const description = o.description?.trim();
        lines.push(description ? `${indent}- ${label} — ${description}` : `${indent}- ${label}`);
        if (!seen.has(label) && options.length < QUESTION_MAX_OPTIONS) {
          seen.add(label);
          options.push(label);
        }
      }
    }
    blocks.push(lines.join('\n'));
  });

  const multi = anyMulti || withOptions > 1;
  const hint =
    withOptions === 0
      ? 'permission.question.hint_free_text'
      : multi
        ? 'permission.question.hint_choose_many'
        : 'permission.question.hint_choose_one';
  blocks.push(formatText(hint, {}, locale));
  if (anyFree && withOptions > 0) blocks.push(formatText('permission.question.hint_mixed', {}, locale));
  return { kind: 'question', question: blocks.join('\n\n'), options, multi_select: multi };
}

/** The person's answer to a question mail, as the `permission_decision` event carries it. */
export interface QuestionAnswerInput {
  /** Wire decision word; `deny` means the person declined to answer. */
  decision?: string;
  /** Chosen option labels, or the free text as one element. */
  answers?: readonly string[];
  /** Extra free text (e.g. the person's note), used for free-text questions. */
  text?: string;
}

/** The answer to one question, in the order of the questions asked. */
export interface QuestionAnswer {
  question: string;
  header?: string;
  /** Chosen labels of this question's own options (at most one unless `multiSelect`). */
  selected: string[];
  /** Free text: the answer to a free-text question, or what the person wrote instead of choosing. */
  text?: string;
}

/** Result of {@link mapQuestionAnswers}. */
export interface QuestionAnswers {
  /** The person declined to answer (`decision: "deny"`). */
  declined: boolean;
  answers: QuestionAnswer[];
}

/**
 * Map a person's answer back onto the questions by label (see SPEC P-9).
 *
 * Each answer element that equals an option label (trimmed; case-insensitive when there is no
 * exact match) selects that label in every question that offers it; a single-select question
 * keeps the first of its labels in the person's order. Elements that match no label are free
 * text: they answer the free-text questions, and any option question for which nothing was chosen.
 *
 * @example mapQuestionAnswers(questions, { decision: 'answered', answers: ['formal'] })
 */
export function mapQuestionAnswers(
  questions: readonly Question[],
  input: QuestionAnswerInput,
): QuestionAnswers {
  const declined = input.decision === 'deny';
  const exact = new Map<string, string>();
  const folded = new Map<string, string>();
  for (const q of questions) {
    for (const label of labelsOf(q)) {
      exact.set(label, label);
      if (!folded.has(label.toLowerCase())) folded.set(label.toLowerCase(), label);
    }
  }

  const chosen: string[] = [];
  const free: string[] = [];
  if (!declined) {
    for (const element of input.answers ?? []) {
      const t = element.trim();
      if (t === '') continue;
      const label = exact.get(t) ?? folded.get(t.toLowerCase());
      if (label === undefined) free.push(t);
      else if (!chosen.includes(label)) chosen.push(label);
    }
  }
  // The person's note: the answer of a question nothing was chosen for, beside the labels otherwise.
  const note = declined ? '' : (input.text?.trim() ?? '');
  const freeText = [...free, ...(note ? [note] : [])].join('\n');

  const answers = questions.map((q): QuestionAnswer => {
    const own = new Set(labelsOf(q));
    let selected = chosen.filter((l) => own.has(l));
    if (q.multiSelect !== true) selected = selected.slice(0, 1);
    const answer: QuestionAnswer = { question: q.question, selected };
    if (q.header !== undefined) answer.header = q.header;
    if (selected.length === 0 && freeText !== '') answer.text = freeText;
    else if (selected.length > 0 && note !== '') answer.text = note;
    return answer;
  });
  return { declined, answers };
}
