/** Waiting permission and question requests, with the opt-in for browser notifications. */
import { useState } from 'preact/hooks';
import { RequestList } from '../components/request-list.js';
import { enableNotifications, notificationState } from '../notify.js';
import { t } from '../texts.js';

export function RequestsPage(props: { focus?: string | undefined; onSignedOut: () => void }) {
  const [state, setState] = useState(notificationState());
  return (
    <>
      <div class="page-head">
        <h1>{t('web.requests.title')}</h1>
        {state === 'default' ? (
          <button type="button" onClick={async () => setState(await enableNotifications())}>
            {t('web.notify.enable')}
          </button>
        ) : (
          <span class="muted small">{t(`web.notify.state.${state}`)}</span>
        )}
      </div>
      <RequestList focus={props.focus} onSignedOut={props.onSignedOut} empty={t('web.requests.none')} />
    </>
  );
}
