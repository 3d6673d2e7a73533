/**
 * What produced each word of a rendering (`sprachrohr dialect --explain`): the renderer reports
 * its steps to an optional collector — nothing is built when none is given — and
 * {@link explainRendering} names the data row, phrase, pattern, rule or lexicon entry behind
 * each, with the source note its data file gives.
 */
import { PLACEHOLDER_WORD, placeholderIndex } from './deployment-lexicon.js';
import { REGION_FILES, regionData, ruleSkips, type RegionFile } from './region-data.js';

/** One step of a rendering: what was replaced, by what, and by which kind of data. */
export type RenderStep =
  /** Clock times, numbers, dates and money written out before rendering. */
  | { readonly kind: 'written-out'; readonly from: string; readonly to: string }
  /** The deployment lexicon (its entry at `where`, and the entry's pronunciation). */
  | { readonly kind: 'lexicon'; readonly from: string; readonly to: string; readonly where: string; readonly ipa: readonly string[] | null }
  /** German-side syntax rewrites (the whole text before and after). */
  | { readonly kind: 'syntax'; readonly from: string; readonly to: string }
  /** A phrase of the region data. */
  | { readonly kind: 'phrase'; readonly from: string; readonly to: string }
  /** A context pattern of the region data (`pattern`: its regular expression). */
  | { readonly kind: 'pattern'; readonly from: string; readonly to: string; readonly pattern: string }
  /** The formal verb with "Sie". */
  | { readonly kind: 'verb'; readonly from: string; readonly to: string }
  /** A number word with hundreds, thousands or a compound, or an ordinal from twenty. */
  | { readonly kind: 'number'; readonly from: string; readonly to: string }
  /** The word pass: number table, word rows, then spelling rules. */
  | { readonly kind: 'word'; readonly from: string; readonly to: string };

/** Collects the steps of renderings; the renderer calls it only when one is given. */
export interface RenderTrace {
  add(step: RenderStep): void;
}

/** A trace that keeps the steps in order. */
export class RenderSteps implements RenderTrace {
  readonly steps: RenderStep[] = [];
  add(step: RenderStep): void {
    this.steps.push(step);
  }
}

/** The data files a region is built from, most general first. */
function chainOf(region: string): RegionFile[] {
  const file = REGION_FILES[region] ?? REGION_FILES['standard']!;
  return file.inherits ? [...chainOf(file.inherits), file] : [file];
}

/** The last (most specific) file of the chain for which `pick` finds something. */
function lastWith<T>(region: string, pick: (file: RegionFile) => T | undefined): { file: RegionFile; found: T } | null {
  const chain = chainOf(region);
  for (let index = chain.length - 1; index >= 0; index--) {
    const found = pick(chain[index]!);
    if (found !== undefined) return { file: chain[index]!, found };
  }
  return null;
}

const quote = (text: string) => JSON.stringify(text);

/** Where a word of the word pass came from: number table, formal address, word row, spelling rules, or none. */
function wordSource(word: string, said: string, region: string): string {
  const lower = word.toLowerCase();
  if (word === said && word.length >= 2 && word === word.toUpperCase() && word !== lower) return 'kept: an abbreviation in capitals, read letter by letter';
  const formal = lastWith(region, (file) => file.formal?.find(([german, dialect]) => german === lower && dialect.toLowerCase() === said.toLowerCase()));
  if (formal) return `formal address ${quote(lower)} → ${quote(formal.found[1])} (${formal.file.region}: ${formal.found[2]})`;
  const number = lastWith(region, (file) => file.numbers?.words.find(([german]) => german === lower) && file.numbers.source);
  if (number) return `number word ${quote(lower)} (${number.file.region}: ${number.found})`;
  const row = lastWith(region, (file) => file.words.find(([german]) => german === lower));
  if (row) return `word ${quote(lower)} → ${quote(row.found[1])} (${row.file.region}: ${row.found[2]})`;
  const applied: string[] = [];
  let out = lower;
  for (const rule of regionData(region).rules) {
    if (ruleSkips(rule, word, out)) continue;
    const next = out.replace(rule.pattern, rule.replace);
    if (next === out) continue;
    out = next;
    const source = lastWith(region, (file) => file.rules.find((candidate) => candidate.pattern === rule.pattern.source));
    applied.push(`/${rule.pattern.source}/ → ${quote(rule.replace)}${source ? ` (${source.file.region}: ${source.found.source})` : ''}`);
  }
  return applied.length > 0 ? `spelling rule${applied.length === 1 ? '' : 's'} ${applied.join('; ')}` : 'kept: no data row or spelling rule changes it';
}

/** The stretch where two texts differ, word by word ("war … korrekt" → "ist … korrekt gewesen"). */
function changedStretch(before: string, after: string): { from: string; to: string } {
  const a = before.split(/\s+/u);
  const b = after.split(/\s+/u);
  let start = 0;
  while (start < a.length && start < b.length && a[start] === b[start]) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a[a.length - 1 - end] === b[b.length - 1 - end]) end++;
  return { from: a.slice(start, a.length - end).join(' '), to: b.slice(start, b.length - end).join(' ') };
}

/**
 * One line per step of a rendering in `region`, in the order the renderer took them: what was
 * replaced, by what, and the data behind it with its source note. Words the word pass left as
 * an earlier step made them are not repeated.
 */
export function explainRendering(steps: readonly RenderStep[], region: string): string[] {
  const lexiconFroms = steps.flatMap((step) => (step.kind === 'lexicon' ? [step.from] : []));
  // Placeholder words stand for lexicon matches until the word pass: show what they stand for.
  const shown = (text: string) => text.replace(PLACEHOLDER_WORD, (word) => lexiconFroms[placeholderIndex(word)] ?? word);
  const made = new Set<string>();
  const lines: string[] = [];
  for (const step of steps) {
    const line = (source: string, from = step.from, to = step.to) => lines.push(`  ${shown(from).trim()} → ${shown(to).trim()}: ${source}`);
    const remember = (to: string) =>
      to
        .toLowerCase()
        .split(/[^\p{L}]+/u)
        .forEach((word) => made.add(word));
    if (step.kind !== 'word' && step.kind !== 'written-out' && step.kind !== 'syntax') remember(step.to);
    switch (step.kind) {
      case 'written-out': {
        if (step.from === step.to) break;
        const { from, to } = changedStretch(step.from, step.to);
        line('clock times, numbers, dates and money written out', from, to);
        break;
      }
      case 'lexicon': {
        const said = step.ipa ? `, said /${step.ipa.join(' ')}/` : '';
        line(`deployment lexicon${step.from === step.to ? ' (kept as written)' : ''}${said}, entry at ${step.where}`);
        break;
      }
      case 'syntax': {
        if (step.from === step.to) break;
        const { from, to } = changedStretch(step.from, step.to);
        remember(to);
        line('German-side syntax rewrite (engine/dialect/data/german-syntax.json)', from, to);
        break;
      }
      case 'phrase': {
        const key = step.from.toLowerCase();
        const row = lastWith(region, (file) => [...file.phrases, ...file.words].find(([german]) => german === key));
        line(`phrase ${quote(key)}${row ? ` (${row.file.region}: ${row.found[2]})` : ''}`);
        break;
      }
      case 'pattern': {
        const row = lastWith(region, (file) => file.patterns?.find((candidate) => candidate.pattern === step.pattern));
        line(`pattern /${step.pattern}/${row ? ` → ${quote(row.found.replace)} (${row.file.region}: ${row.found.source})` : ''}`);
        break;
      }
      case 'verb': {
        const row = lastWith(region, (file) => file.verbWithSie);
        line(`formal verb with Sie${row ? ` /${row.found.pattern}/ → ${quote(row.found.replace)} (${row.file.region}: ${row.found.source})` : ''}`);
        break;
      }
      case 'number': {
        const row = lastWith(region, (file) => file.numbers?.source);
        line(`number words${row ? ` (${row.file.region}: ${row.found})` : ''}`);
        break;
      }
      case 'word':
        if (step.from === step.to && made.has(step.from.toLowerCase())) break;
        line(wordSource(step.from, step.to, region));
        break;
    }
  }
  return lines;
}
