/**
 * Admin pages: people (add one, reset a token — each new token shown once), agent keys (issue,
 * list, revoke) and, per platform, the model catalogue the agents report beside the admin's
 * ordered selection, stale entries marked (SPEC G-26).
 */
import type { AllowedModelsResponse } from '@agentmail/protocol';
import { useEffect, useState } from 'preact/hooks';
import { api } from '../api.js';
import { toast } from '../bus.js';
import { explain, isSignedOut } from '../errors.js';
import { useLoad } from '../load.js';
import { t, when } from '../texts.js';

/** A secret shown once, with a copy button. */
function Secret(props: { label: string; value: string }) {
  return (
    <div class="secret" role="status">
      <p>{props.label}</p>
      <code data-secret>{props.value}</code>
      <button type="button" onClick={() => void navigator.clipboard?.writeText(props.value)}>
        {t('web.admin.copy')}
      </button>
    </div>
  );
}

function useAction(onSignedOut: () => void) {
  const [error, setError] = useState<string | undefined>();
  const run = async (action: () => Promise<void>) => {
    setError(undefined);
    try {
      await action();
    } catch (err) {
      if (isSignedOut(err)) onSignedOut();
      setError(explain(err));
    }
  };
  return { error, run };
}

function People(props: { onSignedOut: () => void }) {
  const [tick, setTick] = useState(0);
  const users = useLoad(() => api.users(), [tick], props.onSignedOut);
  const [name, setName] = useState('');
  const [admin, setAdmin] = useState(false);
  const [secret, setSecret] = useState<{ label: string; value: string } | undefined>();
  const { error, run } = useAction(props.onSignedOut);
  return (
    <section class="card" aria-labelledby="people-h">
      <h2 id="people-h">{t('web.admin.people')}</h2>
      {secret ? <Secret {...secret} /> : null}
      <ul class="plain-list">
        {(users.data?.users ?? []).map((u) => (
          <li key={u.name} data-user={u.name}>
            <strong>{u.name}</strong> {u.admin ? <span class="pill">{t('web.admin.admin')}</span> : null}{' '}
            <span class="muted small">{when(u.created_at)}</span>{' '}
            <button
              type="button"
              class="small"
              onClick={() =>
                run(async () => {
                  if (!confirm(t('web.admin.reset_confirm', { name: u.name }))) return;
                  const r = await api.resetToken(u.name);
                  setSecret({ label: t('web.admin.token_for', { name: u.name }), value: r.token });
                })
              }
            >
              {t('web.admin.reset_token')}
            </button>
          </li>
        ))}
      </ul>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const r = await api.createUser(name.trim(), admin);
            setSecret({ label: t('web.admin.token_for', { name: r.name }), value: r.token });
            setName('');
            setTick((n) => n + 1);
          });
        }}
      >
        <label class="field">
          <span>{t('web.admin.new_person')}</span>
          <input
            name="person-name"
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </label>
        <label class="check">
          <input
            type="checkbox"
            checked={admin}
            onChange={(e) => setAdmin((e.target as HTMLInputElement).checked)}
          />{' '}
          {t('web.admin.admin')}
        </label>
        <button type="submit">{t('web.admin.add_person')}</button>
      </form>
      {error ? <p class="error">{error}</p> : null}
    </section>
  );
}

function Keys(props: { onSignedOut: () => void }) {
  const [tick, setTick] = useState(0);
  const keys = useLoad(() => api.agentKeys(), [tick], props.onSignedOut);
  const [name, setName] = useState('');
  const [secret, setSecret] = useState<{ label: string; value: string } | undefined>();
  const { error, run } = useAction(props.onSignedOut);
  return (
    <section class="card" aria-labelledby="keys-h">
      <h2 id="keys-h">{t('web.admin.keys')}</h2>
      {secret ? <Secret {...secret} /> : null}
      {/* A table on wide screens; on a phone each key is a card, its cells labelled (styles.css). */}
      <table class="keys">
        <thead>
          <tr>
            <th>{t('web.admin.key_agent')}</th>
            <th>{t('web.admin.key_id')}</th>
            <th>{t('web.admin.key_created')}</th>
            <th>{t('web.admin.key_last_used')}</th>
            <th />
          </tr>
        </thead>
        <tbody>
          {(keys.data?.keys ?? []).map((k) => (
            <tr key={k.key_id} data-key-id={k.key_id} class={k.revoked_at ? 'revoked' : ''}>
              <td data-label={t('web.admin.key_agent')} class="key-agent">
                {k.agent_name}
              </td>
              <td data-label={t('web.admin.key_id')}>
                <code>{k.key_id}</code>
              </td>
              <td data-label={t('web.admin.key_created')}>{when(k.created_at)}</td>
              <td data-label={t('web.admin.key_last_used')}>
                {k.last_used_at ? when(k.last_used_at) : t('web.admin.key_never_used')}
              </td>
              <td class="key-action">
                {k.revoked_at ? (
                  <span class="muted small">{t('web.admin.revoked', { when: when(k.revoked_at) })}</span>
                ) : (
                  <button
                    type="button"
                    class="danger small"
                    onClick={() =>
                      run(async () => {
                        if (!confirm(t('web.admin.revoke_confirm', { agent: k.agent_name }))) return;
                        await api.revokeAgentKey(k.key_id);
                        toast(t('web.admin.revoked_notice', { agent: k.agent_name }));
                        setTick((n) => n + 1);
                      })
                    }
                  >
                    {t('web.admin.revoke')}
                  </button>
                )}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <form
        class="inline"
        onSubmit={(e) => {
          e.preventDefault();
          void run(async () => {
            const r = await api.issueAgentKey(name.trim());
            setSecret({ label: t('web.admin.key_for', { agent: r.agent_name }), value: r.key });
            setName('');
            setTick((n) => n + 1);
          });
        }}
      >
        <label class="field">
          <span>{t('web.admin.key_name')}</span>
          <input
            name="agent-name"
            value={name}
            onInput={(e) => setName((e.target as HTMLInputElement).value)}
          />
        </label>
        <button type="submit">{t('web.admin.issue_key')}</button>
      </form>
      {error ? <p class="error">{error}</p> : null}
    </section>
  );
}

function Models(props: { onSignedOut: () => void }) {
  const agents = useLoad(() => api.agents(), [], props.onSignedOut);
  const platforms = [...new Set((agents.data?.agents ?? []).map((a) => a.platform))].sort();
  const [platform, setPlatform] = useState('');
  const [view, setView] = useState<AllowedModelsResponse | undefined>();
  const [selection, setSelection] = useState<string[]>([]);
  const { error, run } = useAction(props.onSignedOut);
  useEffect(() => {
    if (platform === '' && platforms[0] !== undefined) setPlatform(platforms[0]);
  }, [platforms.join(',')]);
  useEffect(() => {
    if (platform === '') return;
    void run(async () => {
      const v = await api.allowedModels(platform);
      setView(v);
      setSelection(v.models.map((m) => m.key));
    });
  }, [platform]);
  const stale = new Set((view?.models ?? []).filter((m) => m.stale).map((m) => m.key));
  const move = (i: number, by: number) =>
    setSelection((s) => {
      const next = [...s];
      const [item] = next.splice(i, 1);
      if (item !== undefined) next.splice(Math.max(0, Math.min(next.length, i + by)), 0, item);
      return next;
    });
  return (
    <section class="card" aria-labelledby="models-h">
      <h2 id="models-h">{t('web.admin.models')}</h2>
      {platforms.length === 0 ? <p class="muted">{t('web.admin.no_platforms')}</p> : null}
      {platforms.length > 0 ? (
        <label class="field">
          <span>{t('web.admin.platform')}</span>
          <select value={platform} onChange={(e) => setPlatform((e.target as HTMLSelectElement).value)}>
            {platforms.map((p) => (
              <option key={p} value={p}>
                {p}
              </option>
            ))}
          </select>
        </label>
      ) : null}
      {view ? (
        <div class="models">
          <div>
            <h3>{t('web.admin.selection')}</h3>
            {selection.length === 0 ? <p class="muted small">{t('web.admin.selection_empty')}</p> : null}
            <ol>
              {selection.map((key, i) => (
                <li key={key} data-model={key}>
                  <code>{key}</code>{' '}
                  {stale.has(key) ? <span class="pill pill-stale">{t('web.admin.stale')}</span> : null}
                  <button
                    type="button"
                    class="small"
                    disabled={i === 0}
                    onClick={() => move(i, -1)}
                    aria-label={t('web.admin.up')}
                  >
                    ↑
                  </button>
                  <button
                    type="button"
                    class="small"
                    disabled={i === selection.length - 1}
                    onClick={() => move(i, 1)}
                    aria-label={t('web.admin.down')}
                  >
                    ↓
                  </button>
                  <button
                    type="button"
                    class="small"
                    onClick={() => setSelection((s) => s.filter((x) => x !== key))}
                  >
                    {t('web.compose.remove')}
                  </button>
                </li>
              ))}
            </ol>
            <button
              type="button"
              class="primary"
              onClick={() =>
                run(async () => {
                  const v = await api.setAllowedModels(platform, selection);
                  setView(v);
                  setSelection(v.models.map((m) => m.key));
                  toast(t('web.admin.models_saved', { platform }));
                })
              }
            >
              {t('web.admin.save')}
            </button>
          </div>
          <div>
            <h3>{t('web.admin.catalogue')}</h3>
            {view.catalogue.length === 0 ? <p class="muted small">{t('web.admin.catalogue_empty')}</p> : null}
            <ul class="plain-list">
              {view.catalogue.map((m) => (
                <li key={m.key}>
                  <code>{m.key}</code> <span class="muted small">{m.agents.join(', ')}</span>{' '}
                  <button
                    type="button"
                    class="small"
                    disabled={selection.includes(m.key) || selection.length >= 10}
                    onClick={() => setSelection((s) => [...s, m.key])}
                  >
                    {t('web.admin.add')}
                  </button>
                </li>
              ))}
            </ul>
          </div>
        </div>
      ) : null}
      {error ? <p class="error">{error}</p> : null}
    </section>
  );
}

export function AdminPage(props: { onSignedOut: () => void }) {
  return (
    <>
      <div class="page-head">
        <h1>{t('web.admin.title')}</h1>
      </div>
      <People onSignedOut={props.onSignedOut} />
      <Keys onSignedOut={props.onSignedOut} />
      <Models onSignedOut={props.onSignedOut} />
    </>
  );
}
