/**
 * How long Swiss German rendering takes as synthesis runs it (clock times, normalisation,
 * German-side rewrites, lexicon, rules and pronunciation): for a 500-character text per region
 * (target ≤ 2 ms) and for the 10-word opening of a call, which is what it adds before `swift`'s
 * first audio (target: first audio moves by no more than 5 ms) — measured both as preparation
 * time and as eSpeak's first audio for the opening in Zürich German against Swiss Standard German;
 * and the 500 characters again with a deployment lexicon of 5,002 entries, and its load time.
 * Run: npm run bench (or: node --import tsx test/bench/dialect-speed.bench.ts)
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { pronounceText } from '../../engine/dialect/swiss-pronunciation.js';
import { createEngineRegistry } from '../../engine/registry.js';
import type { SpeechDocument } from '../../engine/types.js';
import { checkLexicon } from '../../src/speech/lexicon-loader.js';
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
  /** Pronouncing words never seen before (the word cache empty), per word. */
  uncachedWordUs: number;
  /** The same text with a deployment lexicon of this many entries (two of them in the text). */
  withLexicon: { entries: number; loadMs: number; perRegion: Array<{ region: string; p50Ms: number; p99Ms: number }> };
}

/** A lexicon of street names (none in the text) and two entries the text has, as a city's might be. */
function benchLexicon(streets: number): string {
  let yaml = 'entries:\n  - german: Stadtwerke\n    dialect: Stadtwärch\n    pronunciation: { ipa: "ˈʃtatʋærx" }\n';
  yaml += '  - german: Kundennummer\n    regions: { bern: Chundenummere }\n';
  for (let i = 0; i < streets; i++) yaml += `  - german: Strasse ${i} Nord\n    dialect: Strass ${i} Nord\n`;
  return yaml;
}

/** eSpeak's first audio for the 10-word opening, prepared as the service prepares it. */
export interface DialectFirstAudioFigures {
  /** Zürich German: rendered and given to eSpeak as phoneme input. */
  zurich: { p50Ms: number; p95Ms: number };
  /** Swiss Standard German: the same opening read as written. */
  hochdeutsch: { p50Ms: number; p95Ms: number };
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

/** Pronounces the St. Gallen references of the development set once: words not yet cached. */
function uncachedWordUs(): number {
  const devset = JSON.parse(readFileSync(new URL('dialect/devset.json', import.meta.url), 'utf8')) as { sentences: Array<Record<string, string>> };
  const text = devset.sentences.map((sentence) => sentence['stgallen'] ?? '').join(' ');
  const words = text.split(/\s+/).filter(Boolean).length;
  // Loads the region's rules, so that only the words are timed.
  pronounceText('Grüezi', 'stgallen');
  const started = performance.now();
  pronounceText(text, 'stgallen');
  return ((performance.now() - started) * 1000) / words;
}

/** Times the whole text preparation for de-CH passages per region. */
export function benchDialectSpeed(): DialectSpeedFigures {
  const renderer = new SwissGermanRenderer();
  // First, before anything has pronounced a St. Gallen word.
  const uncached = uncachedWordUs();
  const yaml = benchLexicon(5000);
  const loading = performance.now();
  const lexicon = checkLexicon('lexicon.yaml', yaml);
  const loadMs = performance.now() - loading;
  const withLexicon = new SwissGermanRenderer();
  withLexicon.setLexicon(lexicon);
  return {
    characters: FIVE_HUNDRED.length,
    perRegion: REGIONS.map((region) => ({ region, ...time(FIVE_HUNDRED, region, renderer) })),
    tenWords: time(TEN_WORDS, 'zurich', renderer),
    uncachedWordUs: uncached,
    withLexicon: { entries: lexicon.size, loadMs, perRegion: ['zurich', 'bern'].map((region) => ({ region, ...time(FIVE_HUNDRED, region, withLexicon) })) },
  };
}

/** First audio of the opening, from text preparation to eSpeak's first chunk, per dialect. */
export async function benchDialectFirstAudio(): Promise<DialectFirstAudioFigures> {
  const registry = await createEngineRegistry({
    languages: ['de-CH'],
    voices: ['anna'],
    voicesDir: null,
    sandboxCharactersPerSecond: 14,
    ttsEngine: 'espeak',
    ttsWorkers: 1,
    sttEngine: 'none',
    sttWorkers: 1,
    pocketsphinxModelDir: '',
    modelsDir: null,
  });
  const engine = registry.live.tts!;
  const renderer = new SwissGermanRenderer();
  const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;
  async function firstAudio(dialect: string): Promise<number> {
    const started = performance.now();
    const raw: SpeechDocument = { passages: [{ language: 'de-CH', dialect, items: [{ type: 'text', text: TEN_WORDS }] }] };
    const controller = new AbortController();
    try {
      for await (const event of engine.synthesize(
        prepareSpeech(raw, renderer),
        { voice: 'anna', speed: 1, style: null, sampleRateHz: 8000 },
        controller.signal,
      )) {
        if (event.type === 'audio') controller.abort();
      }
    } catch (error) {
      if (!controller.signal.aborted) throw error;
    }
    return performance.now() - started;
  }
  try {
    const times: Record<string, number[]> = { zurich: [], hochdeutsch: [] };
    for (let round = 0; round < 10; round++) for (const dialect of Object.keys(times)) await firstAudio(dialect);
    // Alternating, so that both see the same machine.
    for (let round = 0; round < 60; round++) for (const dialect of Object.keys(times)) times[dialect]!.push(await firstAudio(dialect));
    const figures = (values: number[]) => ({ p50Ms: percentile(values, 50), p95Ms: percentile(values, 95) });
    return { zurich: figures(times['zurich']!), hochdeutsch: figures(times['hochdeutsch']!) };
  } finally {
    await registry.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify({ ...benchDialectSpeed(), firstAudio: await benchDialectFirstAudio() }, null, 2));
}
