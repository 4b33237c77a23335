/** Where a mail's turn runs (SPEC B-4): the session to resume, or a new one. */
import { messageOf } from '@agentmail/shared-policy';
import type { PlatformSessionRef, TurnAdapter } from './adapter.js';
import type { MailTurnInput } from './turn-input.js';

/** Where a mail's turn runs (B-4): the session to resume, or none (a new one). */
export type Location =
  | { kind: 'missing'; cause: string }
  | { kind: 'broken'; cause: string }
  | { kind: 'resume'; session: PlatformSessionRef; adopted: boolean; cwd?: string }
  | { kind: 'new' };

/**
 * Step 1 of a turn (B-4): where it runs. An adopted session by its platform id (gone or
 * unreadable → `missing`, never a fresh session); a mail session by its binding (or the host's
 * legacy one), a gone one unbound (→ `new`); no binding → `new`. A failing store → `broken`.
 * Never throws.
 */
export async function locateSession(
  input: Pick<MailTurnInput, 'mail' | 'bindings' | 'emit'>,
  adapter: TurnAdapter,
): Promise<Location> {
  const { mail, bindings, emit } = input;
  const platform = adapter.platform;
  // B-4: an adopted session is opened by its platform id and never silently replaced.
  if (mail.platform_session_id) {
    const session = { platformSessionId: mail.platform_session_id };
    try {
      const found = await adapter.findSession(session, { adopted: true });
      if (!found)
        return {
          kind: 'missing',
          cause: `the ${platform} session ${mail.platform_session_id} was not found (deleted, or on another ${platform} installation)`,
        };
      return { kind: 'resume', session, adopted: true, ...(found.cwd ? { cwd: found.cwd } : {}) };
    } catch (err) {
      return { kind: 'missing', cause: messageOf(err) };
    }
  }
  try {
    let bound: PlatformSessionRef | undefined = await bindings.get(mail.session_id);
    if (!bound && adapter.legacyBinding) {
      bound = await adapter.legacyBinding(mail.session_id);
      if (bound) await bindings.bind(mail.session_id, bound);
    }
    if (!bound) return { kind: 'new' };
    const session: PlatformSessionRef = {
      platformSessionId: bound.platformSessionId,
      ...(bound.locator === undefined ? {} : { locator: bound.locator }),
    };
    const found = await adapter.findSession(session, { adopted: false });
    if (found) return { kind: 'resume', session, adopted: false, ...(found.cwd ? { cwd: found.cwd } : {}) };
    emit({
      type: 'binding_gone',
      mail_id: mail.mail_id,
      session_id: mail.session_id,
      platform_session_id: session.platformSessionId,
    });
    await bindings.unbind(mail.session_id);
    return { kind: 'new' };
  } catch (err) {
    return { kind: 'broken', cause: `the session could not be opened: ${messageOf(err)}` };
  }
}
