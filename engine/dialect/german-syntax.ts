import syntax from './data/german-syntax.json' with { type: 'json' };

/** The German-side rewrite data (`engine/dialect/data/german-syntax.json`). */
export interface GermanSyntaxFile {
  readonly source: string;
  /** Present tense of the auxiliaries: ich, du, er/sie/es, wir, ihr, sie/Sie. */
  readonly auxiliaries: { readonly source: string; readonly sein: readonly string[]; readonly haben: readonly string[] };
  /** Preterites of modal verbs: their participle stands before the clause's infinitive. */
  readonly modals: readonly string[];
  /** A modal infinitive after zu → the German word whose region form is the modal's infinitive (können → gekonnt: z chöne). */
  readonly modalInfinitive: { readonly source: string; readonly words: ReadonlyArray<readonly [string, string]> };
  /** Preterite-looking forms that are the Konjunktiv II (sollte: sött) and stay as they are. */
  readonly subjunctive: { readonly source: string; readonly words: readonly string[] };
  readonly separableParticles: { readonly source: string; readonly words: readonly string[] };
  /** Weak preterites by rule: stems that take sein, and words in -te/-ten that are not preterites. */
  readonly weakPreterite: { readonly source: string; readonly sein: readonly string[]; readonly not: readonly string[] };
  /** Words spelt like a form of the table that are other words (Sankt). */
  readonly notPreterite: { readonly source: string; readonly words: readonly string[] };
  /** Preterite (first/third person singular), auxiliary, participle, source. */
  readonly preterite: ReadonlyArray<readonly [string, 'sein' | 'haben', string, string]>;
  /** Common first names: `$MALE` and `$FEMALE` in the patterns stand for these lists. */
  readonly firstNames: { readonly source: string; readonly male: readonly string[]; readonly female: readonly string[] };
  /**
   * Ordered rewrites on the text: genitive, relative pronouns, `zu` + infinitive. A `finalClause`
   * row is the final clause um … zu, which a region may say otherwise (`RegionFile.finalClause`).
   */
  readonly patterns: ReadonlyArray<{ readonly pattern: string; readonly replace: string; readonly source: string; readonly finalClause?: boolean }>;
}

/** The data file, typed; its shape is checked by a test. */
export const GERMAN_SYNTAX = syntax as unknown as GermanSyntaxFile;

/** Grammatical person as the auxiliaries list it. */
const enum Person {
  FirstSingular = 0,
  SecondSingular = 1,
  ThirdSingular = 2,
  FirstPlural = 3,
  SecondPlural = 4,
  ThirdPlural = 5,
}

interface PreteriteForm {
  readonly auxiliary: 'sein' | 'haben';
  readonly participle: string;
  readonly modal: boolean;
  readonly passive: boolean;
  /** The person the ending tells; singular forms may still be "ich". */
  readonly person: Person;
}

/** Every inflected preterite form (war, warst, waren, wart) → what it becomes. */
const FORMS: ReadonlyMap<string, PreteriteForm> = (() => {
  const forms = new Map<string, PreteriteForm>();
  for (const [stem, auxiliary, participle] of GERMAN_SYNTAX.preterite) {
    const base = { auxiliary, participle, modal: GERMAN_SYNTAX.modals.includes(stem), passive: stem === 'wurde' };
    // war → warst, waren, wart; hatte → hattest, hatten, hattet; fand → fandest, fanden, fandet.
    const linkingE = stem.endsWith('e') ? '' : 'e';
    const dentalE = /[dts]$/u.test(stem) ? 'e' : '';
    forms.set(stem, { ...base, person: Person.ThirdSingular });
    forms.set(`${stem}${dentalE}st`, { ...base, person: Person.SecondSingular });
    forms.set(`${stem}${linkingE}n`, { ...base, person: Person.ThirdPlural });
    forms.set(`${stem}${dentalE}t`, { ...base, person: Person.SecondPlural });
  }
  return forms;
})();

const NOT_PRETERITE = new Set([...GERMAN_SYNTAX.notPreterite.words, ...GERMAN_SYNTAX.subjunctive.words]);

/** The stem of every inflected form (kamen → kam), to find it after a prefix. */
const STEMS: ReadonlyMap<string, string> = (() => {
  const stems = new Map<string, string>();
  for (const [stem] of GERMAN_SYNTAX.preterite)
    for (const [form] of [...FORMS].filter(([, value]) => value === FORMS.get(stem) || value.participle === FORMS.get(stem)!.participle)) stems.set(form, stem);
  return stems;
})();
/** An inseparable prefix or a separable particle before a strong preterite of the table (bestand, erwies, ankam). */
const PREFIXED_STRONG =
  /^(be|emp|ent|er|miss|ver|zer|hinter|über|unter|voll|wider|auf|an|ab|aus|ein|mit|nach|vor|weg|zu|zurück|her|hin|los|fest|fort|dar)(\p{Ll}{2,})$/u;
const INSEPARABLE_PREFIX = /^(?:be|emp|ent|er|miss|ver|zer|hinter|über|unter|voll|wider)$/u;
/** Verbs of motion and change that keep sein after ent-, ver-, zer-, er- (entkam, verging, zerfiel); other prefixed verbs take haben (verstand, bestand). */
const MOTION = new Set([
  'kam',
  'ging',
  'lief',
  'fiel',
  'fuhr',
  'flog',
  'floh',
  'sank',
  'stieg',
  'wuchs',
  'starb',
  'sprang',
  'schwamm',
  'rannte',
  'wich',
  'schmolz',
]);

/**
 * A preterite of the table, also after a prefix: an inseparable one takes the place of ge- (bestand
 * → bestanden, erwies → erwiesen, verging → vergangen), a separable particle joins the participle
 * (ankam → angekommen, in a verb-final clause).
 */
function preteriteForm(word: string): PreteriteForm | undefined {
  if (NOT_PRETERITE.has(word)) return undefined;
  const exact = FORMS.get(word);
  if (exact !== undefined) return exact;
  const match = PREFIXED_STRONG.exec(word);
  if (!match) return undefined;
  const [, prefix = '', rest = ''] = match;
  const base = FORMS.get(rest);
  const stem = STEMS.get(rest);
  if (base === undefined || stem === undefined || base.modal || base.passive || !base.participle.startsWith('ge') || stem === 'war' || stem === 'hatte')
    return undefined;
  if (!INSEPARABLE_PREFIX.test(prefix)) return { ...base, participle: `${prefix}${base.participle}` };
  // A plural that is also the participle (verstanden, bestanden) is the participle.
  if (word === `${prefix}${base.participle.slice(2)}`) return undefined;
  const auxiliary = base.auxiliary === 'sein' && /^(?:ent|ver|zer|er)$/u.test(prefix) && MOTION.has(stem) ? 'sein' : 'haben';
  return { ...base, auxiliary, participle: `${prefix}${base.participle.slice(2)}` };
}

const PARTICLES = new Set(GERMAN_SYNTAX.separableParticles.words);
const NOT_WEAK = new Set(GERMAN_SYNTAX.weakPreterite.not);
/** The listed present-tense verbs (halten, treten, bieten) also after a verb prefix (festhalten, vertreten, anbieten). */
const NOT_WEAK_ENDING = new RegExp(
  `^(?:ab|an|auf|aus|be|bei|dar|durch|ein|ent|er|fest|her|hin|hinter|los|mit|nach|über|um|unter|ver|vor|weg|wider|zer|zu|zurück|zusammen|weiter|statt|teil)(?:${GERMAN_SYNTAX.weakPreterite.not
    .filter((word) => word.endsWith('en'))
    .join('|')})$`,
  'u',
);
const WEAK_WITH_SEIN = GERMAN_SYNTAX.weakPreterite.sein;
/** Words before a weak preterite: pronouns (er spielte); a capitalised word (a noun or name) also counts. */
const SUBJECT_PRONOUNS = new Set(['ich', 'du', 'er', 'sie', 'es', 'wir', 'ihr', 'man']);
/** An article or determiner before a word in -te makes it an adjective (der nächste, die beste). */
const DETERMINER =
  /^(?:der|die|das|den|dem|des|ein|eine|einen|einem|einer|eines|kein\p{Ll}*|mein\p{Ll}*|dein\p{Ll}*|sein\p{Ll}*|ihr\p{Ll}*|unser\p{Ll}*|dies\p{Ll}*|jed\p{Ll}*|welch\p{Ll}*|alle|am|im|zum|zur|vom|beim)$/iu;
const INSEPARABLE = /^(?:be|ge|er|ver|zer|ent|emp|miss|über|unter|hinter|wider|voll)/u;
/** Capitalised first words that are no subject: prepositions and conjunctions. */
const SENTENCE_START_NOT_SUBJECT =
  /^(?:Mit|Von|Vor|Nach|Bei|In|An|Auf|Aus|Um|Für|Durch|Über|Unter|Ohne|Gegen|Seit|Bis|Ab|Zu|Trotz|Wegen|Während|Hinter|Neben|Zwischen|Und|Oder|Aber|Doch|Wenn|Als|Weil|Dass|Ob|Wie|So|Nur|Auch|Noch|Schon)$/u;
/** A present form of haben, sein or werden: a participle may follow it. */
const PRESENT_AUXILIARY = /^(?:habe|hast|hat|haben|habt|bin|bist|ist|sind|seid|werde|wirst|wird|werden|werdet)$/iu;
/** A conjunction that puts the finite verb last in its clause. */
const SUBORDINATOR = /^(?:dass|weil|als|wenn|ob|obwohl|nachdem|bevor|bis|sobald|solange|während|damit|falls|sodass|da|wo)$/iu;
/** Words that open a verb-final clause after a comma: relative and interrogative words (wo, was, wie, warum, welche). */
const VERB_FINAL_OPENER =
  /^(?:wo|was|wer|wen|wem|wessen|wie|warum|weshalb|wieso|weswegen|wann|wohin|woher|wodurch|womit|wofür|worauf|worüber|wovon|wozu|welch\p{Ll}*|indem|seit|seitdem|wobei|zumal|sofern|soweit|obgleich|ehe|je)$/iu;
/** A relative pronoun (der, die, denen, welcher) after a preposition (mit dem, in der, von denen). */
const RELATIVE_PRONOUN = /^(?:der|die|das|den|dem|denen|deren|dessen|welch\p{Ll}*)$/u;
const PREPOSITION = /^(?:mit|von|bei|aus|nach|zu|seit|für|durch|gegen|ohne|um|an|auf|in|über|unter|vor|hinter|neben|zwischen|wegen|trotz|während)$/iu;

/**
 * Whether a clause after a comma is a subordinate clause with its finite verb last (…, dass er
 * kam; …, wo si gschlafe hät; …, mit dem er kam) rather than a main clause whose verb is last
 * because it is the second part (…, sie lachte; …, die Kinder spielten): a subordinating
 * conjunction (also a word or two in), a relative or interrogative word, a relative pronoun
 * before a pronoun or a lower-case word, or a preposition with a relative pronoun opens it (Duden Grammatik:
 * Verbletztsatz; Weber, Zürichdeutsche Grammatik: Nebensatz).
 */
function opensVerbFinalClause(words: readonly string[]): boolean {
  // The conjunction may follow a word or two (kurz bevor er …, auch wenn es …, gleich nachdem …).
  if (words.slice(0, 3).some((word) => SUBORDINATOR.test(word) || VERB_FINAL_OPENER.test(word))) return true;
  const [first = '', second = '', third = ''] = words;
  const pronounNext = (word: string) => word !== '' && (word === word.toLowerCase() || /^(?:Sie|Ihnen|Ihr\p{Ll}*)$/u.test(word));
  if (RELATIVE_PRONOUN.test(first.toLowerCase())) return pronounNext(second);
  return PREPOSITION.test(first) && RELATIVE_PRONOUN.test(second) && pronounNext(third);
}

/** A definite or indefinite article: the subject after a verb in second place. */
const ARTICLE = /^(?:der|die|das|den|dem|ein|eine|einen|einem)$/u;
/** Weak verbs of saying, which follow a quotation before their subject (…, erklärte Sommaruga). */
const SAYING =
  /^(?:sagte|betonte|erklärte|meinte|antwortete|fragte|ergänzte|erwiderte|bestätigte|kommentierte|forderte|warnte|fügte|erläuterte|bemerkte|berichtete|formulierte|äusserte|klagte|lachte|flüsterte|murmelte|seufzte)$/u;
/** A separable particle written with its verb in a verb-final clause (als er aufwachte → aufgewacht). */
const SEPARABLE_PREFIX = /^(?:auf|an(?!tw)|ab|aus|ein|mit|nach|vor|weg|zu|zurück|her|hin|los|fest|fort|dar)(?=\p{Ll}{3})/u;

/**
 * A weak preterite by its ending (spielte, machten, arbeitete): what it becomes, or undefined.
 * Only lower-case words of at least five letters, not listed as other words; a stem ending in
 * a vowel other than a diphthong is a present tense (arbeiten, bieten).
 */
function weakPreterite(word: string): PreteriteForm | undefined {
  const match = /^(\p{Ll}{3,}?)(e?)te(n?)$/u.exec(word);
  if (!match || NOT_WEAK.has(word) || NOT_PRETERITE.has(word) || NOT_WEAK_ENDING.test(word)) return undefined;
  const [, stem = '', linking, plural] = match;
  // -ete after d, t and after a consonant before m or n (arbeitete, rechnete, zeichnete, atmete; not lernte, wohnte).
  if (linking === 'e' && !/(?:[dt]|(?:ch|[^aeiouäöülrh])[mn])$/u.test(stem)) return undefined;
  if (/[aeiouäöü]$/u.test(stem) && !/(?:au|eu|äu)$/u.test(stem)) return undefined;
  const particle = SEPARABLE_PREFIX.exec(stem)?.[0] ?? '';
  const root = stem.slice(particle.length);
  const participle = INSEPARABLE.test(root) || stem.endsWith('ier') ? `${stem}${linking}t` : `${particle}ge${root}${linking}t`;
  // The listed stem itself, or after a prefix (aufwach, verreis), not as the end of another stem (mitteil is no eil).
  const auxiliary = WEAK_WITH_SEIN.some((sein) => stem === sein || root === sein || (INSEPARABLE.test(root) && root.endsWith(sein))) ? 'sein' : 'haben';
  return { auxiliary, participle, modal: false, passive: false, person: plural ? Person.ThirdPlural : Person.ThirdSingular };
}
/** First names (`GERMAN_SYNTAX.firstNames`): a word after one is a surname, said as written. */
export const FIRST_NAMES: ReadonlySet<string> = new Set([...GERMAN_SYNTAX.firstNames.male, ...GERMAN_SYNTAX.firstNames.female]);
function withFirstNames(pattern: string): string {
  return pattern.replaceAll('$MALE', GERMAN_SYNTAX.firstNames.male.join('|')).replaceAll('$FEMALE', GERMAN_SYNTAX.firstNames.female.join('|'));
}
const PATTERNS = GERMAN_SYNTAX.patterns.map((row) => ({
  pattern: new RegExp(withFirstNames(row.pattern), 'gu'),
  replace: row.replace,
  finalClause: row.finalClause === true,
}));
const WORD = /\p{L}[\p{L}-]*/gu;
const MODAL_INFINITIVE: ReadonlyMap<string, string> = new Map(GERMAN_SYNTAX.modalInfinitive.words.map(([infinitive, word]) => [infinitive, word]));
/** zu before a modal infinitive (helfen zu können); done before the other zu rows, so that the final clause keeps it. */
const ZU_MODAL = new RegExp(`(?<![\\p{L}])zu\\s(${[...MODAL_INFINITIVE.keys()].join('|')})(?![\\p{L}])`, 'gu');
/** A coordinating conjunction with a preterite within the next two words; the split keeps it. */
const COORDINATED_PRETERITE = new RegExp(
  `(\\s(?:und|oder|aber|sondern|denn)\\s)(?=(?:(?:\\p{L}+\\s){0,2}(?:${[...FORMS.keys()].join('|')})(?![\\p{L}])|\\p{Ll}{3,}e?ten?(?:\\s+\\p{Ll}|\\s*$)))`,
  'iu',
);

/** Keeps a capital at the start of a replaced word. */
function withCaseOf(original: string, replacement: string): string {
  return original[0] === original[0]!.toUpperCase() ? replacement[0]!.toUpperCase() + replacement.slice(1) : replacement;
}

/** A German infinitive or participle shape at the end of a clause (zuordnen, zurückgesetzt). */
function looksInfinitive(word: string): boolean {
  return /^\p{Ll}{2,}(?:en|ern|eln)$/u.test(word);
}
function looksParticiple(word: string): boolean {
  return /^\p{Ll}*(?:ge\p{Ll}{2,}(?:t|en)|\p{Ll}{3,}iert)$/u.test(word);
}
/** After "wurde", participles with an inseparable prefix count too (behoben, versendet). */
function looksPassiveParticiple(word: string): boolean {
  return looksParticiple(word) || /^(?:be|er|ver|ent|zer|emp|miss|durch|über|unter|hinter|wider)\p{Ll}{2,}(?:t|en)$/u.test(word);
}

interface Token {
  readonly text: string;
  readonly start: number;
}

/**
 * Rewrites one clause (text between punctuation) with its first preterite in the perfect:
 * the auxiliary takes the verb's place and the participle goes to the clause end; in a
 * verb-final clause after a comma both stay at the end (…, weil es gut gewesen ist).
 */
function perfectOfClause(clause: string, afterComma: boolean, coordinated = false, verbFinal = afterComma, theyMark?: string): string {
  const tokens: Token[] = [...clause.matchAll(WORD)].map((match) => ({ text: match[0], start: match.index }));
  // A capital inside the clause marks a noun ("der Stand"), not a verb; a plural that is its own
  // participle (verloren, erhalten) after a present auxiliary is the participle (ist verloren).
  const finite = tokens.findIndex((token) => PRESENT_AUXILIARY.test(token.text));
  let at = tokens.findIndex((token, index) => {
    if (index > 0 && token.text !== token.text.toLowerCase()) return false;
    const found = preteriteForm(token.text.toLowerCase());
    return found !== undefined && !(finite >= 0 && finite < index && found.participle === token.text);
  });
  let form = at >= 0 ? preteriteForm(tokens[at]!.text.toLowerCase()) : undefined;
  if (!form) {
    // A weak preterite after its subject: a pronoun or a capitalised word (er spielte, Anna machte).
    at = tokens.findIndex((token, index) => {
      const before = tokens[index - 1]?.text;
      // After und, oder … the subject is the first clause's (… und klopfte a d Tür), unless a noun follows (und nette Lüüt).
      // The same after a comma (…, legte sich is Bett, …; …, weinte nöd).
      // A verb of saying after a comma or a quotation comes before its subject (…, betonte Rytz; « Danke! » antwortete es).
      if (index === 0)
        return (((coordinated || afterComma) && !/^\p{Lu}/u.test(tokens[1]?.text ?? '')) || SAYING.test(token.text)) && weakPreterite(token.text) !== undefined;
      if (before === undefined) return false;
      // A capital at the start of a sentence is no noun when the word is a preposition or a conjunction (Mit verzweifelten Augen).
      if (index === 1 && SENTENCE_START_NOT_SUBJECT.test(before)) return false;
      // Before an article a word in -te after an adverb or a noun is the verb (Im Kanton lehnte das Parlament … ab).
      if (
        ARTICLE.test(tokens[index + 1]?.text ?? '') &&
        !DETERMINER.test(before) &&
        !SENTENCE_START_NOT_SUBJECT.test(before) &&
        weakPreterite(token.text) !== undefined
      )
        return true;
      // Before its subject pronoun a word in -te is the verb (…, dann klopfte er).
      if (SUBJECT_PRONOUNS.has(tokens[index + 1]?.text ?? '') && !DETERMINER.test(before) && weakPreterite(token.text) !== undefined) return true;
      if (DETERMINER.test(before)) {
        // A demonstrative as the subject (Das zeigte sich, Dies bemerkte …): the word after is no noun, and no superlative (die meisten).
        const after = tokens[index + 1]?.text;
        const demonstrative = index === 1 && /^(?:das|dies|dieses|dieser|diese|der|die)$/iu.test(before) && (after === undefined || !/^\p{Lu}/u.test(after));
        if (!demonstrative || /(?:s|ß)te[n]?$/u.test(token.text)) return false;
      }
      return (SUBJECT_PRONOUNS.has(before.toLowerCase()) || /^\p{Lu}/u.test(before)) && weakPreterite(token.text) !== undefined;
    });
    // Last in a clause that starts with its conjunction, after any word (Dass … nicht abflachten).
    if (at < 0 && tokens.length >= 2 && SUBORDINATOR.test(tokens[0]!.text) && weakPreterite(tokens[tokens.length - 1]!.text) !== undefined)
      at = tokens.length - 1;
    if (at < 0) return clause;
    form = weakPreterite(tokens[at]!.text)!;
  }
  const verb = tokens[at]!;
  // A sentence that opens with Sie and a plural preterite tells of them, not to the listener
  // (Sie gingen nach Hause): formal address in the past is rare, and the preterite is narrative.
  // The modal preterites sollten and wollten stay formal: they are also the polite subjunctive
  // (Sie sollten …). The mark tells the renderer to say the third person (`formal-address.ts`).
  const they =
    theyMark !== undefined && at === 1 && tokens[0]!.text === 'Sie' && form.person === Person.ThirdPlural && !/^(?:sollten|wollten)$/u.test(verb.text);
  const neighbours = [tokens[at - 1]?.text.toLowerCase(), tokens[at + 1]?.text.toLowerCase()];
  let person = form.person;
  if (person === Person.ThirdSingular && neighbours.includes('ich')) person = Person.FirstSingular;
  const auxiliary = GERMAN_SYNTAX.auxiliaries[form.auxiliary][person]!;
  const last = tokens.length - 1;
  let participle = form.participle;
  const words = tokens.map((token) => token.text);
  if (at === last && verbFinal) {
    // Verb-final clause: "…, weil wir nicht kommen konnten" → "…, weil wir nicht haben gekonnt kommen".
    if (form.modal && at > 0 && looksInfinitive(words[at - 1]!)) {
      words[at] = words[at - 1]!;
      words[at - 1] = `${auxiliary} ${participle}`;
    } else if (!form.passive && !form.modal && at > 0 && looksParticiple(words[at - 1]!)) {
      // A pluperfect ("…, als es angekommen war") needs only the present auxiliary.
      words[at] = auxiliary;
    } else if (form.passive && at > 0 && looksPassiveParticiple(words[at - 1]!)) {
      // "…, während das Gebäude durchsucht wurde" → "… durchsucht worden ist".
      words[at] = `worden ${auxiliary}`;
    } else {
      words[at] = `${participle} ${auxiliary}`;
    }
  } else {
    words[at] = withCaseOf(verb.text, auxiliary);
    const end = words[last]!;
    if (at < last && PARTICLES.has(end) && !form.modal) {
      // "Der Strom fiel gestern aus" → "… ist gestern ausgefallen".
      words[last] = `${end.toLowerCase()}${participle}`;
    } else if (form.modal && at < last && looksInfinitive(end)) {
      words[last] = `${participle} ${end}`;
    } else if (!form.passive && !form.modal && words.some((word, index) => index !== at && words[index - 1] !== 'z' && looksParticiple(word))) {
      // A pluperfect ("war eingegangen", "hatten bestellt") needs only the present auxiliary.
    } else {
      if (form.passive && at < last && looksPassiveParticiple(end)) participle = 'worden';
      words[last] = `${words[last]} ${participle}`;
    }
  }
  // Reassemble with the clause's own spacing and punctuation between the words.
  let out = '';
  let cursor = 0;
  tokens.forEach((token, index) => {
    out += clause.slice(cursor, token.start) + (they && index === 0 ? theyMark : '') + words[index];
    cursor = token.start + token.text.length;
  });
  return out + clause.slice(cursor);
}

/**
 * A phrase between um and zu that opens with a preposition (zum Hauptmenü zurück, mit einem
 * Mitarbeiter): the region's own zum would stand before it (zum zum Hauptmenü), so such a final
 * clause is für … z in every region (für zum Hauptmenü zrugg z chehre).
 */
const PREPOSITION_FIRST =
  /^(?:zum|zur|zu|ins|im|in|ans|am|an|aufs|auf|beim|bei|vom|von|mit|nach|aus|für|fürs|über|unter|vor|hinter|neben|zwischen|durch|gegen|ohne|um|bis|seit|während|wegen|trotz)\s/iu;

/**
 * German-side rewrites where Swiss German grammar differs (DIALECTS.md, step 2): preterite →
 * perfect with the right auxiliary, genitive → von/vom, relative pronouns → wo, and `zu` +
 * infinitive → `z`. The output is still German words, for the region's lexicon to render.
 * `finalClause` is the region's um … zu with `$1` for the words between (Zürich "zum $1":
 * um zu helfen → zum helfen), but für … z before a preposition (see `PREPOSITION_FIRST`); without
 * it, für … z. `theyMark`, if given, goes before a
 * sentence-initial Sie that a plural preterite shows to be the third person (Sie gingen).
 */
export function rewriteGermanSyntax(text: string, finalClause?: string | null, theyMark?: string): string {
  let out = text.includes('zu ') ? text.replace(ZU_MODAL, (_match, modal: string) => `z ${MODAL_INFINITIVE.get(modal)!}`) : text;
  for (const { pattern, replace, finalClause: final } of PATTERNS) {
    if (!final || !finalClause) {
      out = out.replace(pattern, replace);
      continue;
    }
    const regional = withCaseOf(replace, finalClause);
    out = out.replace(pattern, (_match: string, between: string) => (PREPOSITION_FIRST.test(between) ? replace : regional).replace('$1', between));
  }
  // Clauses end at punctuation, and at a conjunction that a preterite follows ("… und wurde
  // behoben"); a clause after a comma may be verb-final.
  // A subordinate clause after a comma stays open across the clauses after it that have their
  // own subject (dass für jeden Gast, den er einlud, zwei neue kamen) until a main clause
  // or the end of the sentence.
  let subordinateOpen = false;
  return out.replace(/([^,.;:!?]+)([,.;:!?]*)/gu, (_match, stretch: string, punctuation: string, offset: number) => {
    const afterComma = out.slice(0, offset).trimEnd().endsWith(',');
    const words = [...stretch.matchAll(WORD)].map((match) => match[0]);
    const sentenceStart = /(?:^|[.!?:;])$/u.test(out.slice(0, offset));
    const verbFinal = afterComma && (opensVerbFinalClause(words) || (subordinateOpen && words.length >= 2));
    subordinateOpen = verbFinal && !/[.;:!?]/u.test(punctuation);
    const clauses = stretch.split(COORDINATED_PRETERITE);
    return (
      clauses
        .map((clause, index) =>
          index % 2 === 1
            ? clause
            : perfectOfClause(clause, afterComma && index === 0, index > 0, verbFinal && index === 0, index === 0 && sentenceStart ? theyMark : undefined),
        )
        .join('') + punctuation
    );
  });
}
