/**
 * The page's shared state outside the component tree: live events fan out to whichever page is
 * open, and the counters in the navigation (unread mails, waiting requests).
 */
import type { PersonEvent } from '@agentmail/protocol';
import { useEffect, useRef, useState } from 'preact/hooks';

type Listener<T> = (value: T) => void;

/** A tiny publish/subscribe channel; `subscribe` returns its unsubscribe function. */
export class Channel<T> {
  readonly #listeners = new Set<Listener<T>>();
  subscribe(listener: Listener<T>): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }
  publish(value: T): void {
    for (const l of [...this.#listeners]) l(value);
  }
}

/** A live event, or `{ type: 'resync' }` when the stream (re)connected and state may have been missed. */
export type LiveSignal = PersonEvent | { type: 'resync' };

/** Every live signal of the person's stream. */
export const live = new Channel<LiveSignal>();

/**
 * A number that changes whenever `accept` says a live signal matters to the caller (a resync
 * always does): use it as an effect dependency to reload.
 */
export function useLiveTick(accept: (signal: LiveSignal) => boolean): number {
  const [tick, setTick] = useState(0);
  // The latest `accept` (it may read the page's current state), without resubscribing.
  const current = useRef(accept);
  current.current = accept;
  useEffect(
    () =>
      live.subscribe((s) => {
        if (s.type === 'resync' || current.current(s)) setTick((n) => n + 1);
      }),
    [],
  );
  return tick;
}

/** A short message for the person at the bottom of the page (a live notice, a result). */
export interface Toast {
  id: number;
  text: string;
  tone: 'info' | 'error';
}

/** Toasts to show. */
export const toasts = new Channel<Toast>();

/** How long a toast stays, in ms; going to another page clears it at once. @default 5_000 */
export const TOAST_MS = 5_000;

let toastId = 0;

/** Show `text` for {@link TOAST_MS} (or until the person goes to another page). */
export function toast(text: string, tone: Toast['tone'] = 'info'): void {
  toasts.publish({ id: ++toastId, text, tone });
}
