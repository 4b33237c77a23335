import { ENDPOINTS, type EndpointId } from './endpoints.js';

/**
 * Names of the path parameters of a path template, in order: `/api/v1/mail/:id/forward` → `['id']`.
 */
export function pathParamNames(path: string): string[] {
  return [...path.matchAll(/:([A-Za-z_]+)/g)].map((m) => m[1] as string);
}

/**
 * Full path of an endpoint (from the Gateway's origin) with its parameters filled and
 * URL-encoded (see {@link ENDPOINTS}; agent routes use `Authorization: Bearer <agent key>`,
 * `/me` routes a user token, `/admin` routes an admin's user token, SPEC G-12).
 * @throws Error when a `:param` of the path has no value.
 * @example routePath('mail', { id: 'm1' }) // '/api/v1/agent/mail/m1'
 */
export function routePath(id: EndpointId, params: Readonly<Record<string, string>> = {}): string {
  return ENDPOINTS[id].path.replace(/:([A-Za-z_]+)/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`routePath(${id}): missing parameter "${key}"`);
    return encodeURIComponent(value);
  });
}
