/**
 * The phones of Swiss German pronunciation, written in IPA. Pronunciations are IPA strings over
 * exactly these symbols (plus the stress mark), so every engine can map them one by one and a
 * test can check that each engine knows them all.
 */

/** Vowels and diphthongs (a diphthong is one phone: it fills one syllable nucleus). */
export const SWISS_VOWELS: readonly string[] = [
  'a',
  'aː',
  'ɒː',
  'e',
  'eː',
  'ɛ',
  'ɛː',
  'æ',
  'æː',
  'ə',
  'ɪ',
  'i',
  'iː',
  'ɔ',
  'o',
  'oː',
  'œ',
  'øː',
  'ʊ',
  'u',
  'uː',
  'ʏ',
  'yː',
  // Falling diphthongs of Swiss spelling: ie, ue, üe.
  'iə',
  'uə',
  'yə',
  'ei̯',
  'ai̯',
  'æi̯',
  'ɔi̯',
  'øi̯',
  'ui̯',
  'au̯',
  'ou̯',
  'æu̯',
  'ɛu̯',
  'øu̯',
  'iu̯',
];

/** Consonants, affricates counted as one phone (the Zürich and Bern k is the affricate kx). */
export const SWISS_CONSONANTS: readonly string[] = [
  'p',
  'b',
  't',
  'd',
  'k',
  'kx',
  'ɡ',
  'f',
  's',
  'ʃ',
  'ʒ',
  'x',
  'h',
  'm',
  'n',
  'ŋ',
  'l',
  'r',
  'j',
  'ʋ',
  'ts',
  'tʃ',
  'dʒ',
  'pf',
];

/** Marks the syllable that carries the word's stress. */
export const STRESS_MARK = 'ˈ';

const VOWEL_SET = new Set(SWISS_VOWELS);
const BY_LENGTH = [...SWISS_VOWELS, ...SWISS_CONSONANTS, STRESS_MARK].sort((a, b) => b.length - a.length);

/** Whether a phone is a vowel or diphthong. */
export function isVowel(phone: string): boolean {
  return VOWEL_SET.has(phone);
}

/**
 * Splits an IPA string into phones (and stress marks), longest symbol first; `null` when it
 * holds anything outside the inventory.
 */
export function splitPhones(ipa: string): string[] | null {
  const phones: string[] = [];
  let at = 0;
  while (at < ipa.length) {
    const phone = BY_LENGTH.find((symbol) => ipa.startsWith(symbol, at));
    if (!phone) return null;
    phones.push(phone);
    at += phone.length;
  }
  return phones;
}
