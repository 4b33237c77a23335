/**
 * Attachment ids as a model writes them, normalised before a send (see SPEC B-16). The Gateway
 * stays strict; this is the lenient side.
 */

/** Separators between ids in one string: whitespace, `,`, full-width `，`, `、` and `;`. */
const SEPARATORS = /[\s,，、;]+/u;
/** Quotes and brackets a model may leave around an id in a non-JSON list (`[a, 'b']`). */
const WRAPPERS = /^[[\]"'`]+|[[\]"'`]+$/g;

function splitIds(text: string): string[] {
  return text
    .split(SEPARATORS)
    .map((token) => token.replace(WRAPPERS, '').trim())
    .filter((token) => token !== '');
}

/** Ids from one string: a JSON array, or ids separated by commas/whitespace. */
function idsFromString(text: string): string[] {
  const trimmed = text.trim();
  if (trimmed.startsWith('[')) {
    // A JSON-array string (`'["att_1","att_2"]'`): take its string elements only, so JSON
    // `null` or numbers are dropped instead of becoming the ids "null" / "42".
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      parsed = undefined; // not JSON after all: fall through to splitting
    }
    if (Array.isArray(parsed))
      return parsed.flatMap((item) => (typeof item === 'string' ? splitIds(item) : []));
  }
  return splitIds(trimmed);
}

/**
 * Normalise attachment ids given by a model (see SPEC B-16).
 *
 * Accepts an array of ids, a JSON-array string (`'["a","b"]'`), a single id, or ids separated by
 * commas and/or whitespace (`'a, b c'`); each string element of an array is read the same way.
 * Drops empty strings, `null`, `undefined` and every non-string; trims; removes duplicates
 * keeping the first occurrence. Never throws.
 *
 * @returns the ids in order, possibly `[]`.
 * @example normalizeAttachmentIds('["att_1", null, "att_2", "att_1"]') // ['att_1', 'att_2']
 */
export function normalizeAttachmentIds(input: unknown): string[] {
  let ids: string[];
  if (typeof input === 'string') ids = idsFromString(input);
  else if (Array.isArray(input))
    ids = input.flatMap((item: unknown) => (typeof item === 'string' ? idsFromString(item) : []));
  else ids = [];
  return [...new Set(ids)];
}
