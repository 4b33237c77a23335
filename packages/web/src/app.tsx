/**
 * The app shell: who is signed in, the navigation with its counters, the live stream, toasts, and
 * which page shows for the current route.
 */
import type { WebSessionResponse } from '@agentmail/protocol';
import type { ComponentChild } from 'preact';
import { useCallback, useEffect, useState } from 'preact/hooks';
import { api } from './api.js';
import { live, TOAST_MS, type Toast, toasts } from './bus.js';
import { explain, isSignedOut } from './errors.js';
import { type LiveState, startLive } from './live.js';
import { notifyRequest } from './notify.js';
import { AdminPage } from './pages/admin.js';
import { AgentsPage } from './pages/agents.js';
import { ComposePage } from './pages/compose.js';
import { InboxPage } from './pages/inbox.js';
import { RequestsPage } from './pages/requests.js';
import { SignInPage } from './pages/sign-in.js';
import { ThreadPage } from './pages/thread.js';
import { href, useRoute } from './route.js';
import { t } from './texts.js';

/**
 * Where the page remembers that this browser signed in, and until when (no secret: the session
 * itself is the HttpOnly cookie, which the page cannot read). Without it the page shows the sign-in
 * form at once instead of asking the Gateway, whose 401 the browser would log as a console error
 * on every first visit.
 */
const SIGNED_IN_KEY = 'agentmail.signed_in';

function rememberSignIn(me: WebSessionResponse): void {
  try {
    localStorage.setItem(SIGNED_IN_KEY, JSON.stringify({ expires_at: me.expires_at }));
  } catch {
    // Storage off: the next load asks the Gateway anyway (mayBeSignedIn says yes).
  }
}

function forgetSignIn(): void {
  try {
    localStorage.removeItem(SIGNED_IN_KEY);
  } catch {
    // nothing kept
  }
}

/** False only when this browser surely has no live session: never signed in here, signed out, or past its end. */
function mayBeSignedIn(): boolean {
  let raw: string | null;
  try {
    raw = localStorage.getItem(SIGNED_IN_KEY);
  } catch {
    return true;
  }
  if (raw === null) return false;
  try {
    const end = (JSON.parse(raw) as { expires_at?: unknown }).expires_at;
    return typeof end !== 'string' || Date.parse(end) > Date.now();
  } catch {
    return true;
  }
}

type Who =
  | { state: 'loading' }
  | { state: 'signed_out'; notice?: string }
  | { state: 'in'; me: WebSessionResponse };

/** Unread mails and waiting requests, for the navigation badges. */
function useCounters(signedIn: boolean): { unread: number; pending: number } {
  const [counts, setCounts] = useState({ unread: 0, pending: 0 });
  const [tick, setTick] = useState(0);
  useEffect(() => live.subscribe(() => setTick((n) => n + 1)), []);
  useEffect(() => {
    if (!signedIn) return;
    let gone = false;
    void Promise.all([api.inbox({ status: 'unread', limit: 1 }), api.permissions('pending')]).then(
      ([inbox, requests]) => {
        if (!gone) setCounts({ unread: inbox.unread_count, pending: requests.permissions.length });
      },
      () => undefined,
    );
    return () => {
      gone = true;
    };
  }, [signedIn, tick]);
  return counts;
}

/**
 * Toasts at the bottom of the page: each goes after {@link TOAST_MS}, and all go when the person
 * opens another page (a result belongs to the page it happened on and must not cover the next).
 */
function Toasts() {
  const [list, setList] = useState<Toast[]>([]);
  useEffect(() => {
    const timers = new Set<ReturnType<typeof setTimeout>>();
    const unsubscribe = toasts.subscribe((toast) => {
      setList((l) => [...l.slice(-3), toast]);
      const timer = setTimeout(() => {
        timers.delete(timer);
        setList((l) => l.filter((x) => x.id !== toast.id));
      }, TOAST_MS);
      timers.add(timer);
    });
    const clear = () => setList([]);
    window.addEventListener('hashchange', clear);
    return () => {
      unsubscribe();
      window.removeEventListener('hashchange', clear);
      for (const timer of timers) clearTimeout(timer);
    };
  }, []);
  return (
    <div class="toasts" role="status" aria-live="polite">
      {list.map((x) => (
        <div key={x.id} class={`toast toast-${x.tone}`}>
          {x.text}
        </div>
      ))}
    </div>
  );
}

/** The web mailbox. */
export function App() {
  const [who, setWhoState] = useState<Who>(() =>
    mayBeSignedIn() ? { state: 'loading' } : { state: 'signed_out' },
  );
  // Signed in: remembered; signed out by the Gateway's word (a 401, sign-out): forgotten. A
  // network failure forgets nothing (the session may well be alive).
  const setWho = useCallback((next: Who, signedOut = next.state === 'signed_out') => {
    if (next.state === 'in') rememberSignIn(next.me);
    else if (signedOut) forgetSignIn();
    setWhoState(next);
  }, []);
  const [liveState, setLiveState] = useState<LiveState>('connecting');
  const route = useRoute();
  const signedIn = who.state === 'in';
  const counts = useCounters(signedIn);

  useEffect(() => {
    if (who.state !== 'loading') return;
    api.session().then(
      (me) => setWho({ state: 'in', me }),
      (err: unknown) =>
        isSignedOut(err)
          ? setWho({ state: 'signed_out' })
          : setWho({ state: 'signed_out', notice: explain(err) }, false),
    );
  }, []);

  useEffect(() => {
    if (who.state !== 'in') return;
    return startLive({
      person: who.me.name,
      onEvent: (event) => {
        if (event.type === 'permission_request') notifyRequest(event.data);
        live.publish(event);
      },
      onState: (state) => {
        setLiveState(state);
        if (state === 'live') live.publish({ type: 'resync' });
        if (state === 'signed_out') setWho({ state: 'signed_out', notice: t('web.error.signed_out') });
      },
    });
  }, [who.state === 'in' ? who.me.name : '']);

  const signOut = useCallback(async () => {
    // The pages and the live stream go first ("loading" until the Gateway answers), so none of
    // their requests follows the sign-out into a 401.
    setWhoState({ state: 'loading' });
    await api.signOut().catch(() => undefined);
    setWho({ state: 'signed_out', notice: t('web.signin.signed_out') });
  }, []);

  if (who.state === 'loading') return <main class="page loading">{t('web.loading')}</main>;
  if (who.state === 'signed_out')
    return (
      <>
        <SignInPage notice={who.notice} onSignedIn={(me) => setWho({ state: 'in', me })} />
        <Toasts />
      </>
    );

  const [page = 'inbox', arg] = route.parts;
  const onSignedOut = () => setWho({ state: 'signed_out', notice: t('web.error.signed_out') });
  let body: ComponentChild;
  switch (page) {
    case 'mail':
      body = <ThreadPage id={arg ?? ''} onSignedOut={onSignedOut} />;
      break;
    case 'compose':
      body = <ComposePage query={route.query} onSignedOut={onSignedOut} />;
      break;
    case 'requests':
      body = <RequestsPage focus={arg} onSignedOut={onSignedOut} />;
      break;
    case 'agents':
      body = <AgentsPage onSignedOut={onSignedOut} />;
      break;
    case 'admin':
      body = who.me.admin ? (
        <AdminPage onSignedOut={onSignedOut} />
      ) : (
        <p class="notice">{t('web.admin.only')}</p>
      );
      break;
    default:
      body = <InboxPage all={route.query.get('view') === 'all'} onSignedOut={onSignedOut} />;
  }
  const tab = (name: string, label: string, badge?: number) => (
    <a
      href={href(name)}
      class={page === name ? 'tab active' : 'tab'}
      aria-current={page === name ? 'page' : undefined}
    >
      {label}
      {badge ? <span class="badge">{badge}</span> : null}
    </a>
  );
  return (
    <>
      <header class="top">
        <a class="brand" href={href('inbox')}>
          AgentMail
        </a>
        <span class={`live live-${liveState}`} title={t(`web.live.${liveState}`)}>
          {t(`web.live.${liveState}`)}
        </span>
        <span class="me">
          {who.me.name}
          <button type="button" class="link" onClick={signOut}>
            {t('web.nav.sign_out')}
          </button>
        </span>
      </header>
      <nav class="tabs" aria-label={t('web.nav.label')}>
        {tab('inbox', t('web.nav.inbox'), counts.unread)}
        {tab('requests', t('web.nav.requests'), counts.pending)}
        {tab('compose', t('web.nav.compose'))}
        {tab('agents', t('web.nav.agents'))}
        {who.me.admin ? tab('admin', t('web.nav.admin')) : null}
      </nav>
      <main class="page">{body}</main>
      <Toasts />
    </>
  );
}
