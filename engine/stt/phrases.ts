/** A caller's vocabulary phrases as recognisers' word lists write them. */

/** The words of a phrase as dictionaries write them (lower case, letters, digits, apostrophes). */
export function phraseWords(phrase: string): string[] {
  return phrase
    .toLowerCase()
    .replace(/[^\p{L}\p{N}' ]+/gu, ' ')
    .split(/\s+/)
    .filter((word) => word !== '' && word !== "'");
}
