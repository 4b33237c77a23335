import { API_PREFIX } from './common.js';

/**
 * Route paths, relative to {@link API_PREFIX}. `:id` marks a path parameter. Agent routes use
 * `Authorization: Bearer <agent key>` (fallback `X-Agent-Secret`); `/me` routes a user token;
 * `/admin` routes an admin user token (see SPEC G-12).
 */
export const ROUTES = {
  register: '/agent/register',
  heartbeat: '/agent/heartbeat',
  events: '/events',
  inbox: '/mail/inbox',
  markRead: '/mail/read',
  mail: '/agent/mail/:id',
  thread: '/agent/mail/:id/thread',
  send: '/mail/send',
  forward: '/mail/:id/forward',
  uploadAttachment: '/attachments',
  attachment: '/attachments/:id',
  permissionRequest: '/permission/request',
  contacts: '/agent/contacts',
  suggest: '/agent/contacts/suggest',
  participants: '/agent/sessions/:id/participants',
  sessionSync: '/sessions/:id/sync',
  meSend: '/me/mail/send',
  meInbox: '/me/inbox',
  meMail: '/me/mail/:id',
  meThread: '/me/mail/:id/thread',
  meMarkRead: '/me/mail/read',
  meEvents: '/me/events',
  meAttachments: '/me/attachments',
  meAttachment: '/me/attachments/:id',
  mePermissions: '/me/permissions',
  meDecide: '/me/permissions/:id/decide',
  meContacts: '/me/contacts',
  adminUsers: '/admin/users',
  adminAgentKeys: '/admin/agent-keys',
  adminAgentKey: '/admin/agent-keys/:id',
  adminAllowedModels: '/admin/platforms/:platform/models',
} as const;

/** Name of a route in {@link ROUTES}. */
export type RouteName = keyof typeof ROUTES;

/**
 * Full path of a route with its parameters filled and URL-encoded.
 * @throws Error when a `:param` of the route has no value.
 * @example routePath('mail', { id: 'm1' }) // '/api/v1/agent/mail/m1'
 */
export function routePath(name: RouteName, params: Readonly<Record<string, string>> = {}): string {
  const path = ROUTES[name].replace(/:([a-z]+)/g, (_, key: string) => {
    const value = params[key];
    if (value === undefined) throw new Error(`routePath(${name}): missing parameter "${key}"`);
    return encodeURIComponent(value);
  });
  return `${API_PREFIX}${path}`;
}
