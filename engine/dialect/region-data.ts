import aargau from './data/aargau.json' with { type: 'json' };
import basel from './data/basel.json' with { type: 'json' };
import bern from './data/bern.json' with { type: 'json' };
import graubuenden from './data/graubuenden.json' with { type: 'json' };
import luzern from './data/luzern.json' with { type: 'json' };
import standard from './data/standard.json' with { type: 'json' };
import stgallen from './data/stgallen.json' with { type: 'json' };
import wallis from './data/wallis.json' with { type: 'json' };
import zurich from './data/zurich.json' with { type: 'json' };

/** One region's data file (`engine/dialect/data/<region>.json`); every row carries a source note. */
export interface RegionFile {
  readonly region: string;
  readonly inherits: string | null;
  readonly source: string;
  /** Multi-word phrases: German (lower case), dialect, source. */
  readonly phrases: ReadonlyArray<readonly [string, string, string]>;
  /** Words: German (lower case, may be several words), dialect, source. */
  readonly words: ReadonlyArray<readonly [string, string, string]>;
  /**
   * Formal address where it differs from the third person (Bern Dir for Sie, si for sie): German
   * (lower case), dialect, source. Used for a capitalised Sie, Ihnen, Ihr… (see `formal-address.ts`).
   */
  readonly formal?: ReadonlyArray<readonly [string, string, string]>;
  readonly numbers?: {
    readonly source: string;
    /** German number word → dialect number word. */
    readonly words: ReadonlyArray<readonly [string, string]>;
    /** The ones of a compound ("einundzwanzig"): German → dialect with its linking -e ("eine"). */
    readonly compoundOnes: ReadonlyArray<readonly [string, string]>;
  };
  /** Context rules on the text before word lookup, in order (for example articles before nouns). */
  readonly patterns?: ReadonlyArray<{ readonly pattern: string; readonly replace: string; readonly source: string }>;
  /** How clock times are said: hour words 1–12 and the words around them. */
  readonly time?: RegionTime & { readonly source: string };
  /** A formal verb with "Sie" ("drücken Sie"), as a case-sensitive regular expression; $1 is the verb's stem. */
  readonly verbWithSie?: { readonly pattern: string; readonly replace: string; readonly source: string };
  /** The ending of present plural verbs where it differs from the infinitive (Zürich -ed: mir spieled). */
  readonly pluralVerb?: {
    readonly ending: string;
    readonly source: string;
    /**
     * Plurals that do not take the ending: German verb (or its last part after a prefix:
     * stehen also in verstehen, entstehen), the region's plural (stönd), source.
     */
    readonly irregular?: ReadonlyArray<readonly [string, string, string]>;
    /**
     * Also where no pronoun marks the plural: the verb last in a subordinate clause (dass d
     * Priise stiiged) and after a plural noun at the start of a sentence (D Chind spieled).
     */
    readonly everyVerb?: boolean;
  };
  /** The pronoun ihr of the second person plural (ihr habt, wenn ihr kommt): Zürich ihr, Bern dir. */
  readonly secondPlural?: {
    readonly word: string;
    readonly source: string;
    /** The verb ending with it where the region has one of its own (Bern -et: dir spilet), on the lexicon's infinitive stem. */
    readonly ending?: string;
    /** Verbs whose second plural is not stem + ending: German infinitive, the region's form with ihr (chömet), source. */
    readonly irregular?: ReadonlyArray<readonly [string, string, string]>;
  };
  /**
   * The final clause um … zu where the region says it otherwise than für … z: the German-side
   * words with `$1` for the words between um and the infinitive ("zum $1": zum hälfe).
   */
  readonly finalClause?: { readonly replace: string; readonly source: string };
  /** Inherited spelling rules (by pattern) this region does not apply, each with why. */
  readonly withoutRules?: ReadonlyArray<{ readonly pattern: string; readonly source: string }>;
  /** Inherited spelling rules this region does not apply, by their `group` (open e: Wält, Gäld), each with why. */
  readonly withoutGroups?: ReadonlyArray<{ readonly group: string; readonly source: string }>;
  /** Ordered spelling rules for words no lexicon knows, each with its exceptions. */
  readonly rules: ReadonlyArray<{
    readonly pattern: string;
    readonly replace: string;
    readonly except: readonly string[];
    readonly source: string;
    /** Also over the single words the region inherits (a region's own ending, Graubünden -a, on the supra-regional words). */
    readonly inherited?: boolean;
    /** Only for words written in lower case (participles, verbs) or with a capital (nouns). */
    readonly written?: 'lower' | 'capital';
    /** A named set of rules that a region can drop whole (`withoutGroups`). */
    readonly group?: string;
  }>;
  /** How the region's spelling is pronounced; a region overrides single rows of what it inherits. */
  readonly sounds?: SoundsFile;
}

/** Pronunciation data of a region file (see `swiss-pronunciation.ts`). */
export interface SoundsFile {
  readonly source: string;
  /**
   * Letters → IPA phones: the longest letter group that matches wins; `^` anchors a group at the
   * start of the word, `$` at its end.
   */
  readonly graphemes: ReadonlyArray<readonly [string, string, string]>;
  /** Whole words said otherwise than their letters (loanwords): word (lower case), IPA, source. */
  readonly words: ReadonlyArray<readonly [string, string, string]>;
  /** Endings that carry the stress, ˈ before the stressed letters (ˈion, iˈtät): ending, source. */
  readonly stressedEndings?: ReadonlyArray<readonly [string, string]>;
  /** Prefixes that are never stressed (ver-, be-): prefix, source. */
  readonly unstressedPrefixes?: ReadonlyArray<readonly [string, string]>;
  /** Function words spoken without stress: word, source. */
  readonly unstressedWords?: ReadonlyArray<readonly [string, string]>;
  /** Words without a vowel that lean on the next word (d Frau, s Huus): word, source. */
  readonly proclitics?: ReadonlyArray<readonly [string, string]>;
}

/** Clock-time words of a region. */
export interface RegionTime {
  /** The hours one to twelve as said after "um" ("eis", "zwei", …, "föifi", …, "zwölfi"). */
  readonly hours: readonly string[];
  readonly half: string;
  readonly quarterPast: string;
  readonly quarterTo: string;
  readonly past: string;
  readonly to: string;
}

/** A region with its inheritance resolved: later (more specific) entries win. */
export interface RegionData {
  readonly region: string;
  readonly phrases: ReadonlyMap<string, string>;
  readonly words: ReadonlyMap<string, string>;
  /** Formal-address forms that differ from `words` (capitalised Sie, Ihnen, Ihr…). */
  readonly formal: ReadonlyMap<string, string>;
  readonly numbers: ReadonlyMap<string, string>;
  readonly compoundOnes: ReadonlyMap<string, string>;
  readonly patterns: ReadonlyArray<{ readonly pattern: RegExp; readonly replace: string }>;
  readonly verbWithSie: { readonly pattern: RegExp; readonly replace: string } | null;
  /** The present plural ending next to a subject pronoun (`plural-verb.ts`), or null. */
  readonly pluralVerb: string | null;
  /** Plurals that do not take that ending (stehen → stönd), also after a prefix (verstönd). */
  readonly irregularPlurals: ReadonlyMap<string, string>;
  /** Whether the plural ending applies also where no pronoun marks the plural (`pluralVerb.everyVerb`). */
  readonly everyPluralVerb: boolean;
  readonly time: RegionTime | null;
  /** The pronoun ihr of the second person plural (`RegionFile.secondPlural`), or null to leave ihr to the lexicon. */
  readonly secondPlural: string | null;
  /** Its own verb ending (`secondPlural.ending`: Bern -et), or null for the plural of wir and sie. */
  readonly secondPluralEnding: string | null;
  readonly secondPluralIrregular: ReadonlyMap<string, string>;
  /** The region's um … zu (`RegionFile.finalClause`), or null for für … z. */
  readonly finalClause: string | null;
  readonly rules: ReadonlyArray<RegionRule>;
  readonly sounds: RegionSounds;
}

/** A spelling rule for words no lexicon knows. */
export interface RegionRule {
  readonly group?: string;
  readonly pattern: RegExp;
  readonly replace: string;
  readonly except: ReadonlySet<string>;
  readonly written?: 'lower' | 'capital';
}

/** Whether a rule leaves a word alone: an exception (`done` is the word so far), or a word written otherwise than the rule asks. */
export function ruleSkips(rule: RegionRule, word: string, done: string): boolean {
  if (rule.except.has(done)) return true;
  if (rule.written === undefined) return false;
  const capital = word[0] !== word[0]!.toLowerCase();
  return rule.written === 'capital' ? !capital : capital;
}

/** A region's pronunciation data with inheritance resolved. */
export interface RegionSounds {
  /** Letter group (with `^`/`$` anchors) → IPA. */
  readonly graphemes: ReadonlyMap<string, string>;
  /** Word (lower case) → IPA with stress mark. */
  readonly words: ReadonlyMap<string, string>;
  readonly stressedEndings: readonly string[];
  readonly unstressedPrefixes: readonly string[];
  readonly unstressedWords: ReadonlySet<string>;
  readonly proclitics: ReadonlySet<string>;
}

/** The data files; their shape is checked by a test (every row three fields, every row a source). */
export const REGION_FILES: Readonly<Record<string, RegionFile>> = {
  standard: standard as unknown as RegionFile,
  zurich: zurich as unknown as RegionFile,
  bern: bern as unknown as RegionFile,
  basel: basel as unknown as RegionFile,
  luzern: luzern as unknown as RegionFile,
  stgallen: stgallen as unknown as RegionFile,
  aargau: aargau as unknown as RegionFile,
  graubuenden: graubuenden as unknown as RegionFile,
  wallis: wallis as unknown as RegionFile,
};
const FILES = REGION_FILES;

function chain(region: string): RegionFile[] {
  const file = FILES[region] ?? FILES['standard']!;
  return file.inherits ? [...chain(file.inherits), file] : [file];
}

const cache = new Map<string, RegionData>();

/** The data of a region merged over what it inherits. */
export function regionData(region: string): RegionData {
  let data = cache.get(region);
  if (data) return data;
  const files = chain(region);
  const phrases = new Map<string, string>();
  const words = new Map<string, string>();
  const formal = new Map<string, string>();
  const numbers = new Map<string, string>();
  const compoundOnes = new Map<string, string>();
  let verbWithSie: RegionData['verbWithSie'] = null;
  let pluralVerb: string | null = null;
  let irregularPlurals = new Map<string, string>();
  let everyPluralVerb = false;
  const patterns: Array<RegionData['patterns'][number]> = [];
  let time: RegionTime | null = null;
  let finalClause: string | null = null;
  let secondPlural: string | null = null;
  let secondPluralEnding: string | null = null;
  let secondPluralIrregular = new Map<string, string>();
  let rules: Array<RegionData['rules'][number]> = [];
  const graphemes = new Map<string, string>();
  const soundWords = new Map<string, string>();
  const stressedEndings = new Set<string>();
  const unstressedPrefixes = new Set<string>();
  const unstressedWords = new Set<string>();
  const proclitics = new Set<string>();
  const own = files[files.length - 1]!;
  const ownWords = new Set(own.words.map(([german]) => german));
  for (const file of files) {
    const dropped = new Set((file.withoutRules ?? []).map((rule) => rule.pattern));
    const droppedGroups = new Set((file.withoutGroups ?? []).map((row) => row.group));
    rules = rules.filter((rule) => !dropped.has(rule.pattern.source) && (rule.group === undefined || !droppedGroups.has(rule.group)));
    for (const [german, dialect] of file.phrases) phrases.set(german, dialect);
    for (const [german, dialect] of file.words) (german.includes(' ') ? phrases : words).set(german, dialect);
    for (const [german, dialect] of file.formal ?? []) formal.set(german, dialect);
    for (const [german, dialect] of file.numbers?.words ?? []) numbers.set(german, dialect);
    for (const [german, dialect] of file.numbers?.compoundOnes ?? []) compoundOnes.set(german, dialect);
    for (const rule of file.patterns ?? []) patterns.push({ pattern: new RegExp(rule.pattern, 'gu'), replace: rule.replace });
    if (file.time) time = file.time;
    if (file.finalClause) finalClause = file.finalClause.replace;
    if (file.secondPlural) {
      secondPlural = file.secondPlural.word;
      secondPluralEnding = file.secondPlural.ending ?? null;
      secondPluralIrregular = new Map((file.secondPlural.irregular ?? []).map(([german, dialect]) => [german, dialect]));
    }
    if (file.pluralVerb) {
      pluralVerb = file.pluralVerb.ending;
      irregularPlurals = new Map((file.pluralVerb.irregular ?? []).map(([german, dialect]) => [german, dialect]));
      everyPluralVerb = file.pluralVerb.everyVerb === true;
    }
    if (file.verbWithSie) verbWithSie = { pattern: new RegExp(file.verbWithSie.pattern, 'gu'), replace: file.verbWithSie.replace };
    for (const rule of file.rules)
      rules.push({
        pattern: new RegExp(rule.pattern, 'u'),
        replace: rule.replace,
        except: new Set(rule.except),
        ...(rule.written ? { written: rule.written } : {}),
        ...(rule.group ? { group: rule.group } : {}),
      });
    const sounds = file.sounds;
    for (const [letters, ipa] of sounds?.graphemes ?? []) graphemes.set(letters, ipa);
    for (const [word, ipa] of sounds?.words ?? []) soundWords.set(word, ipa);
    for (const [ending] of sounds?.stressedEndings ?? []) stressedEndings.add(ending);
    for (const [prefix] of sounds?.unstressedPrefixes ?? []) unstressedPrefixes.add(prefix);
    for (const [word] of sounds?.unstressedWords ?? []) unstressedWords.add(word);
    for (const [word] of sounds?.proclitics ?? []) proclitics.add(word);
  }
  for (const rule of own.rules.filter((row) => row.inherited && !row.written)) {
    const pattern = new RegExp(rule.pattern, 'u');
    const except = new Set(rule.except);
    for (const [german, dialect] of words)
      if (!ownWords.has(german) && !dialect.includes(' ') && !except.has(dialect.toLowerCase())) words.set(german, dialect.replace(pattern, rule.replace));
  }
  const sounds: RegionSounds = {
    graphemes,
    words: soundWords,
    stressedEndings: [...stressedEndings],
    unstressedPrefixes: [...unstressedPrefixes],
    unstressedWords,
    proclitics,
  };
  data = {
    region,
    phrases,
    words,
    formal,
    numbers,
    compoundOnes,
    patterns,
    verbWithSie,
    pluralVerb,
    irregularPlurals,
    everyPluralVerb,
    time,
    finalClause,
    secondPlural,
    secondPluralEnding,
    secondPluralIrregular,
    rules,
    sounds,
  };
  cache.set(region, data);
  return data;
}
