/**
 * Hash routes (`#/inbox`, `#/mail/<id>`, …): the Gateway serves one page at `/`, so every view
 * is a fragment and a reload or a shared link lands on the same view.
 */
import { useEffect, useState } from 'preact/hooks';

/** A parsed route: its path segments and query. */
export interface Route {
  parts: string[];
  query: URLSearchParams;
}

/** The route of a hash (`#/mail/m1?x=1` → parts ['mail','m1'], query x=1). */
export function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, '');
  const [path = '', search = ''] = raw.split('?', 2);
  return {
    parts: path
      .split('/')
      .filter((p) => p !== '')
      .map((p) => {
        try {
          return decodeURIComponent(p);
        } catch {
          return p;
        }
      }),
    query: new URLSearchParams(search),
  };
}

/** The hash link of a route: `href('mail', id)` → `#/mail/<id>`; query values left out when undefined. */
export function href(...args: Array<string | Record<string, string | undefined>>): string {
  const parts: string[] = [];
  const query = new URLSearchParams();
  for (const a of args) {
    if (typeof a === 'string') parts.push(encodeURIComponent(a));
    else for (const [k, v] of Object.entries(a)) if (v !== undefined) query.set(k, v);
  }
  const q = query.toString();
  return `#/${parts.join('/')}${q ? `?${q}` : ''}`;
}

/** Go to a route. */
export function go(link: string): void {
  if (location.hash === link) window.dispatchEvent(new HashChangeEvent('hashchange'));
  else location.hash = link;
}

/** The current route, updated on every hash change. */
export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', on);
    return () => window.removeEventListener('hashchange', on);
  }, []);
  return route;
}
