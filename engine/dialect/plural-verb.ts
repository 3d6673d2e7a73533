import type { RegionData } from './region-data.js';

/** A present plural after its subject pronoun (wir spielen, dass sie kommen); not a participle before its auxiliary. */
const SUBJECT_THEN_VERB =
  /(?<![\p{L}])((?:[Ww]ir|[Ss]ie|[Ii]hr)\s+)(\p{Ll}{2,}?)(e?n)(?![\p{L}])(?!\s+(?:haben|hat|hatten|sind|ist|waren|worden|werden|wurde|wurden)(?![\p{L}]))/gu;
/** A present plural before its subject pronoun, after the clause's first word (Heute spielen wir). */
const VERB_THEN_SUBJECT = /(?<=(?:^|[.!?:;,]\s*|\p{Lu}\p{Ll}*\s+))(\p{Ll}{2,}?)(e?n)(?=\s+(?:wir|sie|Sie)(?![\p{L}]))/gu;
/** A finite verb or zu before "sie" makes it an object (Er will sie treffen). */
const GOVERNS_OBJECT = /(?:^|\s)(?:\p{Ll}+t|will|kann|muss|soll|darf|mag|möchte|wird|würde|lassen|zu|um|für|ohne|gegen|durch)\s+$/u;
/** A participle in -en, also of a separable verb (gegeben, angegeben, zurückgekommen). */
const PARTICIPLE = /^(?:ab|an|auf|aus|bei|ein|fest|her|hin|los|mit|nach|vor|weg|zu|zurück|zusammen|weiter)?ge\p{Ll}{3,}en$/u;
/** A clause: text up to punctuation, with the punctuation and space before it. */
const CLAUSE = /([^,.;:!?«»"()]+)/gu;
/**
 * A subordinate clause (after dass, weil, wenn, ob, wo …) ending in a word in -en: German puts the
 * finite verb last, so that word is a present plural (…, dass d Priise steigen → stiiged), unless
 * z (zu), a modal or an auxiliary before it makes it an infinitive (dass mir nöd händ chöne cho).
 */
const SUBORDINATE = /^\s*(?:dass|weil|wenn|ob|obwohl|obschon|nachdem|bevor|bis|sobald|solange|während|damit|wo|falls|sodass)\s/u;
const LAST_VERB =
  /(?<![\p{L}])(?<!(?<![\p{L}])(?:z|zu|haben|hat|hätte|hätten|werden|wird|würde|würden|kann|können|konnte|konnten|muss|müssen|will|wollen|soll|sollen|darf|dürfen|mag|möchte|möchten|lassen|lässt|gekonnt|gemusst|gewollt|gesollt|gedurft|gemocht)\s)(\p{Ll}{2,}?)(e?n)(\s*)$/u;
/**
 * A plural noun subject at the start of a sentence, with its article or quantifier and an
 * adjective, and the verb in -en after it (D Chind spielen → spieled, Vieli Lüüt warten → warted).
 */
const NOUN_THEN_VERB =
  /^(\s*(?:(?:D|Die|Diese|Alle|Viele|Einige|Manche|Beide|Mehrere|Wenige|Solche|Zwei|Drei|Vier|Fünf|Meine|Deine|Seine|Ihre|Unsere|Eure)\s+)?(?:\p{Ll}+en?\s+)?(?!(?:Bitte|Im|Am|Zum|Zur|Beim|Vom|Es|Man|Er|Ich|Du|Sie|Wir|Ihr|Mit|Von|Vor|Nach|Bei|In|An|Auf|Aus|Um|Für|Durch|Über|Unter|Ohne|Gegen|Seit|Bis|Ab|Zu|Dank|Trotz|Wegen|Während|Hinter|Neben|Zwischen|Guten|Vielen|Der|Die|Das|Den|Dem|Des|Dies|Diese|Dieser|Dieses|Diesen|Ein|Eine|Einen|Kein|Keine|Jede|Jeder|Jedes|Welche|Solche|Alle|Viele|Einige|Manche|Beide|Mehrere|Wenige)\s)\p{Lu}\p{Ll}+\s+)(\p{Ll}{2,}?)(e?n)(?![\p{L}])(?!\s+(?:Sie|wir|sie)(?![\p{L}]))/u;

/**
 * The finite plural verbs that no pronoun marks: last in a subordinate clause, and second after a
 * plural noun at the start of a sentence.
 */
function unmarkedPlurals(text: string, data: RegionData, own: string): string {
  return text.replace(CLAUSE, (clause: string, _whole: string, offset: number) => {
    const before = text.slice(0, offset).trimEnd();
    const last = before[before.length - 1];
    if (last === ',' || last === ';' || last === ':' || before === '') {
      if (SUBORDINATE.test(clause))
        clause = clause.replace(LAST_VERB, (match, stem: string, ending: string, space: string) => {
          const said = pluralOf(stem, ending, data, own);
          return said === null ? match : `${said}${space}`;
        });
    }
    if (before === '' || last === '.' || last === '!' || last === '?' || last === ':')
      clause = clause.replace(NOUN_THEN_VERB, (match, subject: string, stem: string, ending: string) => {
        const said = pluralOf(stem, ending, data, own);
        return said === null ? match : `${subject}${said}`;
      });
    return clause;
  });
}

/** Words in -en after a pronoun that are not verbs. */
const NOT_VERBS = new Set([
  'einen',
  'keinen',
  'ihnen',
  'denen',
  'unten',
  'oben',
  'neben',
  'gegen',
  'zwischen',
  'wegen',
  'morgen',
  'allen',
  'vielen',
  'beiden',
  'selten',
  'trotzdem',
  'eben',
  'übrigen',
  'alle',
  'sein',
  'sin',
  'seinen',
  'ihren',
  'deinen',
  'unseren',
  'euren',
  'den',
  'diesen',
  'jenen',
  'welchen',
  'solchen',
  'manchen',
  'jeden',
  'anderen',
  'eigenen',
  'ganzen',
  'wenigen',
  'einigen',
  'mehreren',
  'weiteren',
]);

/** Prefixes before an irregular verb that keep its plural (verstehen → verstönd, aufstehen → aufstönd). */
const VERB_PREFIX = /^(?:ab|an|auf|aus|be|bei|ein|ent|er|fest|her|hin|los|mit|nach|über|um|unter|ver|vor|weg|zu|zurück|zusammen|weiter)?$/u;

/** A region's irregular plural of a German verb, also after a prefix (entstehen → entstönd), or undefined. */
export function irregularPlural(german: string, data: RegionData): string | undefined {
  for (const [verb, plural] of data.irregularPlurals) {
    if (!german.endsWith(verb)) continue;
    const prefix = german.slice(0, german.length - verb.length);
    if (VERB_PREFIX.test(prefix)) return `${prefix}${plural}`;
  }
  return undefined;
}

/** The dialect form of a plural verb: the region's ending on the lexicon's infinitive stem, or the German one. */
function pluralOf(stem: string, ending: string, data: RegionData, ownEnding: string): string | null {
  const german = `${stem}${ending}`;
  if (NOT_VERBS.has(german) || PARTICIPLE.test(german)) return null;
  const irregular = irregularPlural(german, data);
  if (irregular !== undefined) return irregular;
  const known = data.words.get(german);
  if (known !== undefined && !/^\p{L}+[eaäu]$/u.test(known)) return null;
  return `${known === undefined ? stem : known.slice(0, -1)}${ownEnding}`;
}

/**
 * Present plural verbs next to their subject pronoun take the region's plural ending where
 * it differs from the infinitive (Zürich mir spieled, si chömed; Graubünden -end), as
 * `pluralVerb` in its data says; other regions leave them to the lexicon and rules.
 */
export function pluralVerbs(text: string, data: RegionData): string {
  const own = data.pluralVerb;
  if (own === null) return text;
  if (data.everyPluralVerb) text = unmarkedPlurals(text, data, own);
  if (!/(?:wir|sie|ihr)(?![\p{L}])/iu.test(text)) return text;
  const subjectFirst = text.replace(SUBJECT_THEN_VERB, (match, subject: string, stem: string, ending: string, offset: number) => {
    if (/^sie/iu.test(subject) && GOVERNS_OBJECT.test(text.slice(Math.max(0, offset - 20), offset))) return match;
    const said = pluralOf(stem, ending, data, own);
    return said === null ? match : `${subject}${said}`;
  });
  return subjectFirst.replace(VERB_THEN_SUBJECT, (match, stem: string, ending: string) => pluralOf(stem, ending, data, own) ?? match);
}

/** Second person plural forms that no other person shares (habt, seid, könnt): next to them ihr is "you". */
const SECOND_PLURAL_ONLY =
  /^(?:habt|seid|wart|hattet|könnt|konntet|müsst|musstet|wollt|wolltet|dürft|durftet|sollt|solltet|wisst|wusstet|mögt|werdet|wurdet|möchtet|würdet|hättet|wäret|kamt|gingt|saht)$/u;
/** The plural (wir, sie) of the present second plurals that are not stem + -t + -en (seid → sind). */
const PLURAL_OF_SECOND: ReadonlyMap<string, string> = new Map([
  ['seid', 'sind'],
  ['habt', 'haben'],
  ['wisst', 'wissen'],
  ['könnt', 'können'],
  ['müsst', 'müssen'],
  ['dürft', 'dürfen'],
  ['mögt', 'mögen'],
  ['wollt', 'wollen'],
  ['sollt', 'sollen'],
  ['werdet', 'werden'],
  ['tut', 'tun'],
]);
/** Words in -t after ihr that are no verbs (ihr nicht, ihr jetzt) or are only third person singular (ihr ist). */
const NOT_SECOND_PLURAL =
  /^(?:nicht|jetzt|erst|selbst|zuerst|meist|sonst|fast|bereits|gut|mit|oft|bald|halt|weit|recht|leicht|nett|seit|bist|ist|hat|gibt|wird|ganz|satt|spät|zuletzt|gefällt|gehört|schmeckt|hilft)$/u;
/** Words after which a lower-case ihr starts its clause (wenn ihr kommt, und ihr geht). */
const CLAUSE_OPENER =
  /^(?:und|oder|aber|denn|sondern|dass|weil|wenn|als|ob|obwohl|bevor|nachdem|damit|falls|sobald|solange|während|wo|wie|was|warum|wann|doch|dann|so)$/iu;
const IHR = /(?<![\p{L}])([Ii]hr)(\s+)(\p{Ll}+)(?![\p{L}])/gu;

/** The German plural (wir, sie) of a present second person plural: kommt → kommen, wandert → wandern, könnt → können. */
function pluralOfSecond(verb: string): string | null {
  const listed = PLURAL_OF_SECOND.get(verb);
  if (listed !== undefined) return listed;
  const stem = /^(\p{Ll}{2,}?)e?t$/u.exec(verb)?.[1];
  if (stem === undefined) return null;
  return /(?:er|el)$/u.test(stem) ? `${stem}n` : `${stem}en`;
}

/**
 * The dialect verb after ihr: in a region with a plural ending (Zürich -ed) the plural of wir
 * and sie (ihr chömed, ihr händ); in a region with a second plural of its own (Bern -et) that
 * (dir chömet, dir spilet); else null, for the lexicon.
 */
function secondPluralVerb(verb: string, data: RegionData): string | null {
  const plural = pluralOfSecond(verb);
  if (plural === null) return null;
  if (data.secondPluralEnding !== null) {
    const listed = data.secondPluralIrregular.get(plural);
    if (listed !== undefined) return listed;
    const known = data.words.get(plural);
    return known !== undefined && /^\p{L}+e$/u.test(known) ? `${known.slice(0, -1)}${data.secondPluralEnding}` : null;
  }
  if (data.pluralVerb === null) return null;
  const parts = /^(\p{Ll}+?)(e?n)$/u.exec(plural);
  const said = parts === null ? null : pluralOf(parts[1]!, parts[2]!, data, data.pluralVerb);
  // The auxiliaries and modals: the lexicon's plural (sind, händ, chönd).
  return said ?? (PLURAL_OF_SECOND.has(verb) ? (data.words.get(plural) ?? null) : null);
}

/**
 * The pronoun ihr of the second person plural (ihr habt, wenn ihr kommt, habt ihr) in the
 * region's word (`secondPlural`: Zürich ihr, Bern dir, Wallis ier), and the present verb after
 * it in the region's form (ihr chömed, dir chömet), each fenced off as finished dialect.
 * Elsewhere Ihr… is formal (Ihr Auto) and ihr the third person (ihr Auto, mit ihr). The verb
 * tells the pronoun after any ihr when only the second plural has that form (habt, seid,
 * könnt); any verb in -t counts after an ihr that starts its sentence or clause.
 */
export function secondPersonPlural(text: string, data: RegionData, fence: (said: string) => string): string {
  const word = data.secondPlural;
  if (word === null || !/(?<![\p{L}])[Ii]hr(?![\p{L}])/u.test(text)) return text;
  // Verb first: habt ihr, könnt ihr.
  let out = text;
  if (/(?<![\p{L}])ihr(?![\p{L}])/u.test(text)) {
    out = '';
    let cursor = 0;
    for (const match of text.matchAll(/(?<![\p{L}])ihr(?![\p{L}])/gu)) {
      const before = /(\p{L}+)(\s+)$/u.exec(text.slice(Math.max(cursor, match.index - 24), match.index));
      const verb = before?.[1];
      if (before === null || verb === undefined || !SECOND_PLURAL_ONLY.test(verb.toLowerCase())) continue;
      const said = secondPluralVerb(verb.toLowerCase(), data);
      const capital = verb[0] !== verb[0]!.toLowerCase();
      const start = match.index - before[0].length;
      out += `${text.slice(cursor, start)}${said === null ? verb : fence(capital ? said[0]!.toUpperCase() + said.slice(1) : said)}${before[2]}${fence(word)}`;
      cursor = match.index + match[0].length;
    }
    out += text.slice(cursor);
  }
  out = out.replace(IHR, (match, ihr: string, space: string, verb: string, offset: number) => {
    // The word before is enough, so a bounded look back: the text may be thousands of characters.
    const before = out.slice(Math.max(0, offset - 32), offset);
    const previous = /(\p{L}+)\s*$/u.exec(before)?.[1];
    const textStart = offset <= 32 && /^\s*$/u.test(before);
    const startsClause = textStart || /[.!?:;,«»"„“(-]\s*$/u.test(before) || (previous !== undefined && CLAUSE_OPENER.test(previous));
    if (!SECOND_PLURAL_ONLY.test(verb) && !(startsClause && /\p{Ll}{2,}t$/u.test(verb) && !NOT_SECOND_PLURAL.test(verb))) return match;
    const said = secondPluralVerb(verb, data);
    return `${fence(ihr[0] === 'I' ? word[0]!.toUpperCase() + word.slice(1) : word)}${space}${said === null ? verb : fence(said)}`;
  });
  return out;
}
