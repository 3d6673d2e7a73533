import type { PronouncedSpan } from '../types.js';
import { regionData, type RegionSounds } from './region-data.js';
import { isVowel, splitPhones, STRESS_MARK } from './swiss-phones.js';

/** A letter group of the region's table, compiled for matching. */
interface Grapheme {
  readonly letters: string;
  readonly atStart: boolean;
  readonly atEnd: boolean;
  readonly phones: readonly string[];
}

/** A region's pronunciation rules, compiled once. */
interface CompiledSounds {
  readonly sounds: RegionSounds;
  /** Letter groups by their first letter, longest first. */
  readonly byFirstLetter: ReadonlyMap<string, readonly Grapheme[]>;
  /** Pronounced words (IPA or `null`) already worked out; bounded, cleared when full. */
  readonly cache: Map<string, string | null>;
}

/** Two-consonant onsets a stressed syllable may begin with (for placing the IPA stress mark). */
const ONSETS = new Set([
  'ʃt',
  'ʃp',
  'ʃl',
  'ʃm',
  'ʃn',
  'ʃʋ',
  'ʃr',
  'tr',
  'dr',
  'pr',
  'br',
  'kr',
  'ɡr',
  'fr',
  'pl',
  'bl',
  'kl',
  'ɡl',
  'fl',
  'tsʋ',
  'kʋ',
  'ʃk',
  'kxr',
  'kxl',
  'xr',
  'xl',
  'xn',
  'tsj',
  'ɡj',
]);
const CACHE_LIMIT = 20_000;
/** A word the rules may read: letters, optionally with apostrophes between them (d'Frau, isch's). */
const WORD = /^\p{L}+(?:['’]\p{L}+)*$/u;
/** Leading punctuation, the core, trailing punctuation of a whitespace-free chunk. */
const CHUNK = /^([\p{P}\p{S}]*)(.*?)([\p{P}\p{S}]*)$/su;

const compiled = new Map<string, CompiledSounds>();

function compile(region: string): CompiledSounds {
  let entry = compiled.get(region);
  if (entry) return entry;
  const sounds = regionData(region).sounds;
  const byFirstLetter = new Map<string, Grapheme[]>();
  for (const [key, ipa] of sounds.graphemes) {
    const phones = ipa === '' ? [] : splitPhones(ipa);
    if (!phones) throw new Error(`pronunciation data of ${region}: "${key}" → "${ipa}" holds a symbol outside the phone inventory`);
    const atStart = key.startsWith('^');
    const atEnd = key.endsWith('$');
    const letters = key.slice(atStart ? 1 : 0, atEnd ? -1 : undefined);
    const list = byFirstLetter.get(letters[0]!) ?? [];
    list.push({ letters, atStart, atEnd, phones });
    byFirstLetter.set(letters[0]!, list);
  }
  for (const list of byFirstLetter.values()) list.sort((a, b) => b.letters.length - a.letters.length);
  for (const [word, ipa] of sounds.words) {
    if (!splitPhones(ipa)) throw new Error(`pronunciation data of ${region}: the word "${word}" → "${ipa}" holds a symbol outside the phone inventory`);
  }
  entry = { sounds, byFirstLetter, cache: new Map() };
  compiled.set(region, entry);
  return entry;
}

/** A phone of a word and where its letters start. */
interface PlacedPhone {
  phone: string;
  readonly letterIndex: number;
  /** Just past the letters it was read from. */
  readonly letterEnd: number;
  /** Written as a single `e`: the vowel that is reduced to schwa when unstressed. */
  readonly plainE: boolean;
}

/**
 * Reads the letters of a lower-case word into phones; `null` at a letter the table lacks. A stem
 * after an unstressed prefix starts like a word (bestelle, Verstand: st is [ʃt]).
 */
function lettersToPhones(word: string, rules: CompiledSounds): PlacedPhone[] | null {
  const phones: PlacedPhone[] = [];
  const stemStart = rules.sounds.unstressedPrefixes.find((prefix) => word.length > prefix.length + 2 && word.startsWith(prefix))?.length ?? 0;
  let at = 0;
  while (at < word.length) {
    const wordStart = at === 0 || at === stemStart;
    const match = rules.byFirstLetter.get(word[at]!)?.find(
      (group) =>
        word.startsWith(group.letters, at) &&
        (!group.atStart || wordStart) &&
        (!group.atEnd || at + group.letters.length === word.length) &&
        // No letter group reaches over the prefix boundary (be-hobe is not b-eh-obe).
        !(at < stemStart && at + group.letters.length > stemStart),
    );
    if (!match) return null;
    const letterEnd = at + match.letters.length;
    for (const phone of match.phones) phones.push({ phone, letterIndex: at, letterEnd, plainE: match.letters === 'e' && phone === 'e' });
    at += match.letters.length;
  }
  return phones;
}

/** Index (into `phones`) of the vowel that carries the stress, or -1 for an unstressed word. */
function stressedVowel(word: string, phones: readonly PlacedPhone[], sounds: RegionSounds): number {
  const vowels = phones.flatMap((placed, index) => (isVowel(placed.phone) ? [index] : []));
  if (vowels.length === 0 || sounds.unstressedWords.has(word)) return -1;
  // The longest matching ending; its stress mark sits before the letters of the stressed vowel.
  const ending = sounds.stressedEndings
    .map((marked) => ({ letters: marked.replace(STRESS_MARK, ''), stressAt: marked.indexOf(STRESS_MARK) }))
    .filter(({ letters }) => word.length > letters.length && word.endsWith(letters))
    .sort((a, b) => b.letters.length - a.letters.length)[0];
  if (ending !== undefined) {
    const from = word.length - ending.letters.length + Math.max(0, ending.stressAt);
    const vowel = vowels.find((index) => phones[index]!.letterEnd > from);
    if (vowel !== undefined) return vowel;
  }
  for (const prefix of sounds.unstressedPrefixes) {
    if (!word.startsWith(prefix)) continue;
    const after = vowels.filter((index) => phones[index]!.letterIndex >= prefix.length);
    // Only a real prefix: what follows must hold more than one final -e ("Erde", "besser" are stems).
    if (after.length >= 2 || (after.length === 1 && !phones[after[0]!]!.plainE)) return after[0]!;
  }
  return vowels[0]!;
}

/** Where the stress mark goes: before the stressed syllable's onset. */
function onsetStart(phones: readonly PlacedPhone[], vowel: number): number {
  let start = vowel;
  while (start > 0 && !isVowel(phones[start - 1]!.phone)) start -= 1;
  if (start === 0) return 0;
  const consonants = phones.slice(start, vowel).map((placed) => placed.phone);
  if (consonants.length >= 2 && ONSETS.has(consonants.slice(-2).join(''))) return vowel - 2;
  return consonants.length >= 1 ? vowel - 1 : vowel;
}

/** The IPA of a lower-case word without apostrophes, from the region's rules. */
function wordByRules(word: string, rules: CompiledSounds): string | null {
  const phones = lettersToPhones(word, rules);
  if (!phones || phones.length === 0) return null;
  const stressed = stressedVowel(word, phones, rules.sounds);
  // An unstressed e is a schwa (final -e, -er, -el, -en, prefixes, compounds, function words);
  // loanwords that keep a full e (Telefon) are in the word list.
  for (const [index, placed] of phones.entries()) if (placed.plainE && index !== stressed) placed.phone = 'ə';
  const mark = stressed >= 0 ? onsetStart(phones, stressed) : -1;
  return phones.map((placed, index) => (index === mark ? STRESS_MARK : '') + placed.phone).join('');
}

/**
 * The Swiss German pronunciation (IPA with a stress mark) of one written word in a region, or
 * `null` when the word is not one the rules read (digits, symbols, abbreviations in capitals,
 * letters the table lacks): the engine then reads it as written.
 */
export function pronounceWord(word: string, region: string): string | null {
  const rules = compile(region);
  const cached = rules.cache.get(word);
  if (cached !== undefined) return cached;
  const letters = word.replace(/’/g, "'");
  const lower = letters.toLowerCase();
  let ipa = rules.sounds.words.get(lower) ?? null;
  if (ipa === null) {
    const parts = letters.split('-');
    const readable = parts.every((part) => WORD.test(part) && !(part.length >= 2 && part === part.toUpperCase()));
    // A hyphenated compound (Stärn-Taschte) is one word, stressed on its first part.
    const said = readable ? parts.map((part) => wordByRules(part.toLowerCase().replace(/'/g, ''), rules)) : [];
    if (said.length > 0 && said.every((part) => part !== null)) ipa = said.map((part, index) => (index === 0 ? part : part!.replace(STRESS_MARK, ''))).join('');
  }
  if (rules.cache.size >= CACHE_LIMIT) rules.cache.clear();
  rules.cache.set(word, ipa);
  return ipa;
}

/** Joins spans that carry no pronunciation, so the engine gets as few pieces as possible. */
function pushSpan(spans: PronouncedSpan[], span: PronouncedSpan): void {
  if (span.text === '') return;
  const last = spans[spans.length - 1];
  if (last && last.ipa === null && span.ipa === null) spans[spans.length - 1] = { text: last.text + span.text, ipa: null };
  else spans.push(span);
}

/** Makes a vowelless word that leans on the next one (d Frau) one spoken word with it. */
function leanProclitics(spans: readonly PronouncedSpan[], proclitics: ReadonlySet<string>): PronouncedSpan[] {
  const out: PronouncedSpan[] = [];
  for (let index = 0; index < spans.length; index += 1) {
    const span = spans[index]!;
    const next = spans[index + 2];
    if (span.ipa !== null && proclitics.has(span.text.toLowerCase()) && spans[index + 1]?.text === ' ' && next?.ipa) {
      const ipa = next.ipa.startsWith(STRESS_MARK) ? `${STRESS_MARK}${span.ipa}${next.ipa.slice(1)}` : `${span.ipa}${next.ipa}`;
      out.push({ text: `${span.text} ${next.text}`, ipa });
      index += 2;
    } else {
      out.push(span);
    }
  }
  return out;
}

/**
 * Splits a rendered dialect text into spans that together are exactly the text: each word the
 * rules read carries its IPA; spaces, punctuation and words read as written carry `null`. A
 * word without a vowel that leans on the next one (d Frau) is one spoken word with it.
 * `own`: pronunciations that win over the rules (the deployment lexicon's), by the word in
 * lower case with ’ written '.
 */
export function pronounceText(text: string, region: string, own?: ReadonlyMap<string, string>): PronouncedSpan[] {
  const spans: PronouncedSpan[] = [];
  for (const chunk of text.split(/(\s+)/u)) {
    const [, leading = '', core = '', trailing = ''] = CHUNK.exec(chunk) ?? [];
    pushSpan(spans, { text: leading, ipa: null });
    const ipa = core === '' || /\s/u.test(core) ? null : (own?.get(core.replace(/’/g, "'").toLowerCase()) ?? pronounceWord(core, region));
    pushSpan(spans, { text: core, ipa });
    pushSpan(spans, { text: trailing, ipa: null });
  }
  return leanProclitics(spans, compile(region).sounds.proclitics);
}
