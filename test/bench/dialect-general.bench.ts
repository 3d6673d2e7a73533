/**
 * Swiss German dialect rendering on general text (news, weather, medicine, sport, fairy tales),
 * not only hotline sentences: a fixed seeded sample of the SwissDial development set
 * (/work/shared/dialect/README.md; CC BY-NC 4.0, read from outside the repository and never
 * stored in it), rendered per region as synthesis renders it (clock times, normalisation, the
 * dialect seam, pronunciation) and scored against the region's reference: corpus chrF
 * (character 6-grams, β = 2, the main figure) and corpus WER as the set's reference
 * `metrics.py` defines them, for the renderer and for the German input copied unchanged, with
 * the rendering time per sentence. The project's hotline sets (test/bench/dialect/) are scored
 * the same way, so a regression there shows next to a gain here.
 *
 * The sample is defined by the sentence ids alone: every id gets a key from a seeded hash
 * (SAMPLE_SEED), and a region takes the SAMPLE_SIZE ids with the smallest keys among the ids it
 * has references for. The order of the file, and sentences added to it, do not move it; the
 * regions share ids wherever they have the same sentences.
 *
 * Run: npm run bench:dialect-general
 * (SPRACHROHR_DIALECT_DEVSET names the set, default /tmp/swissdial-dev.jsonl; without it the
 * benchmark says how to build it and exits 0.)
 */
import fs from 'node:fs';
import { performance } from 'node:perf_hooks';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { prepareSpeech } from '../../src/speech/synthesis-service.js';
import { chrF, wer } from './dialect-quality.bench.js';

/** The sample's definition: never change these, or figures stop being comparable. */
export const SAMPLE_SEED = 20211;
export const SAMPLE_SIZE = 300;
export const DEFAULT_DEVSET = '/tmp/swissdial-dev.jsonl';
export const REGIONS = ['zurich', 'bern', 'basel', 'luzern', 'stgallen', 'aargau', 'graubuenden', 'wallis'] as const;

/** One (sentence, region) pair of the development set. */
export interface GeneralPair {
  readonly id: number;
  readonly topic: string;
  readonly dialect: string;
  readonly de: string;
  readonly gsw: string;
}

/** mulberry32: a 32-bit PRNG; its first output for a seed mixed with an id is the id's key. */
function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  };
}

/** The sampling key of a sentence id under a seed. */
export function sampleKey(id: number, seed = SAMPLE_SEED): number {
  return mulberry32(seed ^ Math.imul(id + 1, 0x9e3779b1))();
}

/** The sample of one region: the `size` pairs whose ids have the smallest keys, in key order. */
export function samplePairs(pairs: readonly GeneralPair[], region: string, size = SAMPLE_SIZE, seed = SAMPLE_SEED): GeneralPair[] {
  const byId = new Map<number, GeneralPair>();
  for (const pair of pairs) if (pair.dialect === region && !byId.has(pair.id)) byId.set(pair.id, pair);
  return [...byId.values()]
    .map((pair) => ({ pair, key: sampleKey(pair.id, seed) }))
    .sort((a, b) => a.key - b.key || a.pair.id - b.pair.id)
    .slice(0, size)
    .map(({ pair }) => pair);
}

/** Reads the JSON-lines development set, or null when the file is not there. */
export function readGeneralSet(path: string): GeneralPair[] | null {
  if (!fs.existsSync(path)) return null;
  return fs
    .readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as GeneralPair);
}

/**
 * Corpus chrF as the set's reference (`metrics.py`) computes it: n-gram counts (n = 1…6,
 * spaces removed, case kept) summed over all sentences, an F-score (β = 2) per order, averaged
 * over the orders. Not the average of sentence scores, which `chrF` of the hotline bench gives.
 */
export function corpusChrF(hypotheses: readonly string[], references: readonly string[], maxN = 6, beta = 2): number {
  const stats = Array.from({ length: maxN }, () => ({ hypothesis: 0, reference: 0, match: 0 }));
  // Over code points, as Python counts characters; metrics.py removes the space character only.
  const grams = (chars: readonly string[], n: number) => {
    const counts = new Map<string, number>();
    for (let i = 0; i + n <= chars.length; i++) {
      const gram = chars.slice(i, i + n).join('');
      counts.set(gram, (counts.get(gram) ?? 0) + 1);
    }
    return counts;
  };
  hypotheses.forEach((hypothesis, index) => {
    const h = [...hypothesis.replaceAll(' ', '')];
    const r = [...references[index]!.replaceAll(' ', '')];
    for (let n = 1; n <= maxN; n++) {
      const hg = grams(h, n);
      const rg = grams(r, n);
      const order = stats[n - 1]!;
      order.hypothesis += Math.max(0, h.length - n + 1);
      order.reference += Math.max(0, r.length - n + 1);
      for (const [gram, count] of hg) order.match += Math.min(count, rg.get(gram) ?? 0);
    }
  });
  const b2 = beta ** 2;
  let f = 0;
  let orders = 0;
  for (const { hypothesis, reference, match } of stats) {
    const p = hypothesis ? match / hypothesis : 0;
    const r = reference ? match / reference : 0;
    const d = b2 * p + r;
    f += d ? ((1 + b2) * p * r) / d : 0;
    if (hypothesis && reference) orders++;
  }
  return orders ? (100 * f) / orders : 0;
}

/** `metrics.py`'s normalisation before WER: lower case, punctuation, dashes and apostrophes to spaces. */
export function werNormalise(text: string): string {
  return text
    .toLowerCase()
    .replace(/[’`]/g, "'")
    .replace(/[«»"“”„.,;:!?()[\]–—-]/g, ' ')
    .replaceAll("'", ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * Corpus WER in per cent as `metrics.py` computes it: word edits summed over all sentences over
 * the reference words summed, after `werNormalise`; the edits per sentence come from the
 * hotline bench's `wer`.
 */
export function corpusWer(hypotheses: readonly string[], references: readonly string[]): number {
  let edits = 0;
  let words = 0;
  hypotheses.forEach((hypothesis, index) => {
    const reference = werNormalise(references[index]!);
    const referenceWords = reference === '' ? 0 : reference.split(' ').length;
    edits += Math.round(wer(werNormalise(hypothesis), reference) * Math.max(1, referenceWords));
    words += referenceWords;
  });
  return (100 * edits) / Math.max(1, words);
}

/** Renders one German sentence into a region exactly as synthesis prepares a `de-CH` passage. */
export function renderAsSynthesis(text: string, region: string, renderer: SwissGermanRenderer): string {
  const document = prepareSpeech({ passages: [{ language: 'de-CH', dialect: region, items: [{ type: 'text', text }] }] }, renderer);
  const item = document.passages[0]!.items[0]!;
  return item.type === 'text' ? item.text : '';
}

export interface GeneralFigure {
  readonly set: string;
  readonly region: string;
  readonly sentences: number;
  /** Corpus chrF and WER (per cent) of the renderer, as metrics.py defines them. */
  readonly chrF: number;
  readonly wer: number;
  /** The same for the German input copied unchanged. */
  readonly copyChrF: number;
  readonly copyWer: number;
  /** The hotline bench's figure: chrF averaged over sentences. */
  readonly sentenceChrF: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

/** The German sentences of the hotline development set: rendered before timing, to warm the code. */
let warmUpTexts: string[] | null = null;
function hotlineGerman(): string[] {
  warmUpTexts ??= (
    JSON.parse(fs.readFileSync(new URL('./dialect/devset.json', import.meta.url), 'utf8')) as { sentences: Array<{ de: string }> }
  ).sentences.map((sentence) => sentence.de);
  return warmUpTexts;
}

/**
 * Scores a region's pairs: renders each German sentence once, timed (on general text its words
 * are new to the pronunciation cache, as in a call), then the corpus figures.
 */
export function scoreRegion(
  set: string,
  region: string,
  pairs: ReadonlyArray<{ readonly de: string; readonly reference: string }>,
  renderer = new SwissGermanRenderer(),
): GeneralFigure & { readonly hypotheses: string[] } {
  // Loads the region's data and warms the code on other text, so that the first sentences are not timed cold.
  for (const text of hotlineGerman()) renderAsSynthesis(text, region, renderer);
  const hypotheses: string[] = [];
  const times: number[] = [];
  for (const { de } of pairs) {
    const started = performance.now();
    hypotheses.push(renderAsSynthesis(de, region, renderer));
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const references = pairs.map((pair) => pair.reference);
  const german = pairs.map((pair) => pair.de);
  return {
    set,
    region,
    sentences: pairs.length,
    chrF: corpusChrF(hypotheses, references),
    wer: corpusWer(hypotheses, references),
    copyChrF: corpusChrF(german, references),
    copyWer: corpusWer(german, references),
    sentenceChrF: hypotheses.reduce((sum, hypothesis, index) => sum + chrF(hypothesis, references[index]!), 0) / Math.max(1, pairs.length),
    p50Ms: times[Math.floor(times.length / 2)] ?? 0,
    p99Ms: times[Math.min(times.length - 1, Math.floor(times.length * 0.99))] ?? 0,
    hypotheses,
  };
}

/** The general-text sample of every region, scored. */
export function benchGeneral(pairs: readonly GeneralPair[], size = SAMPLE_SIZE, seed = SAMPLE_SEED): GeneralFigure[] {
  const renderer = new SwissGermanRenderer();
  return REGIONS.map((region) => {
    const sample = samplePairs(pairs, region, size, seed).map((pair) => ({ de: pair.de, reference: pair.gsw }));
    const { hypotheses: _hypotheses, ...figure } = scoreRegion('general', region, sample, renderer);
    return figure;
  });
}

/** The project's hotline sets (test/bench/dialect/devset.json, heldout.json), scored the same way. */
export function benchHotline(): GeneralFigure[] {
  const renderer = new SwissGermanRenderer();
  const figures: GeneralFigure[] = [];
  for (const set of ['devset', 'heldout']) {
    const file = new URL(`./dialect/${set}.json`, import.meta.url);
    const { sentences } = JSON.parse(fs.readFileSync(file, 'utf8')) as { sentences: Array<Record<string, string | number>> };
    for (const region of REGIONS) {
      const pairs = sentences
        .filter((sentence) => typeof sentence[region] === 'string')
        .map((sentence) => ({ de: sentence['de'] as string, reference: sentence[region] as string }));
      if (pairs.length === 0) continue;
      const { hypotheses: _hypotheses, ...figure } = scoreRegion(set, region, pairs, renderer);
      figures.push(figure);
    }
  }
  return figures;
}

/** Prints figures as the Markdown table of docs/performance.md. */
export function printGeneralTable(figures: readonly GeneralFigure[]): void {
  console.log('| set | region | sentences | chrF | copy chrF | Δ chrF | WER | copy WER | sentence-mean chrF | ms per sentence p50 / p99 |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  for (const f of figures) {
    const delta = f.chrF - f.copyChrF;
    console.log(
      `| ${f.set} | ${f.region} | ${f.sentences} | ${f.chrF.toFixed(1)} | ${f.copyChrF.toFixed(1)} | ${delta >= 0 ? '+' : ''}${delta.toFixed(1)} | ` +
        `${f.wer.toFixed(1)} % | ${f.copyWer.toFixed(1)} % | ${f.sentenceChrF.toFixed(1)} | ${f.p50Ms.toFixed(2)} / ${f.p99Ms.toFixed(2)} |`,
    );
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const path = process.env['SPRACHROHR_DIALECT_DEVSET'] || DEFAULT_DEVSET;
  const pairs = readGeneralSet(path);
  if (!pairs) {
    console.log(`No development set at ${path} (SPRACHROHR_DIALECT_DEVSET). To build it, as /work/shared/dialect/README.md says:`);
    console.log('  1. a git copy (with history) of github.com/mira-me/Swiss_German_to_German_Translation_ANLP_2023');
    console.log('  2. python3 /work/shared/dialect/build-dev-set.py GIT_DIR /tmp/swissdial-dev.jsonl   (outside the repository)');
    console.log('The set is CC BY-NC 4.0: measure with it, never commit it or anything taken from it.');
    process.exit(0);
  }
  console.log(`General text: ${path}, ${pairs.length} pairs; sample of ${SAMPLE_SIZE} sentences per region, seed ${SAMPLE_SEED}.`);
  console.log('chrF and WER are corpus figures as metrics.py computes them; copy = the German input unchanged.\n');
  const general = benchGeneral(pairs);
  printGeneralTable(general);
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  console.log(
    `\nMean of the regions: chrF ${mean(general.map((f) => f.chrF)).toFixed(1)}, copy ${mean(general.map((f) => f.copyChrF)).toFixed(1)}, ` +
      `weakest margin over copy ${Math.min(...general.map((f) => f.chrF - f.copyChrF)).toFixed(1)}.`,
  );
  console.log('\nHotline sets (test/bench/dialect/), the same figures:\n');
  printGeneralTable(benchHotline());
}
