/**
 * `agentmail send --wait`: after the send, wait for the first answer to the mail (a reply or the
 * bridge's failure mail, SPEC B-9) on the person's event stream, and say so when the agent asks
 * for a decision meanwhile (SPEC P-2) — no polling loop of CLI calls in a script.
 *
 * The stream (`GET /me/events`, SseClient: reconnects with Last-Event-ID, SPEC G-22) is opened
 * after the send; on every open the session's pending requests and the thread are read once, so a
 * request or an answer that came before the stream was open is shown too (each request once).
 */
import {
  type Mail,
  PERSON_EVENT_SCHEMAS,
  type PermissionRequestEvent,
  routePath,
  type SendMailResponse,
} from '@agentmail/protocol';
import { SseClient } from '@agentmail/shared-policy/client';
import { CliError } from './errors.js';
import type { HumanApi } from './http.js';
import { oneLine, truncate } from './output.js';

/** `--wait` without a number: how long to wait for the answer, in seconds. @default 600 */
export const SEND_WAIT_DEFAULT_S = 600;
/** Largest `--wait`, in seconds (a day). */
export const SEND_WAIT_MAX_S = 86_400;
/** Thread pages read per check (20 mails each): a reply is near the start of its thread. */
const THREAD_CHECK_PAGES = 10;

/** What {@link waitForAnswer} needs. */
export interface WaitForAnswerOptions {
  api: HumanApi;
  /** Gateway base URL and the person's token (the stream's auth, SPEC G-12). */
  url: string;
  token: string;
  /** The send being answered. */
  sent: SendMailResponse;
  /** How long to wait, in ms. */
  timeoutMs: number;
  /** Called once per permission request (approval or question) of the mail's session. */
  onRequest: (request: WaitRequest) => void;
  /** Called when the stream to the Gateway is lost (`lost`) and when it is open again (`back`). */
  onConnection?: (state: 'lost' | 'back') => void;
}

/** A permission request of the waited-for mail's session, as the event or the list gives it. */
export type WaitRequest = Pick<PermissionRequestEvent, 'request_id' | 'agent_name' | 'kind' | 'question'>;

/** The first mail of `api`'s thread of `mailId` that answers it, if any. */
async function answerInThread(api: HumanApi, mailId: string): Promise<string | undefined> {
  let offset: number | null = 0;
  for (let page = 0; offset !== null && page < THREAD_CHECK_PAGES; page++) {
    const thread = await api.thread(mailId, { offset });
    const answer = thread.mails.find((m) => m.in_reply_to === mailId);
    if (answer) return answer.id;
    offset = thread.next_offset;
  }
  return undefined;
}

/**
 * Wait for the first mail answering `sent.mail_id`; returns it (fetched in full, not marked read).
 *
 * @throws CliError `WAIT_TIMEOUT` when none came within `timeoutMs` (the mail stays sent);
 *   errors of the thread and mail reads as the other commands throw them.
 */
export async function waitForAnswer(options: WaitForAnswerOptions): Promise<Mail> {
  const { api, sent } = options;
  const sessionId = sent.status === 'sent' ? sent.session_id : undefined;
  const stop = new AbortController();
  let settle: (id: string) => void = () => {};
  let fail: (err: unknown) => void = () => {};
  const answered = new Promise<string>((resolve, reject) => {
    settle = resolve;
    fail = reject;
  });
  const shown = new Set<string>();
  const show = (request: WaitRequest): void => {
    if (shown.has(request.request_id)) return;
    shown.add(request.request_id);
    options.onRequest(request);
  };
  /** What a (re)opened stream may have missed: the session's pending requests, then the answer. */
  const catchUp = async (): Promise<void> => {
    const pending = await api.permissions('pending');
    for (const p of pending.permissions)
      if (p.session_id === sessionId)
        show({ request_id: p.id, agent_name: p.agent_name, kind: p.kind, question: p.question });
    const id = await answerInThread(api, sent.mail_id);
    if (id !== undefined) settle(id);
  };
  let checked: Promise<void> = Promise.resolve();
  let lost = false;
  const stream = new SseClient({
    url: options.url,
    key: options.token,
    path: routePath('meEvents'),
    events: PERSON_EVENT_SCHEMAS,
    signal: stop.signal,
    onOpen: () => {
      if (lost) options.onConnection?.('back');
      lost = false;
      checked = checked.then(catchUp).catch(fail);
    },
    onError: (error) => {
      if (lost || (error.code !== 'AM_SSE_CONNECTION' && error.code !== 'AM_SSE_HTTP')) return;
      lost = true;
      options.onConnection?.('lost');
    },
    onEvent: (event) => {
      if (event.type === 'new_mail' && event.data.in_reply_to === sent.mail_id) settle(event.data.mail_id);
      if (event.type === 'permission_request' && event.data.session_id === sessionId) show(event.data);
    },
  });
  void stream.start();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const seconds = Math.round(options.timeoutMs / 1000);
      reject(
        new CliError(
          'WAIT_TIMEOUT',
          lost
            ? `no answer to ${sent.mail_id} within ${seconds} s: the Gateway at ${options.url} has not answered since the stream was lost; the mail was sent`
            : `no answer to ${sent.mail_id} within ${seconds} s; the mail was sent`,
          {
            suggestion: lost
              ? 'check that the Gateway runs (agentmail status); the answer lands in your inbox: agentmail inbox'
              : 'its answer lands in your inbox: agentmail inbox; or wait longer: --wait <seconds>',
            extra: { mail_id: sent.mail_id, gateway_lost: lost },
          },
        ),
      );
    }, options.timeoutMs);
  });
  try {
    const id = await Promise.race([answered, timedOut]);
    // The requests an open found are shown before the answer.
    await checked;
    return (await api.mail(id)).mail;
  } finally {
    clearTimeout(timer);
    stop.abort();
    await stream.close();
  }
}

/** The line `send --wait` prints for a permission request of the mail's session (stderr). */
export function requestLine(request: WaitRequest): string {
  const what = truncate(oneLine(request.question), 120);
  const how =
    request.kind === 'question'
      ? `agentmail answer ${request.request_id} <answer>`
      : `agentmail approve ${request.request_id} | agentmail deny ${request.request_id}`;
  return `${oneLine(request.agent_name)} asks: ${what} (still waiting; answer: ${how})`;
}
