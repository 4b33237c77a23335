/**
 * Building blocks of the conformance scenarios: unique markers, patterns made from the shared text
 * catalogue (the words every bridge shows the model, SPEC B-17), the model steps the scenarios
 * script, and journal queries.
 */
import { randomBytes } from 'node:crypto';
import { catalogue, type Locale, type TextKey } from '@agentmail/shared-policy';
import type { HostHarness } from '../harness/bridge.js';
import type { ScriptedModel } from '../harness/model-view.js';
import type { RecordedRequest } from '../request.js';
import type { RequestMatch, Scenario, ScenarioReply } from '../scenario.js';

/** Locale of the texts the scenarios expect bridges to use. @default 'en' */
export const CONFORMANCE_LOCALE: Locale = 'en';

/** Model ids the conformance stack lists: the working default first, then two that always fail. */
export const CONFORMANCE_MODELS = {
  working: 'scripted-model',
  failingA: 'failing-model-a',
  failingB: 'failing-model-b',
} as const;

/** Default time one scenario step waits for the bridge, in ms. @default 30_000 */
export const CONFORMANCE_STEP_TIMEOUT_MS = 30_000;

/**
 * Turn timeout the `turn-timeout` scenario configures, in ms (SPEC B-7): long enough for a worker
 * start plus a short scripted turn on a loaded machine, short enough for a test. @default 15_000
 */
export const CONFORMANCE_TURN_TIMEOUT_MS = 15_000;

/**
 * A marker unique to one step, e.g. `task.3f9a01c2`: put in subjects and bodies, matched in the
 * journal. The dot keeps it out of session aliases (made from the subject with every
 * non-alphanumeric run folded to `-`, SPEC G-5), which later prompts of the session show: a
 * marker must appear only in the prompts of its own mail.
 */
export function marker(label: string): string {
  return `${label}.${randomBytes(4).toString('hex')}`;
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * A RegExp for the catalogue text `key`: the literal words, every `{placeholder}` a wildcard; the
 * one named `capture` becomes capture group 1 (an id: letters, digits, `_`, `-`, `:`).
 * @example textPattern('prompt.field.mail_id', 'mail_id').exec(prompt)?.[1]
 */
export function textPattern(key: TextKey, capture?: string, locale: Locale = CONFORMANCE_LOCALE): RegExp {
  const template = catalogue(locale)[key];
  let source = '';
  let last = 0;
  let captured = false;
  for (const match of template.matchAll(/\{([a-zA-Z0-9_]+)\}/g)) {
    source += escapeRegExp(template.slice(last, match.index));
    if (match[1] === capture && !captured) {
      source += '([A-Za-z0-9_:-]+)';
      captured = true;
    } else source += '[\\s\\S]*?';
    last = match.index + match[0].length;
  }
  source += escapeRegExp(template.slice(last));
  return new RegExp(source);
}

/** The mail id a turn prompt names (SPEC B-5: `prompt.field.mail_id`), or throws. */
export function mailIdOf(request: RecordedRequest): string {
  const id = textPattern('prompt.field.mail_id', 'mail_id').exec(request.lastUserText)?.[1];
  if (id === undefined)
    throw new Error(
      `the prompt names no mail id (expected "${catalogue(CONFORMANCE_LOCALE)['prompt.field.mail_id']}")`,
    );
  return id;
}

/** The attachment id an `upload_attachment` result names (`tools.upload.done`), or throws. */
export function uploadedIdOf(request: RecordedRequest): string {
  for (const result of request.toolResults) {
    const id = textPattern('tools.upload.done', 'id').exec(result.text)?.[1];
    if (id !== undefined) return id;
  }
  throw new Error('no upload_attachment result names an attachment id');
}

/** A call of the adapter's shell tool running `command`. */
export function shellCall(adapter: HostHarness, command: string): ScenarioReply {
  return {
    type: 'tool_calls',
    calls: [{ name: adapter.toolNames.shell, arguments: adapter.shellArgs?.(command) ?? { command } }],
  };
}

/**
 * A call of mail tool `name` (SPEC B-17) with `args`, by the name the adapter's host gives it
 * ({@link HostHarness.mailTool}); without an adapter, by its own name.
 */
export function mailToolCall(
  adapter: HostHarness | undefined,
  name: string,
  args: Readonly<Record<string, unknown>>,
): ScenarioReply {
  return { type: 'tool_calls', calls: [{ name: adapter?.mailTool?.(name) ?? name, arguments: args }] };
}

/** A call of the adapter's read-file tool for the absolute `path`. */
export function readFileCall(adapter: HostHarness, path: string): ScenarioReply {
  return {
    type: 'tool_calls',
    calls: [{ name: adapter.toolNames.readFile, arguments: adapter.readFileArgs?.(path) ?? { path } }],
  };
}

/** The first request of the turn for the mail carrying `mark` (a mail turn offers tools; a title request does not). */
export function turnStart(mark: string): RequestMatch {
  return { lastUserMessage: mark, hasToolResult: false, hasTools: true };
}

/**
 * A prompt for the mail carrying `mark`: the request ends with a user message carrying it. Unlike
 * {@link turnStart} it also matches when an earlier turn of the session was cut off in the middle of
 * a tool call (then the history holds an unanswered tool result before the new prompt).
 */
export function promptOf(mark: string): RequestMatch {
  return {
    hasTools: true,
    predicate: (request) => {
      const last = request.body?.messages.at(-1);
      return last?.role === 'user' && request.lastUserText.includes(mark);
    },
  };
}

/** Requests that started a turn for the mail carrying `mark`, in arrival order. */
export function turnStarts(model: ScriptedModel, mark: string): RecordedRequest[] {
  return model.requests({ match: turnStart(mark) });
}

/** Every tool result the model was shown in the turns of `mark`, joined. */
export function toolResultsSeen(model: ScriptedModel, mark: string): string {
  return model
    .requests({ match: { lastUserMessage: mark, hasToolResult: true } })
    .flatMap((r) => r.toolResults.map((t) => t.text))
    .join('\n---\n');
}

/**
 * Answers title requests (no tools offered: opencode and dsh send one beside the first turn), so
 * they never reach a scenario's step. Put it first.
 */
export const TITLE_SCENARIO: Scenario = {
  name: 'title',
  match: { hasTools: false },
  reply: { type: 'text', text: 'Mail task' },
};

/**
 * The steps of a simple mail turn: the model reads the mail with `read_mail` (id from the
 * prompt), and once the body (which carries `bodyMark`) is in a tool result, answers `finalText`.
 * `adapter` names the tool as its host does ({@link mailToolCall}).
 */
export function readMailThenAnswer(
  mark: string,
  bodyMark: string,
  finalText: string,
  adapter?: HostHarness,
): Scenario[] {
  return [
    {
      name: `${mark}:read_mail`,
      match: turnStart(mark),
      reply: (request) => mailToolCall(adapter, 'read_mail', { mail_id: mailIdOf(request) }),
    },
    {
      name: `${mark}:answer`,
      match: { lastUserMessage: mark, toolResultContains: bodyMark },
      reply: { type: 'text', text: finalText },
    },
  ];
}

/** A turn of `mark` whose model runs `command` in the host's shell, then ends with `text`. */
export function shellThenAnswer(
  adapter: HostHarness,
  mark: string,
  command: string,
  text: string | ((request: RecordedRequest) => string) = 'ok',
): Scenario[] {
  return [
    { name: `${mark}:shell`, match: turnStart(mark), reply: shellCall(adapter, command) },
    {
      name: `${mark}:answer`,
      match: { lastUserMessage: mark, hasToolResult: true },
      reply: (request) => ({ type: 'text', text: typeof text === 'string' ? text : text(request) }),
    },
  ];
}

/** A turn the model ends at once with `text` (no tool call). */
export function answerAtOnce(mark: string, text: string): Scenario {
  return { name: `${mark}:answer`, match: turnStart(mark), reply: { type: 'text', text } };
}

/**
 * Answers any other tool result in the turns of `mark` with a text that shows what the model was
 * given, so an unexpected path ends in a readable reply instead of an unmatched request. Put it last.
 */
export function unexpectedResult(mark: string): Scenario {
  return {
    name: `${mark}:unexpected`,
    match: { lastUserMessage: mark, hasToolResult: true },
    reply: (request) => ({
      type: 'text',
      text: `UNEXPECTED ${mark}: ${request.toolResults.map((t) => t.text).join(' | ')}`,
    }),
  };
}

/**
 * Resolves with `promise`, or rejects naming `what` after `timeoutMs`.
 * @throws Error `<what> did not happen within <timeoutMs> ms`
 */
export async function within<T>(promise: Promise<T>, timeoutMs: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`${what} did not happen within ${timeoutMs} ms`)),
          timeoutMs,
        );
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
