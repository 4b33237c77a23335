/**
 * The page's words: every text a person reads comes from the shared-policy text catalogue
 * (`web.*` keys, English and Simplified Chinese), in the browser's language.
 */
import {
  formatText,
  type Locale,
  resolveLocale,
  type TextKey,
  type TextParams,
} from '@agentmail/shared-policy';

/** The catalogue locale of this browser (`zh*` → zh-CN, else English). */
export const LOCALE: Locale = resolveLocale(globalThis.navigator?.language);

/** The text `key` with its placeholders filled, in {@link LOCALE}. */
export function t(key: TextKey, params?: TextParams): string {
  return formatText(key, params, LOCALE);
}

/** A timestamp as the person reads it: time today, else date and time, in their locale. */
export function when(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  const today = new Date().toDateString() === d.toDateString();
  return today
    ? d.toLocaleTimeString(LOCALE, { hour: '2-digit', minute: '2-digit' })
    : d.toLocaleString(LOCALE, { dateStyle: 'medium', timeStyle: 'short' });
}

/** A byte count as the person reads it. */
export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}
