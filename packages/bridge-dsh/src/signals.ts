/**
 * DSH's abort signals never reach our I/O directly (research dsh.md §11): when DSH cancels an
 * agent, undici decorates the abort reason it was handed — DSH's `AgentCancelCause` — with a
 * non-serialisable `stack` accessor, and the loop then fails to log `turn/end` at all. Every DSH
 * signal is bridged to a fresh controller that aborts with its own `Error`.
 */

/** A signal of our own that follows a DSH signal; `dispose()` drops the link. */
export interface DetachedSignal {
  signal: AbortSignal;
  dispose(): void;
}

/**
 * A fresh signal that aborts (with an `Error` of ours) when `source` aborts.
 * @example const d = detach(exec.signal); try { await tool.run(args, { ...ctx, signal: d.signal }) } finally { d.dispose() }
 */
export function detach(source: AbortSignal, what = 'dsh cancelled the call'): DetachedSignal {
  const controller = new AbortController();
  const onAbort = (): void => controller.abort(new Error(what));
  if (source.aborted) onAbort();
  else source.addEventListener('abort', onAbort, { once: true });
  return { signal: controller.signal, dispose: () => source.removeEventListener('abort', onAbort) };
}
