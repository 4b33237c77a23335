/** Loading data for a page: the value, the person's words for a failure, and sign-out on a 401. */
import { useEffect, useState } from 'preact/hooks';
import { explain, isSignedOut } from './errors.js';

/** What {@link useLoad} gives a page. */
export interface Loaded<T> {
  data: T | undefined;
  error: string | undefined;
  loading: boolean;
}

/**
 * Run `load` whenever `deps` change; a 401 calls `onSignedOut` (the session ended). An answer
 * that arrives after the next load started is dropped.
 */
export function useLoad<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
  onSignedOut: () => void,
): Loaded<T> {
  const [state, setState] = useState<Loaded<T>>({ data: undefined, error: undefined, loading: true });
  useEffect(() => {
    let current = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => {
        if (current) setState({ data, error: undefined, loading: false });
      },
      (err: unknown) => {
        if (!current) return;
        if (isSignedOut(err)) onSignedOut();
        setState((s) => ({ data: s.data, error: explain(err), loading: false }));
      },
    );
    return () => {
      current = false;
    };
  }, deps);
  return state;
}
