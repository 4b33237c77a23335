import { EN, type TextKey } from './en.js';
import { ZH_CN } from './zh-cn.js';

export type { TextKey } from './en.js';

/** Locales of the text catalogue; `en` is the default. */
export type Locale = 'en' | 'zh-CN';

/** The locale used when none is given. @default 'en' */
export const DEFAULT_LOCALE: Locale = 'en';

const CATALOGUE: Record<Locale, Record<TextKey, string>> = { en: EN, 'zh-CN': ZH_CN };

/** Values substituted into `{name}` placeholders. */
export type TextParams = Readonly<Record<string, string | number>>;

/**
 * Normalise a locale tag (`zh`, `zh_CN`, `zh-Hans`, `en-US` …) to a catalogue locale; anything
 * unknown falls back to `en`.
 */
export function resolveLocale(tag: string | undefined | null): Locale {
  if (!tag) return DEFAULT_LOCALE;
  const t = tag.trim().toLowerCase().replace('_', '-');
  if (t === 'zh' || t.startsWith('zh-cn') || t.startsWith('zh-hans') || t.startsWith('zh-sg')) return 'zh-CN';
  return DEFAULT_LOCALE;
}

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
