/**
 * The mailbox of a further agent of the stack (a peer that mails the bridge's agent): its
 * shared-policy Gateway client, and waits on mail to it driven by its own event stream, read with
 * shared-policy's SseClient from the first stored event on (`Last-Event-ID: 0`).
 */
import type { Mail, NewMailEvent } from '@agentmail/protocol';
import { GatewayClient, SseClient } from '@agentmail/shared-policy/client';
import { EventLog } from './event-log.js';
import { DEFAULT_AWAIT_TIMEOUT_MS } from './person.js';

/** Conditions of {@link AgentMailbox.awaitMail}; all given ones must hold. */
export interface AwaitAgentMailOptions {
  /** Sender name. */
  from?: string;
  /** The mail answers this one (`in_reply_to`). */
  inReplyTo?: string;
  /** Any other condition on the whole mail. */
  where?: (mail: Mail) => boolean;
  /** @default DEFAULT_AWAIT_TIMEOUT_MS */
  timeoutMs?: number;
}

/** A further agent: name, key, client and mail waits. Create through the stack (`stack.addAgent`). */
export class AgentMailbox {
  readonly name: string;
  readonly key: string;
  /** shared-policy's Gateway client with the agent's key, direct to the Gateway. */
  readonly client: GatewayClient;
  readonly #log: EventLog<NewMailEvent>;
  readonly #sse: SseClient;

  constructor(gatewayUrl: string, name: string, key: string) {
    this.name = name;
    this.key = key;
    this.client = new GatewayClient({ baseUrl: gatewayUrl, key });
    const log = new EventLog<NewMailEvent>(
      `agent ${name}`,
      (e) => `new_mail ${e.mail_id} from ${e.from_name} "${e.subject}" in_reply_to=${e.in_reply_to || '-'}`,
    );
    this.#log = log;
    this.#sse = new SseClient({
      url: gatewayUrl,
      key,
      lastEventId: '0',
      initialBackoffMs: 100,
      maxBackoffMs: 1_000,
      onEvent: (event) => {
        if (event.type === 'new_mail') log.push(event.data);
      },
      onError: (error) => log.problem(error.message),
    });
    void this.#sse.start();
  }

  /** `new_mail` events received so far, oldest first. */
  events(): readonly NewMailEvent[] {
    return this.#log.all();
  }

  /**
   * The first mail to this agent (already received or to come) meeting every condition, read in
   * full (`GET /agent/mail/{id}`). Event-driven.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT` (the message lists the events seen).
   */
  awaitMail(options: AwaitAgentMailOptions = {}): Promise<Mail> {
    return this.#log.waitFor<Mail>(
      async (event) => {
        if (options.from !== undefined && event.from_name !== options.from) return undefined;
        if (options.inReplyTo !== undefined && event.in_reply_to !== options.inReplyTo) return undefined;
        const mail = await this.client.mail(event.mail_id);
        if (options.where !== undefined && !options.where(mail)) return undefined;
        return mail;
      },
      options.timeoutMs ?? DEFAULT_AWAIT_TIMEOUT_MS,
      `a mail${options.from === undefined ? '' : ` from ${options.from}`}${options.inReplyTo === undefined ? '' : ` in reply to ${options.inReplyTo}`}`,
    );
  }

  /** Every mail of the agent's inbox (read and unread), up to 100. */
  async inbox(): Promise<Mail[]> {
    const page = await this.client.inbox({ status: 'all', limit: 100 });
    return Promise.all(page.mails.map((m) => this.client.mail(m.id)));
  }

  /** Closes the event stream; pending waits reject with `AM_TESTKIT_STACK_CLOSED`. */
  async close(): Promise<void> {
    this.#log.close();
    await this.#sse.close();
  }
}
