/**
 * Catch-up delivers inbox items, turns read `new_mail` events: this maps one onto the other
 * (see SPEC B-20, G-20), so a backlog mail runs exactly like a live one.
 */
import { type Mail, type MailSummary, type NewMailEvent, parseAddress } from '@agentmail/protocol';

function pathOf(address: string): string {
  try {
    return parseAddress(address).path;
  } catch {
    return '';
  }
}

/**
 * The `new_mail` event of an inbox item (see SPEC B-20, G-20). `to_workspace` is the path of
 * the recipient's own address; `parent_from` comes from the full mail when given (else '');
 * `platform_session_id` comes from the inbox item (adopted sessions, G-37), unless the bridge
 * passes one.
 * `permission_enforcement` is `advisory` (the inbox does not carry it; turns do not read it).
 * Pure; never throws.
 * @example backlogEvent(summary, { mail: await client.mail(summary.id) })
 */
export function backlogEvent(
  summary: MailSummary,
  extra: { mail?: Pick<Mail, 'parent_from'>; platformSessionId?: string } = {},
): NewMailEvent {
  return {
    mail_id: summary.id,
    session_id: summary.session_id,
    from_name: summary.from_name,
    from_human: summary.from_human,
    to_workspace: pathOf(summary.self_address),
    subject: summary.subject,
    in_reply_to: summary.in_reply_to,
    parent_from: extra.mail?.parent_from ?? '',
    permission_mode: summary.permission_mode,
    permission_enforcement: 'advisory',
    session_alias: summary.session_alias,
    reply_address: summary.reply_address,
    self_address: summary.self_address,
    platform_session_id: extra.platformSessionId ?? summary.platform_session_id ?? '',
    kind: summary.kind,
  };
}
