/**
 * Swiss German pronunciations (IPA over `engine/dialect/swiss-phones.ts`) as eSpeak NG phoneme
 * input for its German phoneme table (`[[…]]` in the text). eSpeak reads phoneme input by
 * longest match over the mnemonics of the table, so a word is checked mnemonic by mnemonic and
 * two that would fuse into a third (U + R is the diphthong UR) are kept apart.
 */
import { isVowel, splitPhones, STRESS_MARK } from '../dialect/swiss-phones.js';
import type { EmphasisLevel } from '../types.js';

/**
 * Every phoneme mnemonic eSpeak's German table knows (its own and inherited from base1 and
 * base). A test reads the same list out of the bundled `phontab`.
 */
export const ESPEAK_GERMAN_MNEMONICS: ReadonlySet<string> = new Set([
  '#@',
  '#X1',
  '#a',
  '#e',
  '#i',
  '#o',
  '#u',
  '%',
  '%%',
  "'",
  "'!",
  "''",
  '*',
  '**',
  ',',
  ',,',
  '-',
  '1',
  '3',
  ':',
  ';',
  '=',
  '?',
  '@',
  '@-',
  'A',
  'A:',
  'A~',
  'B',
  'C',
  'D',
  'E',
  'E2',
  'E:',
  'EI',
  'I',
  'I:',
  'J',
  'J^',
  'L',
  'L/',
  'N',
  'N-',
  'O',
  'OY',
  'O~',
  'Q',
  'Q"',
  'Q^',
  'R',
  'R2',
  'R3',
  'S',
  'S;',
  'T',
  'U',
  'UR',
  'W',
  'W~',
  'X',
  'Y:',
  'Z',
  'Z;',
  '_',
  '_!',
  '_:',
  '_::',
  '_;_',
  '_X1',
  '_^_',
  '_|',
  'a',
  'aI',
  'aU',
  'b',
  'c',
  'd',
  'dZ',
  'dZ;',
  'd[',
  'e',
  'e:',
  'f',
  'g',
  'g#',
  'h',
  'i',
  'i2',
  'i:',
  'iR',
  'j',
  'k',
  'l',
  'l#',
  'l-',
  'l.',
  'l/',
  'l/2',
  'l/3',
  'l2',
  'l^',
  'm',
  'm-',
  'n',
  'n-',
  'n.',
  'n^',
  'o',
  'o:',
  'oU',
  'p',
  'pF',
  'q',
  'r',
  'r"',
  'r-',
  'r.',
  'r/',
  's',
  's.',
  's;',
  't',
  't#',
  'tS',
  'tS;',
  't[',
  'ts',
  'u',
  'u:',
  'v',
  'v#',
  'w',
  'x',
  'y',
  'y:',
  'z',
  'z.',
  'z;',
  '||',
]);

/**
 * Mnemonics per phone. eSpeak's German has no [æ]: the open ä is its most open front vowel
 * [ɛ]. [r] is eSpeak's trill R, which German r-vocalisation leaves alone (Swiss r is spoken).
 */
const PHONE_MNEMONICS: Readonly<Record<string, readonly string[]>> = {
  a: ['a'],
  aː: ['a', ':'],
  ɒː: ['A:'],
  e: ['e'],
  eː: ['e:'],
  ɛ: ['E'],
  ɛː: ['E:'],
  æ: ['E'],
  æː: ['E:'],
  ə: ['@'],
  ɪ: ['I'],
  i: ['i'],
  iː: ['i:'],
  ɔ: ['O'],
  o: ['o'],
  oː: ['o:'],
  œ: ['W'],
  øː: ['Y:'],
  ʊ: ['U'],
  u: ['u'],
  uː: ['u:'],
  ʏ: ['y'],
  yː: ['y:'],
  iə: ['iR'],
  uə: ['UR'],
  yə: ['y', '@'],
  ei̯: ['EI'],
  ai̯: ['aI'],
  æi̯: ['aI'],
  ɔi̯: ['OY'],
  øi̯: ['OY'],
  ui̯: ['U', 'I'],
  au̯: ['aU'],
  ou̯: ['oU'],
  æu̯: ['E', 'U'],
  ɛu̯: ['E', 'U'],
  øu̯: ['W', 'U'],
  iu̯: ['I', 'U'],
  p: ['p'],
  b: ['b'],
  t: ['t'],
  d: ['d'],
  k: ['k'],
  kx: ['k', 'x'],
  ɡ: ['g'],
  f: ['f'],
  s: ['s'],
  ʃ: ['S'],
  ʒ: ['Z'],
  x: ['x'],
  h: ['h'],
  m: ['m'],
  n: ['n'],
  ŋ: ['N'],
  l: ['l'],
  r: ['R'],
  j: ['j'],
  ʋ: ['v'],
  ts: ['ts'],
  tʃ: ['tS'],
  dʒ: ['dZ'],
  pf: ['pF'],
};

/** eSpeak's separator inside phoneme input: keeps two mnemonics from being read as one. */
const SEPARATOR = '|';
const LONGEST = Math.max(...[...ESPEAK_GERMAN_MNEMONICS].map((mnemonic) => mnemonic.length));

/** Reads a mnemonic string the way eSpeak does: longest known mnemonic first, `|` only parts. */
export function parseMnemonics(text: string): string[] {
  const out: string[] = [];
  let at = 0;
  while (at < text.length) {
    if (text[at] === SEPARATOR && text[at + 1] !== SEPARATOR) {
      at += 1;
      continue;
    }
    let length = Math.min(LONGEST, text.length - at);
    while (length > 1 && !ESPEAK_GERMAN_MNEMONICS.has(text.slice(at, at + length))) length -= 1;
    out.push(text.slice(at, at + length));
    at += length;
  }
  return out;
}

/** Whether `next` after `previous` would be read as something else. */
function fuses(previous: string | undefined, next: readonly string[]): boolean {
  if (previous === undefined) return false;
  const joined = previous + next.join('');
  const parsed = parseMnemonics(joined);
  return parsed.length !== next.length + 1 || parsed[0] !== previous || parsed.some((mnemonic, index) => index > 0 && mnemonic !== next[index - 1]);
}

/**
 * How emphasis marks the stressed vowel. eSpeak's `<emphasis>` hardly lengthens words given as
 * phonemes (the espeak-tts test checks the result), so the stress itself says it: eSpeak's
 * emphasized stress, for strong emphasis with the vowel lengthened.
 */
const STRESS_BY_EMPHASIS: Readonly<Record<EmphasisLevel | 'neutral', { readonly before: string; readonly after: string }>> = {
  neutral: { before: "'", after: '' },
  none: { before: "'", after: '' },
  reduced: { before: ',', after: '' },
  moderate: { before: "'!", after: '' },
  strong: { before: "'!", after: ':' },
};

const cache = new Map<string, string | null>();
const CACHE_LIMIT = 20_000;

/**
 * The eSpeak phoneme input (without the `[[ ]]`) for an IPA pronunciation, with eSpeak's stress
 * mark right before the stressed vowel; `null` when the IPA holds a symbol outside the inventory.
 */
export function espeakPhonemes(ipa: string, emphasis: EmphasisLevel | null = null): string | null {
  const key = `${emphasis ?? 'neutral'} ${ipa}`;
  const cached = cache.get(key);
  if (cached !== undefined) return cached;
  const phones = splitPhones(ipa);
  let result: string | null = null;
  if (phones) {
    const stress = STRESS_BY_EMPHASIS[emphasis ?? 'neutral'];
    const out: string[] = [];
    let stressPending = false;
    for (const phone of phones) {
      if (phone === STRESS_MARK) {
        stressPending = true;
        continue;
      }
      const mnemonics = PHONE_MNEMONICS[phone]!;
      const stressed = stressPending && isVowel(phone);
      if (stressed) {
        out.push(stress.before);
        stressPending = false;
      } else if (fuses(out[out.length - 1], mnemonics)) {
        out.push(SEPARATOR);
      }
      out.push(...mnemonics);
      if (stressed && stress.after !== '') out.push(stress.after);
    }
    result = out.join('');
  }
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(key, result);
  return result;
}
