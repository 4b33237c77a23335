/**
 * What a failed call means to the person, in the words of this page (SPEC H-2): a button to
 * press, a field to fix — never an HTTP route or a rule id. The Gateway's own detail is shown
 * only where it names the thing at fault (an unknown alias, a field), as text.
 */
import type { TextKey } from '@agentmail/shared-policy';
import { t } from './texts.js';

interface HttpLike {
  code: 'AM_GATEWAY_HTTP';
  status: number;
  body: { error: string; detail?: string; code?: unknown; field?: unknown; needs?: unknown; given?: unknown };
}

function isHttp(err: unknown): err is HttpLike {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 'AM_GATEWAY_HTTP';
}

/** True when the error means "you are not signed in (any more)": the page shows the sign-in form. */
export function isSignedOut(err: unknown): boolean {
  return isHttp(err) && err.status === 401;
}

/** The Gateway's error code of a failed call (`AM_GW_…`), or ''. */
export function gatewayCode(err: unknown): string {
  return isHttp(err) && typeof err.body.code === 'string' ? err.body.code : '';
}

const BY_CODE: Readonly<Record<string, TextKey>> = {
  AM_GW_NO_LONGER_WAITING: 'web.error.no_longer_waiting',
  AM_GW_ALREADY_DECIDED: 'web.error.already_decided',
  AM_GW_ORIGIN_REFUSED: 'web.error.origin',
  AM_GW_PAYLOAD_TOO_LARGE: 'web.error.too_large',
  AM_GW_RATE_LIMIT: 'web.error.busy',
  AM_GW_SESSION_RATE_LIMIT: 'web.error.busy',
  AM_GW_BUDGET_EXHAUSTED: 'web.error.budget',
  AM_GW_HOP_LIMIT: 'web.error.budget',
};

/** Codes whose Gateway detail names what is wrong (a recipient, an alias, a field): shown after our words. */
const WITH_DETAIL = new Set([
  'AM_GW_UNKNOWN_RECIPIENT',
  'AM_GW_UNKNOWN_ALIAS',
  'AM_GW_UNKNOWN_ATTACHMENT',
  'AM_GW_BAD_REQUEST',
  'AM_GW_CONFLICT',
  'AM_GW_NOT_FOUND',
]);

/** The page's label of a request field the Gateway names (`field "to": …`). */
const FIELD_LABELS: Readonly<Record<string, TextKey>> = {
  to: 'web.compose.to',
  cc: 'web.compose.cc',
  subject: 'web.compose.subject',
  body: 'web.compose.body',
  comment: 'web.compose.comment',
  token: 'web.signin.token',
  name: 'web.admin.new_person',
  agent_name: 'web.admin.key_name',
  note: 'web.request.note',
  answers: 'web.request.your_answer',
  file: 'web.compose.attach',
};

/**
 * A Gateway detail in the page's words: `field "to": …` becomes the field's label, and what is
 * meant for API clients (the list of accepted fields, rule ids) goes.
 */
export function pageDetail(detail: string): string {
  return detail
    .replace(/^field "([^"]+)": /, (whole, field: string) => {
      const key = FIELD_LABELS[field.split(/[.[]/)[0] ?? ''];
      return key === undefined ? whole : `${t(key)}: `;
    })
    .replace(/\s*Accepted fields: [^.]*\.?$/, '')
    .replace(/\s*\((?:see )?SPEC [^)]*\)/g, '')
    .trim();
}

/** The person's words for a failed call. */
export function explain(err: unknown): string {
  if (isHttp(err)) {
    const code = gatewayCode(err);
    if (err.status === 401) return t('web.error.signed_out');
    if (code === 'AM_GW_FORBIDDEN' && err.body.given === 'agent_key') return t('web.error.agent_key');
    if (code === 'AM_GW_FORBIDDEN') return t('web.error.forbidden');
    const key = BY_CODE[code];
    if (key !== undefined) return t(key);
    if (WITH_DETAIL.has(code) && err.body.detail)
      return t('web.error.with_detail', { detail: err.body.detail });
    if (err.status >= 500) return t('web.error.server');
    return t('web.error.with_detail', { detail: err.body.detail ?? err.body.error });
  }
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'AM_GATEWAY_NETWORK') return t('web.error.network');
  return t('web.error.unexpected', { detail: err instanceof Error ? err.message : String(err) });
}
