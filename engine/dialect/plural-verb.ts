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
]);

/** The dialect form of a plural verb: the region's ending on the lexicon's infinitive stem, or the German one. */
function pluralOf(stem: string, ending: string, data: RegionData, ownEnding: string): string | null {
  const german = `${stem}${ending}`;
  if (NOT_VERBS.has(german) || PARTICIPLE.test(german)) return null;
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
  if (own === null || !/(?:wir|sie|ihr)(?![\p{L}])/iu.test(text)) return text;
  const subjectFirst = text.replace(SUBJECT_THEN_VERB, (match, subject: string, stem: string, ending: string, offset: number) => {
    if (/^sie/iu.test(subject) && GOVERNS_OBJECT.test(text.slice(Math.max(0, offset - 20), offset))) return match;
    const said = pluralOf(stem, ending, data, own);
    return said === null ? match : `${subject}${said}`;
  });
  return subjectFirst.replace(VERB_THEN_SUBJECT, (match, stem: string, ending: string) => pluralOf(stem, ending, data, own) ?? match);
}
