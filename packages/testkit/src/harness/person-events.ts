/**
 * A person's event stream `GET /api/v1/me/events` (new mail, permission requests and decisions),
 * read with undici and eventsource-parser and decoded with the protocol's person event schemas.
 * shared-policy's SseClient is not used: it decodes agent events only, and would skip
 * `permission_request` as unknown.
 *
 * The stream is opened with `Last-Event-ID: 0`, so every event of the person since the Gateway
 * started is replayed: nothing that happened before the harness connected can be missed. A
 * dropped connection is reopened with the last id seen (G-22).
 */
import {
  PERSON_EVENT_SCHEMAS,
  type PermissionDecisionEvent,
  type PermissionRequestEvent,
  type PersonEventType,
  type PersonNewMailEvent,
  routePath,
} from '@agentmail/protocol';
import { createParser, type EventSourceMessage } from 'eventsource-parser';
import { request } from 'undici';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import type { ApiTarget } from './api.js';
import { type EventCheck, EventLog } from './event-log.js';

/** A decoded event of a person's stream, discriminated by `type`. */
export type PersonEvent =
  | { type: 'new_mail'; id: string; data: PersonNewMailEvent }
  | { type: 'permission_request'; id: string; data: PermissionRequestEvent }
  | { type: 'permission_decision'; id: string; data: PermissionDecisionEvent };

function describeEvent(e: PersonEvent): string {
  if (e.type === 'new_mail')
    return `#${e.id} new_mail ${e.data.mail_id} from ${e.data.from_name} "${e.data.subject}" in_reply_to=${e.data.in_reply_to || '-'}`;
  if (e.type === 'permission_request')
    return `#${e.id} permission_request ${e.data.request_id} ${e.data.kind} "${e.data.question.slice(0, 60)}"`;
  return `#${e.id} permission_decision ${e.data.request_id} ${e.data.decision}`;
}

/** Reconnects in a row before the stream gives up (each after the previous one failed). @default 20 */
export const PERSON_EVENTS_MAX_RECONNECTS = 20;

/** The open event stream of one person; see the module comment. */
export class PersonEvents {
  readonly #target: ApiTarget;
  readonly #label: string;
  readonly #log: EventLog<PersonEvent>;
  readonly #abort = new AbortController();
  #cursor = '0';
  #ready: Promise<void>;
  #done: Promise<void>;

  private constructor(target: ApiTarget, label: string) {
    this.#target = target;
    this.#label = label;
    this.#log = new EventLog<PersonEvent>(label, describeEvent);
    let markReady: () => void = () => {};
    let failReady: (error: Error) => void = () => {};
    this.#ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    this.#ready.catch(() => {}); // observed through open()
    this.#done = this.#run(markReady, failReady);
  }

  /**
   * Opens the stream and resolves once the Gateway accepted it (status 200 and its first comment).
   * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway refuses the stream.
   */
  static async open(target: ApiTarget, label: string): Promise<PersonEvents> {
    const events = new PersonEvents(target, label);
    try {
      await events.#ready;
    } catch (error) {
      await events.close();
      throw error;
    }
    return events;
  }

  /** Every event received so far, oldest first. */
  events(): readonly PersonEvent[] {
    return this.#log.all();
  }

  /**
   * Runs `check` on every event in order, the ones already received first, and resolves with the
   * first value it returns; see {@link EventLog.waitFor}.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT` (the message lists the events seen), `AM_TESTKIT_STACK_CLOSED`.
   */
  waitFor<T>(check: EventCheck<PersonEvent, T>, timeoutMs: number, what: string): Promise<T> {
    return this.#log.waitFor(check, timeoutMs, what);
  }

  /** Closes the stream; pending waits reject with `AM_TESTKIT_STACK_CLOSED`. Idempotent. */
  async close(): Promise<void> {
    this.#abort.abort();
    this.#log.close();
    await this.#done;
  }

  #dispatch(message: EventSourceMessage): void {
    if (message.id !== undefined) this.#cursor = message.id;
    const type = message.event as PersonEventType | undefined;
    if (type === undefined || !Object.hasOwn(PERSON_EVENT_SCHEMAS, type)) {
      this.#log.problem(`unknown event type ${JSON.stringify(message.event)}`);
      return;
    }
    let json: unknown;
    try {
      json = JSON.parse(message.data);
    } catch {
      this.#log.problem(`event ${message.id} ${type}: data is not JSON`);
      return;
    }
    const parsed = PERSON_EVENT_SCHEMAS[type].safeParse(json);
    if (!parsed.success) {
      this.#log.problem(`event ${message.id} ${type} breaks the contract: ${parsed.error.message}`);
      return;
    }
    this.#log.push({ type, id: message.id ?? '', data: parsed.data } as PersonEvent);
  }

  async #run(markReady: () => void, failReady: (error: Error) => void): Promise<void> {
    const signal = this.#abort.signal;
    let failures = 0;
    let opened = false;
    while (!signal.aborted && failures <= PERSON_EVENTS_MAX_RECONNECTS) {
      try {
        const res = await request(new URL(routePath('meEvents'), this.#target.url), {
          method: 'GET',
          signal,
          bodyTimeout: 0,
          headers: {
            authorization: `Bearer ${this.#target.token}`,
            accept: 'text/event-stream',
            'last-event-id': this.#cursor,
          },
        });
        if (res.statusCode !== 200) {
          const text = await res.body.text();
          const error = new TestkitError(
            TESTKIT_ERROR_CODES.API,
            `${this.#label}: GET ${routePath('meEvents')} answered HTTP ${res.statusCode}: ${text}`,
          );
          if (!opened) {
            failReady(error);
            return;
          }
          this.#log.problem(error.message);
          failures++;
          continue;
        }
        const decoder = new TextDecoder();
        const parser = createParser({
          onEvent: (message) => this.#dispatch(message),
          onComment: () => {
            opened = true;
            failures = 0;
            markReady();
          },
        });
        for await (const chunk of res.body) parser.feed(decoder.decode(chunk as Buffer, { stream: true }));
        if (!signal.aborted) this.#log.problem('the Gateway ended the stream; reconnecting');
      } catch (error) {
        if (signal.aborted) break;
        if (!opened) {
          failReady(error instanceof Error ? error : new Error(String(error)));
          return;
        }
        this.#log.problem(`stream failed (${String(error)}); reconnecting`);
      }
      failures++;
    }
    this.#log.close();
  }
}
