/**
 * The shapes a send passes between its steps (mail-send.ts runs them): the request, its
 * recipients, the mail it replies to and the sessions it is written in.
 */
import type { Address, MailKind, PermissionMode, SendMailResponse } from '@agentmail/protocol';
import type { Actor, SessionRow } from './context.js';
import type { mailRow } from './mail-access.js';
import type { PERMISSION_KIND } from './mail-views.js';

/** A send request, from an agent (`POST /mail/send`) or a person (`POST /me/mail/send`). */
export interface SendInput {
  to: string;
  subject: string;
  body: string;
  cc?: readonly string[] | undefined;
  reply_to?: string | undefined;
  /** The sender's own session (agents only): overrides the session of `reply_to` and the default. */
  from_session_id?: string | undefined;
  session_alias?: string | undefined;
  attachment_ids?: readonly string[] | undefined;
  max_rounds?: number | undefined;
  relay?: 'summary' | undefined;
  relay_key?: string | undefined;
  kind?: MailKind | undefined;
  permission_mode?: PermissionMode | undefined;
  /** Internal: store as a question mail (SPEC B-20 skips them). */
  internalKind?: typeof PERMISSION_KIND;
  /** Internal: attachment ids already checked (forward). */
  trustedAttachmentIds?: readonly string[];
}

/** A send's outcome. */
export type SendResult = SendMailResponse;

/** One recipient of a send; `session` is set once the sessions are resolved. */
export interface Recipient {
  name: string;
  human: boolean;
  userId: string | null;
  role: 'to' | 'cc';
  address: Address;
  field: string;
  session?: SessionRow;
  /** The session existed before this send (a reply's, a default or an alias one). */
  existingSession?: boolean;
}

/** The mail a send replies to, its deliveries, and the session the sender has for it. */
export interface ReplyParent extends NonNullable<Awaited<ReturnType<typeof mailRow>>> {
  /** The sender's session of the parent (the one it wrote it in or received it in). */
  actorSessionId: string;
}

/** Where a send is written. */
export interface SendSessions {
  /** An agent sender's session (from address, round budget, hop-limit run); none for a person. */
  sender: SessionRow | undefined;
  /** The session the mail is stored in; people recipients see it there. */
  thread: SessionRow;
}

/** A send once its recipients and sessions are known: what storing and announcing it needs. */
export interface ResolvedSend {
  actor: Actor;
  input: SendInput;
  /** The send's clock reading (ms). */
  now: number;
  parent: ReplyParent | undefined;
  /** Every recipient, each with its session. */
  recipients: readonly Recipient[];
  sessions: SendSessions;
}
