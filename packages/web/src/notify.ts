/**
 * Browser notifications for new requests while the tab is open (opt-in, Notification API). A
 * click brings the tab forward on that request, where approve and deny are one tap away.
 */
import type { PermissionRequestEvent } from '@agentmail/protocol';
import { href } from './route.js';
import { t } from './texts.js';

/** Whether this browser can show notifications at all. */
export function notificationsSupported(): boolean {
  return typeof Notification !== 'undefined';
}

/** The person's choice so far: `granted`, `denied` or `default` (not asked yet); `unsupported` without the API. */
export function notificationState(): NotificationPermission | 'unsupported' {
  return notificationsSupported() ? Notification.permission : 'unsupported';
}

/** Ask the browser for permission (only ever from a click: browsers refuse it otherwise). */
export async function enableNotifications(): Promise<NotificationPermission | 'unsupported'> {
  if (!notificationsSupported()) return 'unsupported';
  return Notification.requestPermission();
}

/** Show a notification for a new request, when the person allowed it. */
export function notifyRequest(event: PermissionRequestEvent): void {
  if (notificationState() !== 'granted') return;
  // The question is untrusted text: a notification shows it as plain text, cut short.
  const n = new Notification(
    t(event.kind === 'question' ? 'web.notify.question' : 'web.notify.approval', { agent: event.agent_name }),
    { body: event.question.slice(0, 200), tag: `request-${event.request_id}` },
  );
  n.onclick = () => {
    window.focus();
    location.hash = href('requests', event.request_id);
    n.close();
  };
}
