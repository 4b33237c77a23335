import { formatText, type Locale } from './texts/index.js';

const ENDED = {
  timeout: 'permission.ended.timeout',
  aborted: 'permission.ended.aborted',
  shutdown: 'permission.ended.shutdown',
  restart: 'permission.ended.restart',
} as const;

/**
 * Why a request is no longer waiting, in words for the person: the reason a withdrawal or expiry
 * carries (`timeout`, `aborted`, `shutdown`, `restart`; the request's `decision` once it ended),
 * anything else as "the agent stopped waiting".
 * @example endedReasonText('timeout') // 'it timed out'
 */
export function endedReasonText(reason: string | null | undefined, locale?: Locale): string {
  const key = Object.hasOwn(ENDED, reason ?? '')
    ? ENDED[reason as keyof typeof ENDED]
    : 'permission.ended.unknown';
  return formatText(key, {}, locale);
}
