/**
 * A deployment's own words for Swiss German rendering (`lexicon.yaml`, loaded and checked by
 * `src/speech/lexicon-loader.ts`): words and phrases with their dialect form for every region
 * or per region, and pronunciations in IPA over the Swiss phones (`swiss-phones.ts`). The
 * renderer consults it before its built-in data; its pronunciations win in the pronunciation
 * pass. Built once per file and never changed: a reload builds a new one.
 */
import type { PronouncedSpan } from '../types.js';
import { splitPhones, STRESS_MARK, SWISS_CONSONANTS, SWISS_VOWELS } from './swiss-phones.js';

/** One checked entry. */
export interface LexiconEntry {
  /** The word or phrase as the file writes it (ß written ss), matched case-insensitively as whole words. */
  readonly german: string;
  /** Its dialect form in every region (`null`: none; see {@link regions}). */
  readonly dialect: string | null;
  /** Dialect forms of single regions, over {@link dialect}. */
  readonly regions: ReadonlyMap<string, string>;
  /** IPA per spoken word (split at spaces), or `null` when the entry gives no pronunciation. */
  readonly ipa: readonly string[] | null;
  /** Where the entry is (`FILE:LINE:COLUMN`), for `sprachrohr dialect --explain`. */
  readonly where: string;
}

/** A candidate match of one region: an entry and what it becomes there. */
interface Candidate {
  /** The German as matched: lower case. */
  readonly lower: string;
  /** What the match becomes; `null`: it stays as written (a name with only a pronunciation). */
  readonly output: string | null;
  readonly entry: LexiconEntry;
}

/** One region's view of the lexicon, built once. */
interface RegionLexicon {
  /** Candidates by the lower-case first word of their German, longest first. */
  readonly byFirstWord: ReadonlyMap<string, readonly Candidate[]>;
  /** Spoken word (lower case, ’ as ') → IPA. */
  readonly pronunciations: ReadonlyMap<string, string>;
}

/** What a word or phrase consists of for matching: runs of letters and digits. */
const TOKEN = /[\p{L}\p{N}]+/gu;
const WORD_CHARACTER = /[\p{L}\p{N}]/u;
/** Leading punctuation, the core, trailing punctuation of a whitespace-free chunk (as the pronunciation pass splits). */
const CHUNK = /^([\p{P}\p{S}]*)(.*?)([\p{P}\p{S}]*)$/su;

/**
 * A match stands in the text as a placeholder until the word pass: one word, capitalised like
 * the match and ending like it where German-side rewrites look at a noun's ending (der
 * Stadtwerke → vo de …), so that the passes in between (those rewrites, articles before nouns)
 * see a word where the match was and leave it alone: thorn (Þ, þ), the index in consonants that
 * make no German form the rewrites look for, thorn. Letters of Latin-1, so that the text stays
 * a one-byte string (V8 runs the passes' regular expressions on those about twice as fast);
 * no text writes such a word, and an index past the matches of the text stands for nothing.
 */
const PLACEHOLDER_UPPER = 'Þ';
const PLACEHOLDER_LOWER = 'þ';
const DIGIT_LETTERS = 'bcdfghjklm';
/** Noun endings the genitive rewrite looks for; none ends in a letter another rewrite takes off. */
const TELLING_ENDING = /(?:ung|keit|heit|schaft|e)$/iu;
const PLACEHOLDER = /^[Þþ]([bcdfghjklm]+)þ(?:ung|keit|heit|schaft|e)?$/u;
/** A placeholder inside a text. */
export const PLACEHOLDER_WORD = /[Þþ][bcdfghjklm]+þ(?:ung|keit|heit|schaft|e)?/gu;

function placeholder(index: number, match: string): string {
  const digits = String(index).replace(/\d/g, (digit) => DIGIT_LETTERS[Number(digit)]!);
  const upper = match[0] !== match[0]!.toLowerCase();
  const ending = TELLING_ENDING.exec(match)?.[0].toLowerCase() ?? '';
  return `${upper ? PLACEHOLDER_UPPER : PLACEHOLDER_LOWER}${digits}${PLACEHOLDER_LOWER}${ending}`;
}

/** The index a placeholder word stands for, or -1 for any other word. */
export function placeholderIndex(word: string): number {
  const code = word.charCodeAt(0);
  if (code !== 0xde && code !== 0xfe) return -1;
  const match = PLACEHOLDER.exec(word);
  return match ? Number(match[1]!.replace(/[a-z]/g, (letter) => String(DIGIT_LETTERS.indexOf(letter)))) : -1;
}

/** The key a spoken word is looked up by: lower case, ’ written '. */
export function spokenKey(word: string): string {
  return word.replace(/’/g, "'").toLowerCase();
}

/** Keeps the capital of the word it replaces (as the renderer does). */
function likeCase(original: string, replacement: string): string {
  if (replacement === '') return replacement;
  const first = original[0]!;
  return first === first.toUpperCase() && first !== first.toLowerCase() ? replacement[0]!.toUpperCase() + replacement.slice(1) : replacement;
}

/** The words of a spoken form as the pronunciation pass sees them (punctuation around them dropped). */
export function spokenWords(text: string): string[] {
  return text
    .split(/\s+/u)
    .map((chunk) => CHUNK.exec(chunk)?.[2] ?? '')
    .filter((core) => core !== '');
}

/**
 * Notations of the same or the nearest Swiss phone, written as the region data writes them:
 * ASCII stress, length mark and g; slashes, brackets, tie bars and syllable dots dropped; χ as
 * x (Swiss ch is [x] everywhere), uvular and tapped r as r (Swiss r is spoken as eSpeak's
 * trill), v as ʋ.
 */
const IPA_NOTATIONS: ReadonlyArray<readonly [RegExp, string]> = [
  [/'/g, STRESS_MARK],
  [/:/g, 'ː'],
  [/g/g, 'ɡ'],
  [/[\u0361\u035c.ˌ]/g, ''],
  [/χ/g, 'x'],
  [/[ʁʀɾ]/g, 'r'],
  [/v/g, 'ʋ'],
];

/** An IPA pronunciation as the pronunciation pass takes it: notations unified, split into words. */
export function ipaWords(ipa: string): string[] {
  let text = ipa.replace(/[/[\]]/g, ' ');
  for (const [pattern, replacement] of IPA_NOTATIONS) text = text.replace(pattern, replacement);
  return text.split(/\s+/u).filter((word) => word !== '');
}

const SYMBOLS = [...SWISS_VOWELS, ...SWISS_CONSONANTS, STRESS_MARK].sort((a, b) => b.length - a.length);

/**
 * What keeps an IPA word (see {@link ipaWords}) from being spoken, or null: each symbol must be
 * one of the Swiss phones, which every engine with phoneme input maps.
 */
export function ipaProblem(word: string): string | null {
  let at = 0;
  while (at < word.length) {
    const symbol = SYMBOLS.find((candidate) => word.startsWith(candidate, at));
    if (!symbol)
      return (
        `${JSON.stringify(String.fromCodePoint(word.codePointAt(at)!))} is not one of the Swiss phones the pronunciation speaks ` +
        `(vowels ${SWISS_VOWELS.join(' ')}; consonants ${SWISS_CONSONANTS.join(' ')}; ${STRESS_MARK} before the stressed syllable)`
      );
    at += symbol.length;
  }
  return splitPhones(word) ? null : 'not readable as Swiss phones';
}

/** `hochdeutsch` keeps the German words: only entries that are names (no dialect form) apply there. */
const KEEPS_WORDS = 'hochdeutsch';

/** What the lexicon found in a text: its matches, in order, as placeholders stand for them. */
export interface LexiconMatch {
  /** The text as matched. */
  readonly from: string;
  /** What it becomes (the match itself for a name). */
  readonly to: string;
  readonly entry: LexiconEntry;
}

/** A deployment lexicon, built for a list of regions. */
export class DeploymentLexicon {
  private readonly byRegion = new Map<string, RegionLexicon>();

  /**
   * @param entries checked entries (the loader checks the German is unique, the IPA readable and
   *   as many words as every spoken form, and the regions known)
   * @param regions the regions (dialect ids) it is built for
   */
  constructor(
    readonly entries: readonly LexiconEntry[],
    regions: readonly string[],
  ) {
    for (const region of regions) this.byRegion.set(region, build(entries, region));
  }

  /** Number of entries. */
  get size(): number {
    return this.entries.length;
  }

  /**
   * Replaces each entry found in `text` (longest first, whole words, case-insensitive) by a
   * placeholder word and appends the match to `found`; the word pass puts `found[i].to` where
   * placeholder i is (see {@link placeholderIndex}). Returns the text unchanged when nothing matched.
   */
  mark(text: string, region: string, found: LexiconMatch[]): string {
    const lexicon = this.byRegion.get(region);
    if (!lexicon || lexicon.byFirstWord.size === 0) return text;
    let out = '';
    let cursor = 0;
    TOKEN.lastIndex = 0;
    for (let token = TOKEN.exec(text); token !== null; token = TOKEN.exec(text)) {
      const candidates = lexicon.byFirstWord.get(token[0].toLowerCase());
      if (!candidates) continue;
      const start = token.index;
      for (const candidate of candidates) {
        const end = start + candidate.lower.length;
        if (end > text.length || (end < text.length && WORD_CHARACTER.test(text[end]!))) continue;
        const matched = text.slice(start, end);
        if (matched.toLowerCase() !== candidate.lower) continue;
        out += text.slice(cursor, start) + placeholder(found.length, matched);
        found.push({ from: matched, to: candidate.output === null ? matched : likeCase(matched, candidate.output), entry: candidate.entry });
        cursor = end;
        TOKEN.lastIndex = end;
        break;
      }
    }
    return cursor === 0 ? text : out + text.slice(cursor);
  }

  /** The lexicon's pronunciations of spoken words in a region (lower case, ’ as '), or `undefined` when it has none. */
  pronunciations(region: string): ReadonlyMap<string, string> | undefined {
    const map = this.byRegion.get(region)?.pronunciations;
    return map && map.size > 0 ? map : undefined;
  }
}

/** Whether a region keeps German words (hochdeutsch). */
export function keepsWords(region: string): boolean {
  return region === KEEPS_WORDS;
}

/** What an entry is spoken as in a region: its dialect form, the German for a name, or `null` when it does not apply there. */
export function spokenForm(entry: LexiconEntry, region: string): { readonly output: string | null; readonly spoken: string } | null {
  // A name (no dialect form anywhere) stays as written in every region and carries its pronunciation.
  if (entry.dialect === null && entry.regions.size === 0) return { output: null, spoken: entry.german };
  if (keepsWords(region)) return null;
  const dialect = entry.regions.get(region) ?? entry.dialect;
  return dialect === null ? null : { output: dialect, spoken: dialect };
}

function build(entries: readonly LexiconEntry[], region: string): RegionLexicon {
  const byFirstWord = new Map<string, Candidate[]>();
  const pronunciations = new Map<string, string>();
  for (const entry of entries) {
    const form = spokenForm(entry, region);
    if (!form) continue;
    const lower = entry.german.toLowerCase();
    const first = lower.match(TOKEN)?.[0];
    if (first === undefined) continue;
    const list = byFirstWord.get(first) ?? [];
    list.push({ lower, output: form.output, entry });
    byFirstWord.set(first, list);
    if (entry.ipa) spokenWords(form.spoken).forEach((word, index) => pronunciations.set(spokenKey(word), entry.ipa![index]!));
  }
  for (const list of byFirstWord.values()) list.sort((a, b) => b.lower.length - a.lower.length);
  return { byFirstWord, pronunciations };
}

/**
 * Spans of a text read as written but for the words the lexicon pronounces (names in
 * `hochdeutsch`); `null` when none of its words is one, so the engine reads the text as before.
 */
export function pronounceNames(text: string, pronunciations: ReadonlyMap<string, string>): PronouncedSpan[] | null {
  const spans: PronouncedSpan[] = [];
  let plain = '';
  let any = false;
  for (const chunk of text.split(/(\s+)/u)) {
    const [, leading = '', core = '', trailing = ''] = CHUNK.exec(chunk) ?? [];
    const ipa = core === '' || /\s/u.test(core) ? undefined : pronunciations.get(spokenKey(core));
    if (ipa === undefined) {
      plain += chunk;
      continue;
    }
    any = true;
    plain += leading;
    if (plain !== '') spans.push({ text: plain, ipa: null });
    spans.push({ text: core, ipa });
    plain = trailing;
  }
  if (!any) return null;
  if (plain !== '') spans.push({ text: plain, ipa: null });
  return spans;
}
