import type { RegionData } from './region-data.js';

/** Lexicon words that are also common word endings or end frequent names (Kurmann, Nürnberg), never taken as the head of a compound. */
const NOT_HEADS = new Set([
  'ende',
  'ente',
  'erin',
  'ling',
  'chen',
  'isch',
  'lich',
  'heit',
  'keit',
  'sche',
  'nung',
  'ment',
  'ungen',
  'iger',
  'mann',
  'stern',
  'berg',
]);
/** The shortest head and modifier a compound is split into. */
const MIN_HEAD = 4;
const MIN_MODIFIER = 3;

/**
 * A capitalised word no lexicon knows that ends in a noun the lexicon knows, written there with
 * its capital (Regenwolken,
 * Königshaus, Mahlzeit): the modifier as the lexicon or the rules give it, joined to the head as
 * the lexicon gives it (Rägewulche, Chönigshuus, Mahlziit). Null when no known head of at least
 * four letters leaves a modifier of at least three.
 */
export function compoundWord(word: string, data: RegionData, byRules: (word: string) => string): string | null {
  if (word.length < MIN_HEAD + MIN_MODIFIER || word[0] === word[0]!.toLowerCase()) return null;
  const lower = word.toLowerCase();
  let longest: string | null = null;
  for (let at = MIN_MODIFIER; at <= lower.length - MIN_HEAD; at += 1) {
    const head = lower.slice(at);
    if (NOT_HEADS.has(head)) continue;
    const said = data.words.get(head);
    // Only a noun is a head: the lexicon writes nouns with their capital (not haben in Guthaben).
    if (said === undefined || said.includes(' ') || said[0] === said[0]!.toLowerCase()) continue;
    const modifier = word.slice(0, at);
    const first = data.words.get(modifier.toLowerCase());
    const known = first !== undefined && !first.includes(' ');
    // A split whose modifier the lexicon knows too wins (Zeit|raum, not Zei|traum); else the longest head.
    if (known) return `${first}${said.toLowerCase()}`;
    longest ??= `${byRules(modifier)}${said.toLowerCase()}`;
  }
  return longest;
}
