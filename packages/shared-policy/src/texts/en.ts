/**
 * English texts: the default locale and the source of the key set. Every text a model or a
 * person reads (prompt headlines, reply instructions, failure mails, denial reasons, tool
 * descriptions) lives here, keyed by a dotted name. Placeholders are `{name}` and are filled by
 * {@link formatText}. A test checks that `zh-CN` has the same keys and the same placeholders.
 *
 * Keep each area inside its own section marker so parallel edits do not collide.
 */
export const EN = {
  'common.language': 'English',

  // ==== prompt (headlines, reply instructions: see SPEC B-5, B-6, B-20) ====
  // ==== end prompt ====

  // ==== failure (failure mails: see SPEC B-9, B-14) ====
  // ==== end failure ====

  // ==== permission (denial reasons, question mails: see SPEC P-1..P-9) ====
  // ==== end permission ====

  // ==== tools (mail tool descriptions and rendered labels: see SPEC B-17) ====
  // ==== end tools ====
} as const satisfies Record<string, string>;

/** Every key of the text catalogue. */
export type TextKey = keyof typeof EN;
