/**
 * The marks a mail carries in the inbox and in its thread: who wrote it (agent or person), a
 * failure mail (its turn failed, SPEC B-9), and for a permission or question mail where its request
 * stands (waiting, or the decision taken), so a decided request no longer reads as one to answer.
 */
import type { MailSummary } from '@agentmail/protocol';
import type { TextKey } from '@agentmail/shared-policy';
import { t } from '../texts.js';

/** The page's words for a request's state: the decision once decided, else the status. */
const REQUEST_STATE: Readonly<Record<string, TextKey>> = {
  approve_once: 'web.request.state.approve_once',
  approve_always: 'web.request.state.approve_always',
  deny: 'web.request.state.deny',
  answered: 'web.request.state.answered',
  withdrawn: 'web.request.state.withdrawn',
  expired: 'web.request.state.expired',
};

/** The request mark of a permission mail (its text, and the state as a data attribute), or undefined for any other mail. */
export function requestMark(mail: MailSummary): { text: string; state: string } | undefined {
  if (!mail.is_permission) return undefined;
  const r = mail.request;
  if (r === null || r === undefined || r.status === 'pending')
    return { text: t('web.inbox.request'), state: 'pending' };
  const state = r.status === 'decided' ? (r.decision ?? 'decided') : r.status;
  const key = REQUEST_STATE[state];
  return { text: key === undefined ? state : t(key), state };
}

/** The pills of a mail: agent/person, failure, request state. */
export function MailBadges(props: { mail: MailSummary }) {
  const m = props.mail;
  const request = requestMark(m);
  return (
    <>
      <span class={`pill ${m.from_human ? 'pill-person' : 'pill-agent'}`}>
        {t(m.from_human ? 'web.who.person' : 'web.who.agent')}
      </span>
      {m.failure ? <span class="pill pill-failure">{t('web.mail.failure')}</span> : null}
      {request ? (
        <span
          class={`pill ${request.state === 'pending' ? 'pill-approval' : 'pill-decided'}`}
          data-request-state={request.state}
        >
          {request.text}
        </span>
      ) : null}
    </>
  );
}
