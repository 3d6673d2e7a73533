/**
 * Quality of Swiss German dialect rendering on the development set (test/bench/dialect/):
 * chrF (character n-grams 1–6, β = 2, the main figure) and WER after normalising case and
 * punctuation, per region, for the renderer as synthesis runs it (normalisation, then the
 * dialect seam) and for the German input copied unchanged as a yardstick.
 * Run: npm run bench (or: node --import tsx test/bench/dialect-quality.bench.ts)
 */
import fs from 'node:fs/promises';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { prepareSpeech } from '../../src/speech/synthesis-service.js';

interface DevSentence {
  readonly id: number;
  readonly de: string;
  readonly [region: string]: string | number;
}

/** chrF: character n-gram F-score (β = 2) averaged over n = 1…6, whitespace ignored, 0–100. */
export function chrF(hypothesis: string, reference: string, maxN = 6, beta = 2): number {
  const strip = (text: string) => text.replace(/\s+/g, '');
  const grams = (text: string, n: number) => {
    const counts = new Map<string, number>();
    for (let i = 0; i + n <= text.length; i++) counts.set(text.slice(i, i + n), (counts.get(text.slice(i, i + n)) ?? 0) + 1);
    return counts;
  };
  const h = strip(hypothesis);
  const r = strip(reference);
  let precision = 0;
  let recall = 0;
  let orders = 0;
  for (let n = 1; n <= maxN; n++) {
    const hg = grams(h, n);
    const rg = grams(r, n);
    const hTotal = [...hg.values()].reduce((a, b) => a + b, 0);
    const rTotal = [...rg.values()].reduce((a, b) => a + b, 0);
    if (hTotal === 0 || rTotal === 0) continue;
    let match = 0;
    for (const [gram, count] of hg) match += Math.min(count, rg.get(gram) ?? 0);
    precision += match / hTotal;
    recall += match / rTotal;
    orders++;
  }
  if (orders === 0) return 0;
  precision /= orders;
  recall /= orders;
  if (precision + recall === 0) return 0;
  return (100 * (1 + beta ** 2) * precision * recall) / (beta ** 2 * precision + recall);
}

/** Word error rate after lower-casing and removing punctuation. */
export function wer(hypothesis: string, reference: string): number {
  const words = (text: string) =>
    text
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s-]/gu, ' ')
      .split(/\s+/)
      .filter(Boolean);
  const a = words(reference);
  const b = words(hypothesis);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]! / Math.max(1, a.length);
}

export interface DialectFigure {
  region: string;
  sentences: number;
  chrF: number;
  wer: number;
  copyChrF: number;
  copyWer: number;
}

/**
 * Scores every region that has references in a set: `devset` (the data was written alongside
 * it) or `heldout` (never used to write the data, so the honest figure).
 */
export async function benchDialectQuality(set: 'devset' | 'heldout' = 'devset'): Promise<DialectFigure[]> {
  const file = new URL(`./dialect/${set}.json`, import.meta.url);
  const { sentences } = JSON.parse(await fs.readFile(file, 'utf8')) as { sentences: DevSentence[] };
  const regions = [...new Set(sentences.flatMap((s) => Object.keys(s).filter((k) => k !== 'id' && k !== 'de')))];
  const renderer = new SwissGermanRenderer();
  const figures: DialectFigure[] = [];
  for (const region of regions) {
    const pairs = sentences.filter((s) => typeof s[region] === 'string');
    let chrfSum = 0;
    let werSum = 0;
    let copyChrf = 0;
    let copyWer = 0;
    for (const sentence of pairs) {
      const reference = sentence[region] as string;
      const document = prepareSpeech({ passages: [{ language: 'de-CH', dialect: region, items: [{ type: 'text', text: sentence.de }] }] }, renderer);
      const item = document.passages[0]!.items[0]!;
      const rendered = item.type === 'text' ? item.text : '';
      chrfSum += chrF(rendered, reference);
      werSum += wer(rendered, reference);
      copyChrf += chrF(sentence.de, reference);
      copyWer += wer(sentence.de, reference);
    }
    const n = pairs.length;
    figures.push({ region, sentences: n, chrF: chrfSum / n, wer: werSum / n, copyChrF: copyChrf / n, copyWer: copyWer / n });
  }
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of [...(await benchDialectQuality('devset')), ...(await benchDialectQuality('heldout'))]) {
    console.log(
      `${f.region}: ${f.sentences} sentences, chrF ${f.chrF.toFixed(1)}, WER ${(f.wer * 100).toFixed(1)} % (German copied: chrF ${f.copyChrF.toFixed(1)}, WER ${(f.copyWer * 100).toFixed(1)} %)`,
    );
  }
}
