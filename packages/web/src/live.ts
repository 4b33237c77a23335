/**
 * The person's live event stream (`GET /api/v1/me/events`): new mail, new requests, decisions and
 * withdrawals, read by shared-policy's `SseClient` on `fetch` (each event checked against its
 * protocol schema). A dropped stream is reopened with backoff and `Last-Event-ID`, so nothing in
 * between is missed (SPEC G-22); the cursor survives a reload of the tab (sessionStorage). No
 * key: the browser sends the session cookie itself, and a GET needs no Origin check.
 */
import { PERSON_EVENT_SCHEMAS, type PersonEvent, routePath } from '@agentmail/protocol';
import { ERROR_CODES } from '@agentmail/shared-policy';
import { SseClient } from '@agentmail/shared-policy/client/browser';
import { BASE_URL } from './api.js';

const CURSOR_KEY = 'agentmail.events.cursor';

/** What the stream is doing, for the page's "live" indicator. */
export type LiveState = 'connecting' | 'live' | 'retrying' | 'signed_out';

/** Options of {@link startLive}. */
export interface LiveOptions {
  onEvent: (event: PersonEvent) => void;
  onState: (state: LiveState) => void;
  /** The person this tab is signed in as: a cursor kept for someone else is not reused. */
  person: string;
}

function storedCursor(person: string): string | undefined {
  try {
    const raw = sessionStorage.getItem(CURSOR_KEY);
    const saved = raw === null ? undefined : (JSON.parse(raw) as { person?: string; id?: string });
    return saved?.person === person && typeof saved.id === 'string' ? saved.id : undefined;
  } catch {
    return undefined;
  }
}

function storeCursor(person: string, id: string): void {
  try {
    sessionStorage.setItem(CURSOR_KEY, JSON.stringify({ person, id }));
  } catch {
    // Private mode: the cursor lives for this page only.
  }
}

/**
 * Open the stream until the returned function is called. The first connection starts at the
 * stored cursor, or at "now" (`Last-Event-ID` of the newest event is unknown, so none is sent
 * and only new events arrive: the page loads the current state itself). A 401 ends it
 * (`signed_out`); any other failure is retried.
 */
export function startLive(options: LiveOptions): () => void {
  options.onState('connecting');
  const cursor = storedCursor(options.person);
  const sse = new SseClient({
    url: BASE_URL,
    path: routePath('meEvents'),
    events: PERSON_EVENT_SCHEMAS,
    ...(cursor === undefined ? {} : { lastEventId: cursor }),
    onOpen: () => options.onState('live'),
    onEvent: (event) => {
      if (event.id !== '') storeCursor(options.person, event.id);
      options.onEvent(event);
    },
    onError: (error) => {
      if (error.code === ERROR_CODES.SSE_HTTP && error.status === 401) {
        options.onState('signed_out');
        void sse.close();
      } else if (error.code === ERROR_CODES.SSE_HTTP || error.code === ERROR_CODES.SSE_CONNECTION)
        options.onState('retrying');
    },
  });
  void sse.start();
  return () => void sse.close();
}
