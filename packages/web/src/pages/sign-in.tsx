/** Sign in with a user token: the Gateway answers with the session cookie; the token is not kept by the page. */
import type { WebSessionResponse } from '@agentmail/protocol';
import { useState } from 'preact/hooks';
import { api } from '../api.js';
import { explain, isSignedOut } from '../errors.js';
import { t } from '../texts.js';

export function SignInPage(props: {
  notice?: string | undefined;
  onSignedIn: (me: WebSessionResponse) => void;
}) {
  const [token, setToken] = useState('');
  const [error, setError] = useState<string | undefined>();
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    if (token.trim() === '') {
      setError(t('web.signin.empty'));
      return;
    }
    setBusy(true);
    setError(undefined);
    try {
      const me = await api.signIn(token.trim());
      setToken('');
      props.onSignedIn(me);
    } catch (err) {
      // A 401 here is a wrong token, not an ended session.
      setError(isSignedOut(err) ? t('web.signin.bad_token') : explain(err));
    } finally {
      setBusy(false);
    }
  };
  return (
    <main class="page signin">
      <h1>AgentMail</h1>
      <p>{t('web.signin.intro')}</p>
      {props.notice ? <p class="notice">{props.notice}</p> : null}
      <form onSubmit={submit} class="card">
        <label for="token">{t('web.signin.token')}</label>
        <input
          id="token"
          name="token"
          type="password"
          autocomplete="current-password"
          value={token}
          onInput={(e) => setToken((e.target as HTMLInputElement).value)}
          aria-invalid={error ? 'true' : undefined}
          aria-describedby="token-help"
        />
        <p id="token-help" class="help">
          {t('web.signin.help')}
        </p>
        {error ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : null}
        <button type="submit" class="primary" disabled={busy}>
          {t('web.signin.submit')}
        </button>
      </form>
    </main>
  );
}
