/**
 * The live list of waiting requests: reloaded on every request, decision and withdrawal event, so
 * only requests someone still waits for are shown. A request withdrawn while the person looks at
 * it goes away with a notice.
 */
import type { PermissionView } from '@agentmail/protocol';
import { endedReasonText } from '@agentmail/shared-policy';
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../api.js';
import { live, toast, useLiveTick } from '../bus.js';
import { useLoad } from '../load.js';
import { LOCALE, t } from '../texts.js';
import { RequestCard } from './request-card.js';

const REQUEST_EVENTS = new Set(['permission_request', 'permission_decision', 'permission_withdrawn']);

/** Props of {@link RequestList}. */
export interface RequestListProps {
  onSignedOut: () => void;
  compact?: boolean;
  /** Request id to scroll to and highlight. */
  focus?: string | undefined;
  /** Only the requests of this question mail (thread view). */
  mailId?: string;
  /** Shown when nothing waits; nothing at all when omitted. */
  empty?: string;
}

export function RequestList(props: RequestListProps) {
  const tick = useLiveTick((s) => REQUEST_EVENTS.has(s.type));
  const [local, setLocal] = useState(0);
  const loaded = useLoad(() => api.permissions('pending'), [tick, local], props.onSignedOut);
  const focusRef = useRef<string | undefined>(undefined);

  useEffect(
    () =>
      live.subscribe((s) => {
        if (s.type === 'permission_withdrawn')
          toast(t('web.request.withdrawn_notice', { why: endedReasonText(s.data.reason, LOCALE) }));
      }),
    [],
  );

  useEffect(() => {
    if (props.focus === undefined || focusRef.current === props.focus || loaded.data === undefined) return;
    focusRef.current = props.focus;
    document.getElementById(`request-${props.focus}`)?.scrollIntoView({ block: 'center' });
  }, [props.focus, loaded.data]);

  const list: PermissionView[] = (loaded.data?.permissions ?? []).filter(
    (r) => props.mailId === undefined || r.mail_id === props.mailId,
  );
  if (loaded.error && loaded.data === undefined) return <p class="error">{loaded.error}</p>;
  if (list.length === 0) return props.empty ? <p class="muted empty">{props.empty}</p> : null;
  return (
    <section class="requests" aria-label={t('web.nav.requests')}>
      {list.map((r) => (
        <RequestCard
          key={r.id}
          request={r}
          compact={props.compact ?? false}
          focused={r.id === props.focus}
          onDone={() => setLocal((n) => n + 1)}
          onSignedOut={props.onSignedOut}
        />
      ))}
    </section>
  );
}
