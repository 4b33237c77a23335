/**
 * The catalogue's locales and the one rule that picks one from a tag. A module of its own (no
 * catalogue import): a hook process picks its locale without loading the texts.
 */

/** Locales of the text catalogue; `en` is the default. */
export type Locale = 'en' | 'zh-CN';

/** The locale used when none is given. @default 'en' */
export const DEFAULT_LOCALE: Locale = 'en';

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
