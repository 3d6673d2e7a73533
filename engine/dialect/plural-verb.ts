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
function irregularPlural(german: string, data: RegionData): string | undefined {
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
