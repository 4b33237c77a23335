/**
 * Agents: platform, online or offline and last seen, how their bridge enforces permission modes,
 * and the sessions the person took part in with their addresses (write to one in a tap).
 */
import { formatAddress } from '@agentmail/protocol';
import { api } from '../api.js';
import { useLiveTick } from '../bus.js';
import { useLoad } from '../load.js';
import { href } from '../route.js';
import { t, when } from '../texts.js';

export function AgentsPage(props: { onSignedOut: () => void }) {
  const tick = useLiveTick((s) => s.type === 'new_mail');
  const loaded = useLoad(() => api.agents(), [tick], props.onSignedOut);
  return (
    <>
      <div class="page-head">
        <h1>{t('web.agents.title')}</h1>
      </div>
      {loaded.error ? <p class="error">{loaded.error}</p> : null}
      {loaded.data && loaded.data.agents.length === 0 ? (
        <p class="muted empty">{t('web.agents.none')}</p>
      ) : null}
      {(loaded.data?.agents ?? []).map((a) => (
        <article class="card agent" key={a.name} data-agent={a.name}>
          <header>
            <span class={`dot ${a.online ? 'online' : 'offline'}`} aria-hidden="true" />
            <strong>{a.name}</strong>
            <span class="pill">{a.platform}</span>
            <span class="muted">{t(a.online ? 'web.agents.online' : 'web.agents.offline')}</span>
            <span class="muted right">
              {a.last_seen
                ? t('web.agents.last_seen', { when: when(a.last_seen) })
                : t('web.agents.never_seen')}
            </span>
          </header>
          <p class="small">
            {t('web.agents.enforcement', {
              mode:
                a.mode_enforcement === null
                  ? t('web.agents.enforcement_unknown')
                  : t(`web.agents.enforcement_${a.mode_enforcement}`),
            })}
          </p>
          {a.sandbox ? (
            <p class="small">
              {a.sandbox === 'verified'
                ? t('web.agents.sandbox_verified')
                : t('web.agents.sandbox_unverified', { reason: a.sandbox.replace(/^unverified:\s*/, '') })}
            </p>
          ) : null}
          {a.workspaces.length > 0 ? (
            <p class="small">
              {t('web.agents.workspaces')}{' '}
              {a.workspaces.map((w) => (
                <a
                  key={w}
                  class="chip"
                  href={href('compose', { to: formatAddress({ name: a.name, path: w, session: 'new' }) })}
                >
                  {w}
                </a>
              ))}
            </p>
          ) : null}
          {a.sessions.length > 0 ? (
            <table class="sessions">
              <thead>
                <tr>
                  <th>{t('web.agents.session')}</th>
                  <th>{t('web.agents.address')}</th>
                  <th>{t('web.agents.mode')}</th>
                </tr>
              </thead>
              <tbody>
                {a.sessions.map((s) => (
                  <tr key={s.id}>
                    <td>{s.alias || t('web.thread.default_session')}</td>
                    <td>
                      <a href={href('compose', { to: s.address })} class="address">
                        {s.address}
                      </a>
                    </td>
                    <td>{t(`web.mode.${s.permission_mode}`)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          ) : (
            <p class="muted small">{t('web.agents.no_sessions')}</p>
          )}
          <a
            class="button"
            href={href('compose', { to: formatAddress({ name: a.name, path: '', session: 'new' }) })}
          >
            {t('web.agents.write')}
          </a>
        </article>
      ))}
    </>
  );
}
