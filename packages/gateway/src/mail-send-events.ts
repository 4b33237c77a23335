/**
 * Announcing a stored send: one `new_mail` event per recipient (SPEC G-6, G-20, G-30), on the
 * person's or the agent's stream, appended in the send's transaction and published after it.
 */
import type { NewMailEvent, PersonNewMailEvent } from '@agentmail/protocol';
import type { Db, GatewayContext } from './context.js';
import { agentStream, type EventBatch, userStream } from './event-hub.js';
import { wireMode } from './mail-send-sessions.js';
import type { StoredMail } from './mail-send-store.js';
import type { ResolvedSend } from './mail-send-types.js';
import { addressIn } from './sessions.js';

/** How each agent's bridge enforces permission modes, from its last heartbeat (SPEC P-8). */
async function enforcementOf(trx: Db, names: readonly string[]): Promise<Map<string, string | null>> {
  const enforcement = new Map<string, string | null>();
  for (const name of names) {
    if (enforcement.has(name)) continue;
    const a = await trx
      .selectFrom('agents')
      .select('mode_enforcement')
      .where('name', '=', name)
      .executeTakeFirst();
    enforcement.set(name, a?.mode_enforcement ?? null);
  }
  return enforcement;
}

/** Append the `new_mail` events of a stored send to `batch`. */
export async function appendNewMailEvents(
  ctx: GatewayContext,
  trx: Db,
  batch: EventBatch,
  send: ResolvedSend,
  stored: StoredMail,
): Promise<void> {
  const { actor, input, parent, recipients } = send;
  const isPerson = actor.kind === 'user';
  const enforcement = await enforcementOf(
    trx,
    recipients.filter((r) => !r.human).map((r) => r.name),
  );
  for (const r of recipients) {
    const s = r.session ?? send.sessions.thread;
    if (r.human) {
      if (!r.userId) continue;
      const payload: PersonNewMailEvent = {
        mail_id: stored.mailId,
        session_id: s.id,
        from_name: actor.name,
        from_human: isPerson,
        subject: input.subject,
        in_reply_to: parent?.mail.id ?? '',
      };
      await ctx.hub.append(trx, batch, userStream(r.userId), 'new_mail', payload);
      continue;
    }
    const payload: NewMailEvent = {
      mail_id: stored.mailId,
      session_id: s.id,
      from_name: actor.name,
      from_human: isPerson,
      to_workspace: s.path,
      subject: input.subject,
      in_reply_to: parent?.mail.id ?? '',
      parent_from: parent?.mail.from_name ?? '',
      permission_mode: wireMode(s.permission_mode),
      permission_enforcement: enforcement.get(r.name) === 'native' ? 'native' : 'advisory',
      session_alias: s.alias ?? '',
      reply_address: stored.fromAddress,
      self_address: addressIn(r.name, false, s),
      platform_session_id: s.platform_id ?? '',
      kind: input.kind ?? 'mail',
    };
    await ctx.hub.append(trx, batch, agentStream(r.name), 'new_mail', payload);
  }
}
