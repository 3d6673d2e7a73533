import { irregularPlural } from './plural-verb.js';
import type { RegionData } from './region-data.js';

/** Text before a word that starts a sentence: nothing, or an end mark with quotes and spaces. */
const SENTENCE_START = /(?:^|[.!?:;])[\s"'«»‹›„“”‘’()[\]\uE000\uE001-]*$/u;
/** The same inside a longer text, where the window's start is not the text's. */
const SENTENCE_END_BEFORE = /[.!?:;][\s"'«»‹›„“”‘’()[\]\uE000\uE001-]*$/u;
/** What follows a sentence-initial "Sie": the next word. */
const NEXT_WORD = /^\s+(\p{L}+)/u;
/**
 * Singular verb forms that show a sentence-initial "Sie" is "she" (Sie ist, Sie kann, Sie ging):
 * the formal Sie takes the plural (Sie sind, Sie können).
 */
const SINGULAR_VERBS = new Set([
  'war',
  'kann',
  'will',
  'muss',
  'soll',
  'darf',
  'mag',
  'weiss',
  'sei',
  'habe',
  'hatte',
  'wurde',
  'konnte',
  'wollte',
  'musste',
  'sollte',
  'durfte',
  'ging',
  'kam',
  'sah',
  'gab',
  'lag',
  'stand',
  'sass',
  'blieb',
  'fand',
  'nahm',
  'sprach',
  'lief',
  'fuhr',
  'fiel',
  'schrieb',
  'las',
  'rief',
  'trug',
  'zog',
  'starb',
  'wuchs',
]);

/** Whether the word at `offset` of `text` begins a sentence. */
export function startsSentence(text: string, offset: number): boolean {
  return offset <= 12 ? SENTENCE_START.test(text.slice(0, offset)) : SENTENCE_END_BEFORE.test(text.slice(offset - 12, offset));
}

/**
 * The region's formal form of a capitalised Sie, Ihnen, Ihr… that addresses the listener, or
 * null. Inside a sentence a capital marks formal address; lower-case sie, ihr, ihnen are the
 * third person. At the start of a sentence "Sie" with a singular verb (Sie ist, Sie kann, Sie
 * arbeitet) is "she"; Ihr…, and Sie with a plural verb, stay formal (the hotline's Sie können …).
 */
export function formalForm(word: string, text: string, offset: number, data: RegionData): string | null {
  if (data.formal.size === 0) return null;
  const lower = word.toLowerCase();
  const form = data.formal.get(lower);
  if (form === undefined || word[0] === lower[0]) return null;
  if (lower === 'sie' && startsSentence(text, offset)) {
    const next = NEXT_WORD.exec(text.slice(offset + word.length))?.[1];
    if (next && next === next.toLowerCase() && (SINGULAR_VERBS.has(next) || /[^e]t$|^ist$/u.test(next) || /te$/u.test(next))) return null;
  }
  return form;
}

/** An abbreviation in capitals (SBB, UNO): kept as written, and read letter by letter. */
export function isAcronym(word: string): boolean {
  return word.length >= 2 && word === word.toUpperCase() && word !== word.toLowerCase();
}

/**
 * The formal verb with Sie ("drücken Sie" → "drücked Si"), from the region's `verbWithSie`
 * template, or null to leave the words to the lexicon: a verb the lexicon gives a finite form
 * (haben → händ, können → chönd) keeps it; one it gives an infinitive in -e, -a, -ä or -u
 * (bleiben → bliibe) takes the template on the dialect stem (bliibed Si); a verb with an
 * irregular plural in the region's data takes that (gehen Sie → gönd Si).
 */
export function formalVerb(match: string, stem: string, template: string, data: RegionData): string | null {
  const german = match.slice(0, match.indexOf(' ')).toLowerCase();
  // The formal verb is the plural (gehen Sie, Sie gehen): a short verb's own plural (gönd Si), not the infinitive's stem.
  const irregular = irregularPlural(german, data);
  if (irregular !== undefined) return template.replace(/\$1\p{L}*/u, irregular);
  const known = data.words.get(german);
  if (known !== undefined && !/^\p{L}+[eaäu]$/u.test(known)) return null;
  const said = template.replace('$1', known === undefined ? stem.toLowerCase() : known.slice(0, -1));
  // A template that gives the lexicon's own form (Basel lüte Si) leaves it to the lexicon.
  return known !== undefined && said.startsWith(`${known} `) ? null : said;
}
