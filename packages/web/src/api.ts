/**
 * The page's one Gateway client: the browser-safe `PersonApi` on `fetch`, same origin, no token
 * (the browser sends the HttpOnly session cookie itself; the page never sees it).
 */
import { PersonApi } from '@agentmail/shared-policy/client/browser';

/** The Gateway's base URL: where this page was loaded from (a proxy path prefix is kept). */
export const BASE_URL = new URL('./', globalThis.location?.href ?? 'http://localhost/').href.replace(
  /\/$/,
  '',
);

/** The person's API over the web session. */
export const api = new PersonApi({ baseUrl: BASE_URL });

/** Link of an attachment download (a plain GET the browser makes with the session cookie). */
export function attachmentHref(id: string): string {
  return api.client.url('meAttachment', { id }).href;
}
