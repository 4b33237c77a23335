/**
 * A person of the test stack: their mail client (send, inbox, thread, attachments, permission
 * decisions) on the `/api/v1/me` routes, and waits driven by their event stream.
 */
import type {
  AttachmentInfo,
  Contact,
  DecideResponse,
  InboxResponse,
  Mail,
  PermissionMode,
  PermissionView,
  PersonSendRequest,
  ThreadResponse,
} from '@agentmail/protocol';
import type { PersonApi } from '@agentmail/shared-policy/client';
import { TESTKIT_ERROR_CODES, TestkitError } from '../errors.js';
import { type Download, type FileSpec, personApi, readDownload, uploadFileOf } from './api.js';
import { PersonEvents } from './person-events.js';

/** Default time {@link PersonClient.awaitMail} and {@link PersonClient.awaitPermission} wait, in ms. @default 30_000 */
export const DEFAULT_AWAIT_TIMEOUT_MS = 30_000;

/** What {@link PersonClient.send} sends. */
export interface SendOptions {
  subject: string;
  body: string;
  /** Files to upload and attach (in order), or ids of attachments uploaded before. */
  attachments?: readonly (FileSpec | string)[];
  cc?: readonly string[];
  /** Id of the mail this answers. */
  replyTo?: string;
  /** Mode of a new session (SPEC P-1). @default the Gateway's default, `workspace` */
  permissionMode?: PermissionMode;
  maxRounds?: number;
}

/** A mail a person sent: the Gateway's answer plus the attachments it carries. */
export interface SentMail {
  mail_id: string;
  /** The thread's session (the agent's session the mail went into). */
  session_id: string;
  session_alias: string;
  /** The primary recipient's address in that session (never `.new`, G-6). */
  address: string;
  attachments: AttachmentInfo[];
}

/** Conditions of {@link PersonClient.awaitMail}; all given ones must hold. */
export interface AwaitMailOptions {
  /** The mail answers this one (`in_reply_to`). */
  inReplyTo?: string;
  /** The mail is in the same thread (session) as this one. */
  threadOf?: string;
  /** Sender name. */
  from?: string;
  /** Any other condition on the whole mail. */
  where?: (mail: Mail) => boolean;
  /** Also accept permission and question mails. @default false */
  includePermissionMails?: boolean;
  /** Skip these mail ids (e.g. replies already seen). */
  exclude?: Iterable<string>;
  /** @default DEFAULT_AWAIT_TIMEOUT_MS */
  timeoutMs?: number;
}

/** Conditions of {@link PersonClient.awaitPermission}. */
export interface AwaitPermissionOptions {
  /** Any condition on the request as the person sees it. */
  where?: (request: PermissionView) => boolean;
  /** Also return a request an earlier `awaitPermission` returned. @default false */
  includeSeen?: boolean;
  /** @default DEFAULT_AWAIT_TIMEOUT_MS */
  timeoutMs?: number;
}

/** A person's decision on an approval request: once, always (for the session and tool), or no. */
export type Decision = 'approve' | 'always' | 'deny';

function describeAwait(options: AwaitMailOptions): string {
  const parts = [
    options.inReplyTo === undefined ? '' : `in reply to ${options.inReplyTo}`,
    options.threadOf === undefined ? '' : `in the thread of ${options.threadOf}`,
    options.from === undefined ? '' : `from ${options.from}`,
    options.where === undefined ? '' : 'matching the given condition',
  ].filter((p) => p !== '');
  return `a mail${parts.length === 0 ? '' : ` ${parts.join(', ')}`}`;
}

/** A person: user token, mail client and event stream. Create through the stack (`stack.addPerson`). */
export class PersonClient {
  readonly name: string;
  readonly token: string;
  /** The person's event stream, open since the person was created. */
  readonly events: PersonEvents;
  /** shared-policy's person API with the person's token (refusals are `AM_TESTKIT_API`). */
  readonly api: PersonApi;
  readonly #permissionsSeen = new Set<string>();

  private constructor(name: string, token: string, api: PersonApi, events: PersonEvents) {
    this.name = name;
    this.token = token;
    this.api = api;
    this.events = events;
  }

  /**
   * A client for the person with `token`; opens their event stream first.
   * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway refuses the token.
   */
  static async connect(gatewayUrl: string, name: string, token: string): Promise<PersonClient> {
    const target = { url: gatewayUrl, token };
    return new PersonClient(
      name,
      token,
      personApi(target),
      await PersonEvents.open(target, `person ${name}`),
    );
  }

  /**
   * Sends a mail (`POST /me/mail/send`), uploading `attachments` given as files first.
   * @throws {TestkitError} `AM_TESTKIT_API` when the Gateway refuses.
   */
  async send(to: string, options: SendOptions): Promise<SentMail> {
    const attachments: AttachmentInfo[] = [];
    const ids: string[] = [];
    for (const item of options.attachments ?? []) {
      if (typeof item === 'string') ids.push(item);
      else {
        const info = await this.upload(item);
        attachments.push(info);
        ids.push(info.id);
      }
    }
    const body: PersonSendRequest = {
      to,
      subject: options.subject,
      body: options.body,
      ...(options.cc === undefined ? {} : { cc: [...options.cc] }),
      ...(options.replyTo === undefined ? {} : { reply_to: options.replyTo }),
      ...(ids.length === 0 ? {} : { attachment_ids: ids }),
      ...(options.permissionMode === undefined ? {} : { permission_mode: options.permissionMode }),
      ...(options.maxRounds === undefined ? {} : { max_rounds: options.maxRounds }),
    };
    const sent = await this.api.send(body);
    if (sent.status !== 'sent')
      throw new TestkitError(TESTKIT_ERROR_CODES.API, `a person's send answered ${JSON.stringify(sent)}`);
    return {
      mail_id: sent.mail_id,
      session_id: sent.session_id,
      session_alias: sent.session_alias,
      address: sent.address,
      attachments,
    };
  }

  /** Uploads one file (`POST /me/attachments`). @throws {TestkitError} `AM_TESTKIT_API` */
  async upload(file: FileSpec): Promise<AttachmentInfo> {
    const { blob, filename } = uploadFileOf(file);
    return (await this.api.upload(blob, filename)).attachment;
  }

  /** Downloads an attachment's bytes (`GET /me/attachments/{id}`). @throws {TestkitError} `AM_TESTKIT_API` */
  async download(attachmentId: string): Promise<Download> {
    return readDownload(await this.api.download(attachmentId));
  }

  /**
   * One inbox page (`GET /me/inbox`); `status` defaults to `all` here (the Gateway's default is
   * unread), `limit` to 100.
   */
  inbox(
    query: { status?: 'unread' | 'all'; limit?: number; session_id?: string } = {},
  ): Promise<InboxResponse> {
    return this.api.inbox({
      status: query.status ?? 'all',
      limit: query.limit ?? 100,
      session_id: query.session_id,
    });
  }

  /** One mail with its body (`GET /me/mail/{id}`; does not mark it read). */
  async mail(id: string): Promise<Mail> {
    return (await this.api.mail(id)).mail;
  }

  /** The whole thread of a mail, oldest first (every page of `GET /me/mail/{id}/thread`). */
  async thread(id: string): Promise<Mail[]> {
    const mails: Mail[] = [];
    let offset: number | null = 0;
    while (offset !== null) {
      const page: ThreadResponse = await this.api.thread(id, { offset, limit: 100 });
      mails.push(...page.mails);
      offset = page.next_offset;
    }
    return mails;
  }

  /** Permission and question requests addressed to the person (`GET /me/permissions`). @default status 'all' */
  async permissions(status: 'pending' | 'all' = 'all'): Promise<PermissionView[]> {
    return (await this.api.permissions(status)).permissions;
  }

  /** Agents (online, platform, last seen) and people as the Gateway lists them (`GET /me/contacts`, SPEC G-25). */
  async contacts(): Promise<Contact[]> {
    return (await this.api.contacts()).contacts;
  }

  /** Decides an approval request (`POST /me/permissions/{id}/decide`). @throws {TestkitError} `AM_TESTKIT_API` */
  decide(requestId: string, decision: Decision, note?: string): Promise<DecideResponse> {
    return this.api.decide(requestId, { decision, ...(note === undefined ? {} : { note }) });
  }

  /** Answers a question request with option labels or free text. @throws {TestkitError} `AM_TESTKIT_API` */
  answer(requestId: string, answers: readonly string[], note?: string): Promise<DecideResponse> {
    return this.api.decide(requestId, { answers: [...answers], ...(note === undefined ? {} : { note }) });
  }

  /**
   * The first mail to this person (already received or to come) from someone else that meets
   * every condition, read in full. Permission mails are skipped unless asked for. Event-driven
   * through the person's stream.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT` (the message lists the events seen).
   */
  async awaitMail(options: AwaitMailOptions = {}): Promise<Mail> {
    const exclude = new Set(options.exclude ?? []);
    let threadSession: string | undefined;
    if (options.threadOf !== undefined) threadSession = (await this.mail(options.threadOf)).session_id;
    return this.events.waitFor<Mail>(
      async (event) => {
        if (event.type !== 'new_mail') return undefined;
        const e = event.data;
        if (exclude.has(e.mail_id)) return undefined;
        if (e.from_human && e.from_name === this.name) return undefined;
        if (options.from !== undefined && e.from_name !== options.from) return undefined;
        if (options.inReplyTo !== undefined && e.in_reply_to !== options.inReplyTo) return undefined;
        if (threadSession !== undefined && e.session_id !== threadSession) return undefined;
        const mail = await this.mail(e.mail_id);
        if (mail.is_permission && options.includePermissionMails !== true) return undefined;
        if (options.where !== undefined && !options.where(mail)) return undefined;
        return mail;
      },
      options.timeoutMs ?? DEFAULT_AWAIT_TIMEOUT_MS,
      describeAwait(options),
    );
  }

  /**
   * The next permission or question request to this person (one that no earlier call returned,
   * unless `includeSeen`), as listed by `GET /me/permissions`. Event-driven.
   * @throws {TestkitError} `AM_TESTKIT_WAIT_TIMEOUT` (the message lists the events seen).
   */
  async awaitPermission(options: AwaitPermissionOptions = {}): Promise<PermissionView> {
    const view = await this.events.waitFor<PermissionView>(
      async (event) => {
        if (event.type !== 'permission_request') return undefined;
        const id = event.data.request_id;
        if (options.includeSeen !== true && this.#permissionsSeen.has(id)) return undefined;
        const found = (await this.permissions('all')).find((p) => p.id === id);
        if (found === undefined) return undefined;
        if (options.where !== undefined && !options.where(found)) return undefined;
        return found;
      },
      options.timeoutMs ?? DEFAULT_AWAIT_TIMEOUT_MS,
      'a permission request',
    );
    this.#permissionsSeen.add(view.id);
    return view;
  }

  /** Closes the event stream. */
  close(): Promise<void> {
    return this.events.close();
  }
}
