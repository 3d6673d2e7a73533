/**
 * How long Swiss German rendering takes as synthesis runs it (clock times, normalisation,
 * German-side rewrites, lexicon and rules): for a 500-character text per region (target ≤ 2 ms)
 * and for the 10-word opening of a call, which is what it adds before `swift`'s first audio
 * (target: first audio moves by no more than 5 ms).
 * Run: npm run bench (or: node --import tsx test/bench/dialect-speed.bench.ts)
 */
import { performance } from 'node:perf_hooks';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { prepareSpeech } from '../../src/speech/synthesis-service.js';

const FIVE_HUNDRED =
  'Guten Tag und willkommen beim Kundendienst der Stadtwerke. Unsere Büros sind von Montag bis Freitag von 8 bis 17 Uhr ' +
  'für Sie da. Ihre Rechnung über 245 Franken war am 3. Mai 2026 fällig; die Zahlung wurde gestern verbucht. Für Fragen ' +
  'zur Rechnung drücken Sie die Eins, für Störungen die Zwei. Der Techniker, der Ihren Auftrag bearbeitet, kommt um 14:30 Uhr. ' +
  'Sie erreichen uns unter 044 668 18 00. Bitte halten Sie Ihre Kundennummer bereit. Vielen Dank für Ihren Anruf und auf Wiederhören. Wir wünschen Ihnen einen schönen Tag.';
const TEN_WORDS = 'Guten Tag, Sie sind mit dem Kundendienst der Stadtwerke verbunden.';
const REGIONS = ['standard', 'zurich', 'bern', 'basel', 'luzern', 'stgallen', 'aargau', 'graubuenden', 'wallis'];
const ROUNDS = 300;

export interface DialectSpeedFigures {
  characters: number;
  perRegion: Array<{ region: string; p50Ms: number; p99Ms: number }>;
  tenWords: { p50Ms: number; p99Ms: number };
}

function time(text: string, region: string, renderer: SwissGermanRenderer): { p50Ms: number; p99Ms: number } {
  const document = { passages: [{ language: 'de-CH', dialect: region, items: [{ type: 'text' as const, text }] }] };
  for (let i = 0; i < 50; i++) prepareSpeech(document, renderer);
  const times: number[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    const started = performance.now();
    prepareSpeech(document, renderer);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return { p50Ms: times[Math.floor(ROUNDS / 2)]!, p99Ms: times[Math.floor(ROUNDS * 0.99)]! };
}

/** Times the whole text preparation for de-CH passages per region. */
export function benchDialectSpeed(): DialectSpeedFigures {
  const renderer = new SwissGermanRenderer();
  return {
    characters: FIVE_HUNDRED.length,
    perRegion: REGIONS.map((region) => ({ region, ...time(FIVE_HUNDRED, region, renderer) })),
    tenWords: time(TEN_WORDS, 'zurich', renderer),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(benchDialectSpeed(), null, 2));
}
