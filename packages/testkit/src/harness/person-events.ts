/**
 * A person's event stream `GET /api/v1/me/events` (new mail, permission requests and decisions),
 * read with shared-policy's SseClient over the protocol's person event schemas.
 *
 * The stream is opened with `Last-Event-ID: 0`, so every event of the person since the Gateway
 * started is replayed: nothing that happened before the harness connected can be missed. A
 * dropped connection is reopened with the last id seen (G-22).
 */
import { PERSON_EVENT_SCHEMAS, type PersonEvent, routePath } from '@agentmail/protocol';
import type { AgentMailError } from '@agentmail/shared-policy';
import { SseClient } from '@agentmail/shared-policy/client';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import type { ApiTarget } from './api.js';
import { type EventCheck, EventLog } from './event-log.js';

export type { PersonEvent } from '@agentmail/protocol';

function describeEvent(e: PersonEvent): string {
  if (e.type === 'new_mail')
    return `#${e.id} new_mail ${e.data.mail_id} from ${e.data.from_name} "${e.data.subject}" in_reply_to=${e.data.in_reply_to || '-'}`;
  if (e.type === 'permission_request')
    return `#${e.id} permission_request ${e.data.request_id} ${e.data.kind} "${e.data.question.slice(0, 60)}"`;
  if (e.type === 'permission_withdrawn')
    return `#${e.id} permission_withdrawn ${e.data.request_id} ${e.data.status} (${e.data.reason})`;
  return `#${e.id} permission_decision ${e.data.request_id} ${e.data.decision}`;
}

/** Reconnects in a row before the stream gives up (each after the previous one failed). @default 20 */
export const PERSON_EVENTS_MAX_RECONNECTS = 20;

/** The open event stream of one person; see the module comment. */
export class PersonEvents {
  readonly #log: EventLog<PersonEvent>;
  readonly #sse: SseClient<typeof PERSON_EVENT_SCHEMAS>;
  readonly #opened: Promise<void>;
  #done: Promise<void> | undefined;

  private constructor(target: ApiTarget, label: string) {
    const log = new EventLog<PersonEvent>(label, describeEvent);
    this.#log = log;
    let opened = false;
    let failures = 0;
    let markOpen: () => void = () => {};
    let failOpen: (error: Error) => void = () => {};
    this.#opened = new Promise<void>((resolve, reject) => {
      markOpen = resolve;
      failOpen = reject;
    });
    this.#opened.catch(() => {}); // observed through open()
    const connectionLost = (error: AgentMailError): void => {
      if (!opened) {
        failOpen(new TestkitError(TESTKIT_ERROR_CODES.API, `${label}: ${error.message}`, { cause: error }));
        void this.#sse.close();
        return;
      }
      log.problem(error.message);
      if (++failures > PERSON_EVENTS_MAX_RECONNECTS) {
        log.problem(`gave up after ${PERSON_EVENTS_MAX_RECONNECTS} failed reconnects`);
        log.close();
        void this.#sse.close();
      }
    };
    this.#sse = new SseClient({
      url: target.url,
      key: target.token,
      path: routePath('meEvents'),
      events: PERSON_EVENT_SCHEMAS,
      lastEventId: '0',
      initialBackoffMs: 50,
      maxBackoffMs: 1_000,
      onOpen: () => {
        opened = true;
        failures = 0;
        markOpen();
      },
      onEvent: (event) => log.push(event),
      onError: (error) => {
        if (error.code === 'AM_SSE_HTTP' || error.code === 'AM_SSE_CONNECTION') connectionLost(error);
        else log.problem(error.message);
      },
    });
  }

  /**
   * Opens the stream and resolves once the Gateway accepted it (status 200, an event stream).
   * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway refuses the stream or cannot be reached.
   */
  static async open(target: ApiTarget, label: string): Promise<PersonEvents> {
    const events = new PersonEvents(target, label);
    events.#done = events.#sse.start();
    try {
      await events.#opened;
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
    this.#log.close();
    await this.#sse.close();
    await this.#done;
  }
}
