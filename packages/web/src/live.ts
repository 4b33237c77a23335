/**
 * The person's live event stream (`GET /api/v1/me/events`): new mail, new requests, decisions and
 * withdrawals, read with `fetch` and the shared SSE frame decoder, each event checked against its
 * protocol schema. A dropped stream is reopened with backoff and `Last-Event-ID`, so nothing in
 * between is missed (SPEC G-22); the cursor survives a reload of the tab (sessionStorage).
 */
import { PERSON_EVENT_SCHEMAS, type PersonEvent } from '@agentmail/protocol';
import { decodeSseEvent, SseFrameDecoder } from '@agentmail/shared-policy/client/browser';
import { api } from './api.js';

/** First reconnect delay, in ms; doubles per failure. @default 1_000 */
export const LIVE_BACKOFF_MS = 1_000;
/** Longest reconnect delay, in ms. @default 30_000 */
export const LIVE_MAX_BACKOFF_MS = 30_000;

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
 * and only new events arrive: the page loads the current state itself).
 */
export function startLive(options: LiveOptions): () => void {
  const stop = new AbortController();
  let cursor = storedCursor(options.person);
  void (async () => {
    let delay = LIVE_BACKOFF_MS;
    while (!stop.signal.aborted) {
      options.onState(delay === LIVE_BACKOFF_MS ? 'connecting' : 'retrying');
      try {
        const res = await fetch(api.client.url('meEvents').href, {
          headers: {
            accept: 'text/event-stream',
            ...(cursor === undefined ? {} : { 'last-event-id': cursor }),
          },
          signal: stop.signal,
          cache: 'no-store',
        });
        if (res.status === 401) {
          options.onState('signed_out');
          return;
        }
        if (res.status !== 200 || res.body === null) throw new Error(`HTTP ${res.status}`);
        options.onState('live');
        delay = LIVE_BACKOFF_MS;
        const decoder = new SseFrameDecoder({
          onFrame: (frame) => {
            if (frame.id !== undefined && frame.id !== '') {
              cursor = frame.id;
              storeCursor(options.person, frame.id);
            }
            const decoded = decodeSseEvent(PERSON_EVENT_SCHEMAS, frame, cursor ?? '');
            if (decoded.ok) options.onEvent(decoded.event as PersonEvent);
          },
        });
        const reader = res.body.getReader();
        for (;;) {
          const { done, value } = await reader.read();
          if (done) break;
          decoder.push(value);
        }
      } catch {
        if (stop.signal.aborted) return;
      }
      options.onState('retrying');
      await new Promise((resolve) => setTimeout(resolve, delay));
      delay = Math.min(delay * 2, LIVE_MAX_BACKOFF_MS);
    }
  })();
  return () => stop.abort();
}
