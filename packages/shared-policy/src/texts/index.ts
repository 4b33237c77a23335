import { EN, type TextKey } from './en.js';
import { DEFAULT_LOCALE, type Locale } from './locale.js';
import { ZH_CN } from './zh-cn.js';

export type { TextKey } from './en.js';
export { DEFAULT_LOCALE, type Locale, resolveLocale } from './locale.js';

const CATALOGUE: Record<Locale, Record<TextKey, string>> = { en: EN, 'zh-CN': ZH_CN };

/** Values substituted into `{name}` placeholders. */
export type TextParams = Readonly<Record<string, string | number>>;

/**
 * Look up a text and fill its `{placeholders}`.
 *
 * @param key - catalogue key, e.g. `'prompt.reply.to_person'`
 * @param params - placeholder values; a placeholder without a value is left as `{name}` so a
 *   missing parameter is visible instead of silently empty
 * @param locale - catalogue locale @default 'en'
 * @example formatText('failure.subject', { subject: 'fix tests' }, 'zh-CN')
 */
export function formatText(key: TextKey, params: TextParams = {}, locale: Locale = DEFAULT_LOCALE): string {
  const template = CATALOGUE[locale][key] ?? EN[key];
  return template.replace(/\{([a-zA-Z0-9_]+)\}/g, (whole, name: string) =>
    Object.hasOwn(params, name) ? String(params[name]) : whole,
  );
}

/** The raw catalogue of one locale (for tests and docs generation). */
export function catalogue(locale: Locale): Readonly<Record<TextKey, string>> {
  return CATALOGUE[locale];
}
