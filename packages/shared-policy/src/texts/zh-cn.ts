import type { TextKey } from './en.js';

/**
 * Simplified Chinese texts. Must have exactly the keys of {@link EN} with the same
 * `{placeholders}` (checked by test/texts.test.ts).
 */
export const ZH_CN: Record<TextKey, string> = {
  'common.language': '简体中文',

  // ==== prompt ====
  // ==== end prompt ====

  // ==== failure ====
  // ==== end failure ====

  // ==== permission ====
  // ==== end permission ====

  // ==== tools ====
  // ==== end tools ====
};
