/**
 * Matching what a caller said against the words a dialplan expects: case, accents and
 * punctuation do not count (recognisers differ in all three), and a word of four letters or more
 * also matches the start of a longer word, so "Rechnung" finds "Rechnungsfrage" (German compounds).
 */

/** Lower case, without accents or punctuation, single spaces. */
export function normaliseWords(text: string): string {
  return text
    .normalize('NFD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim();
}

/** Whether `said` contains `expected` as a word or phrase (see the module comment). */
export function saysWords(said: string, expected: string): boolean {
  const words = normaliseWords(said).split(' ');
  const wanted = normaliseWords(expected).split(' ');
  if (wanted[0] === '') return false;
  for (let start = 0; start + wanted.length <= words.length; start++) {
    const fits = wanted.every((word, offset) => {
      const heard = words[start + offset]!;
      return heard === word || (offset === wanted.length - 1 && word.length >= 4 && heard.startsWith(word));
    });
    if (fits) return true;
  }
  return false;
}

/**
 * The words of an option for a language: a plain list serves every language; a map is looked up
 * by the full code (`de-CH`), then the base language (`de`).
 */
export function wordsFor(words: readonly string[] | Readonly<Record<string, readonly string[]>> | undefined, language: string): readonly string[] {
  if (words === undefined) return [];
  if (Array.isArray(words)) return words as readonly string[];
  const byLanguage = words as Readonly<Record<string, readonly string[]>>;
  const lower = Object.fromEntries(Object.entries(byLanguage).map(([code, list]) => [code.toLowerCase(), list]));
  const code = language.toLowerCase();
  return lower[code] ?? lower[code.split('-')[0]!] ?? [];
}
