import type { DialectRenderer } from './dialect-renderer.js';
import { FIRST_NAMES, rewriteGermanSyntax } from './german-syntax.js';
import { dialectBelowHundred, dialectCardinal } from './number-words.js';
import { compoundWord } from './compound.js';
import { formalForm, formalVerb, isAcronym } from './formal-address.js';
import { pluralVerbs, secondPersonPlural } from './plural-verb.js';
import { regionData, ruleSkips, type RegionData } from './region-data.js';
import { sayTimesIn } from './swiss-time.js';
import { pronounceText } from './swiss-pronunciation.js';
import { placeholderIndex, pronounceNames, type DeploymentLexicon, type LexiconMatch } from './deployment-lexicon.js';
import type { RenderTrace } from './render-trace.js';
import type { PronouncedSpan } from '../types.js';

const TENS = ['zwanzig', 'dreissig', 'vierzig', 'fünfzig', 'sechzig', 'siebzig', 'achtzig', 'neunzig'];
/** Compound ordinals ("einundzwanzigsten"): from twenty, Swiss German ordinals end in -ischte. */
const COMPOUND_ORDINAL = new RegExp(`\\b((?:ein|zwei|drei|vier|fünf|sechs|sieben|acht|neun)und(?:${TENS.join('|')}))ste[nrs]?\\b`, 'giu');
/** Number words with hundreds or thousands, or compounds below a hundred. */
const LONG_NUMBER = new RegExp(`\\b\\p{L}*(?:hundert|tausend|und(?:${TENS.join('|')}))\\p{L}*\\b`, 'giu');
/** Ordinals of the tens ("dreissigsten"): from twenty, Swiss German ordinals end in -ischte. */
const TENS_ORDINAL = new RegExp(`\\b(${TENS.join('|')})ste[nrs]?\\b`, 'giu');

/** Private-use characters around text that is already dialect (never in input text). */
const FENCE_OPEN = '\uE000';
const FENCE_CLOSE = '\uE001';
/** Before a sentence-initial Sie that the syntax rewrite found to be the third person (Sie gingen). */
const THEY = '\uE002';
const WORD_OR_FENCED = /\uE000[^\uE001]*\uE001|\p{L}+/gu;

/**
 * Keeps the capital of the word it replaces (sentence starts, nouns); the data writes its own
 * capitals inside phrases ("uf Widerlose").
 */
function likeCase(original: string, replacement: string): string {
  if (replacement === '') return replacement;
  const first = original[0]!;
  return first === first.toUpperCase() && first !== first.toLowerCase() ? replacement[0]!.toUpperCase() + replacement.slice(1) : replacement;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Phrase patterns of a region, longest first, built once. */
const phrasePatterns = new Map<string, Array<[RegExp, string]>>();
function phrasesOf(data: RegionData): Array<[RegExp, string]> {
  let patterns = phrasePatterns.get(data.region);
  if (!patterns) {
    patterns = [...data.phrases.entries()]
      .sort((a, b) => b[0].length - a[0].length)
      .map(([german, dialect]) => [new RegExp(`(?<![\\p{L}])${escapeRegExp(german)}(?![\\p{L}])`, 'giu'), dialect]);
    phrasePatterns.set(data.region, patterns);
  }
  return patterns;
}

/** A word no lexicon knows, through the region's spelling rules. */
function byRules(word: string, data: RegionData): string {
  let out = word.toLowerCase();
  for (const rule of data.rules) {
    if (ruleSkips(rule, word, out)) continue;
    out = out.replace(rule.pattern, rule.replace);
  }
  return out;
}

/**
 * Renders Standard German into a Swiss German region: German-side syntax rewrites (perfect for
 * preterite, vom for the genitive, wo, z), then the region's data files: phrases,
 * formal verbs with "Sie", number words, the word lexicon, then spelling rules for the words
 * no lexicon knows. `hochdeutsch` keeps every word (Swiss spelling only). Regions without
 * their own file use the supra-regional `standard` data.
 */
export class SwissGermanRenderer implements DialectRenderer {
  /** The deployment lexicon, consulted before the region data; replaced whole on reload. */
  private lexicon: DeploymentLexicon | null = null;

  setLexicon(lexicon: DeploymentLexicon | null): void {
    this.lexicon = lexicon;
  }

  prepare(text: string, dialect: string | null): string {
    if (dialect === 'hochdeutsch') return text;
    const time = regionData(dialect ?? 'standard').time;
    return time ? sayTimesIn(text, time) : text;
  }

  pronounce(renderedText: string, dialect: string | null): PronouncedSpan[] | null {
    const region = dialect ?? 'standard';
    const own = this.lexicon?.pronunciations(region);
    // Swiss Standard German is read as written, but for the names the lexicon pronounces.
    if (dialect === 'hochdeutsch') return own ? pronounceNames(renderedText, own) : null;
    return pronounceText(renderedText, region, own);
  }

  render(text: string, dialect: string | null, trace?: RenderTrace): string {
    const swiss = text
      .replace(/ß/g, 'ss')
      .replace(/ẞ/g, 'SS')
      .replace(/[\uE000-\uE002]/g, '');
    if (dialect === 'hochdeutsch') return swiss;
    const data = regionData(dialect ?? 'standard');
    // The deployment lexicon first: each match stands as a placeholder word until the word pass.
    const found: LexiconMatch[] = [];
    const german = this.lexicon ? this.lexicon.mark(swiss, dialect ?? 'standard', found) : swiss;
    if (trace) for (const match of found) trace.add({ kind: 'lexicon', from: match.from, to: match.to, where: match.entry.where, ipa: match.entry.ipa });
    let out = rewriteGermanSyntax(german, data.finalClause, THEY);
    trace?.add({ kind: 'syntax', from: german, to: out });
    // Phrases are finished dialect: fenced off so the word pass below leaves them as written.
    for (const [pattern, dialectText] of phrasesOf(data))
      out = out.replace(pattern, (match) => `${FENCE_OPEN}${traced(trace, 'phrase', match, likeCase(match, dialectText))}${FENCE_CLOSE}`);
    for (const { pattern, replace } of data.patterns)
      out = out.replace(pattern, (match) => {
        const said = likeCase(match, replace);
        trace?.add({ kind: 'pattern', from: match, to: said, pattern: pattern.source });
        return said;
      });
    if (data.verbWithSie) {
      const { pattern, replace } = data.verbWithSie;
      out = out.replace(pattern, (match, stem: string) => {
        const said = formalVerb(match, stem, replace, data);
        return said === null ? match : traced(trace, 'verb', match, likeCase(match, said));
      });
    }
    out = secondPersonPlural(out, data, (said) => `${FENCE_OPEN}${said}${FENCE_CLOSE}`);
    out = pluralVerbs(out, data);
    out = out.replace(COMPOUND_ORDINAL, (match, cardinal: string) =>
      traced(trace, 'number', match, likeCase(match, `${dialectBelowHundred(cardinal.toLowerCase(), data) ?? cardinal}ischte`)),
    );
    out = out.replace(LONG_NUMBER, (match) => traced(trace, 'number', match, likeCase(match, dialectCardinal(match.toLowerCase(), data) ?? match)));
    out = out.replace(TENS_ORDINAL, (match, tens: string) =>
      traced(trace, 'number', match, likeCase(match, `${data.numbers.get(tens.toLowerCase()) ?? tens}ischte`)),
    );
    const rendered = out.replace(WORD_OR_FENCED, (word, offset: number, text: string) => {
      if (word.startsWith(FENCE_OPEN)) return word.slice(1, -1);
      const index = found.length > 0 ? placeholderIndex(word) : -1;
      if (index >= 0 && index < found.length) return found[index]!.to;
      if (isAcronym(word)) return traced(trace, 'word', word, word);
      // A first name and the surname after it are names, not dialect words (de Herbert Waldvogel).
      if (
        FIRST_NAMES.has(word) ||
        (word.length > 1 && text[offset - 1] === ' ' && /^\p{Lu}\p{Ll}/u.test(word) && FIRST_NAMES.has(wordBefore(text, offset - 1)))
      )
        return traced(trace, 'word', word, word);
      const lower = word.toLowerCase();
      const formal = text[offset - 1] === THEY ? null : formalForm(word, text, offset, data);
      const known = data.numbers.get(lower) ?? formal ?? data.words.get(lower);
      return traced(trace, 'word', word, likeCase(word, known ?? compoundWord(word, data, (part) => byRules(part, data)) ?? byRules(word, data)));
    });
    return rendered.includes(THEY) ? rendered.replaceAll(THEY, '') : rendered;
  }
}

/** The word that ends at `end` of `text` (before a space), or ''. */
function wordBefore(text: string, end: number): string {
  let start = end;
  while (start > 0 && start > end - 20 && LETTER.test(text[start - 1]!)) start--;
  return text.slice(start, end);
}
const LETTER = /\p{L}/u;

/** Reports a replacement to the trace, if there is one; returns what the text becomes. */
function traced(trace: RenderTrace | undefined, kind: 'phrase' | 'verb' | 'number' | 'word', from: string, to: string): string {
  trace?.add({ kind, from, to });
  return to;
}
