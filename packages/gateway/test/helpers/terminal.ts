/**
 * What the CLI must never print for a person (SPEC H-1): a character a terminal acts on instead of
 * showing — C0 controls other than `\n` and `\t`, DEL, C1 controls, U+2028/U+2029, the
 * bidirectional embeddings, overrides and isolates, lone surrogates. Written without control
 * characters of its own (Unicode properties), so the check is not the code under test in disguise.
 */
export function actsOnTerminal(text: string): boolean {
  return /[\p{Cc}\u2028\u2029\u202a-\u202e\u2066-\u2069]|\p{Cs}/u.test(text.replace(/[\n\t]/g, ''));
}
