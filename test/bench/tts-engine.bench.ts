/**
 * Live synthesis on the embedded engine (eSpeak NG in worker threads), as a batch request runs
 * it: first-audio time and real-time factor for a 10-word and a 100-word German text per
 * model and format, peak memory , and the event loop's longest stall while 20 syntheses run.
 * Run: npm run bench (or: node --import tsx test/bench/tts-engine.bench.ts)
 */
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { createEngineRegistry } from '../../engine/registry.js';
import { loadMp3Encoder } from '../../src/audio/mp3-encoder.js';
import { loadResampler } from '../../src/audio/resampler.js';
import { FORMATS } from '../../src/catalog/formats.js';
import { loadConfig } from '../../src/config.js';
import { planSynthesis } from '../../src/speech/synthesis-request.js';
import { synthesizeBatch } from '../../src/speech/synthesis-service.js';
import { warmSynthesis } from '../../src/speech/warm-up.js';

const TEN_WORDS = 'Guten Tag, Sie sind mit dem Kundendienst der Stadtwerke verbunden.';
const HUNDRED_WORDS =
  'Guten Tag und herzlich willkommen beim Kundendienst der Stadtwerke. Unsere Büros sind von Montag bis Freitag ' +
  'zwischen acht und achtzehn Uhr für Sie da. Wenn Sie eine Frage zu Ihrer Rechnung haben, halten Sie bitte Ihre ' +
  'Kundennummer bereit; Sie finden sie oben rechts auf jeder Rechnung. Für Störungen im Strom- oder Wassernetz ' +
  'wählen Sie bitte die Zwei, wir sind rund um die Uhr erreichbar. Möchten Sie einen Umzug melden, können Sie das ' +
  'auch bequem auf unserer Webseite erledigen. Alle anderen Anliegen nimmt gerne die nächste freie Mitarbeiterin ' +
  'entgegen. Vielen Dank für Ihre Geduld, wir sind gleich für Sie da.';
const ROUNDS = 30;

const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))]!;

export interface EngineFigures {
  firstAudio: Array<{ text: string; model: string; p50Ms: number; p95Ms: number }>;
  batch: Array<{ text: string; format: string; rateHz: number; audioSeconds: number; ms: number; rtf: number }>;
  peakRssMb: number;
  concurrent: { syntheses: number; maxStallMs: number; p99StallMs: number; wallMs: number };
  workers: number;
}

/** Measures the live synthesis path end to end (without HTTP). */
export async function benchTtsEngine(): Promise<EngineFigures> {
  await Promise.all([loadMp3Encoder(), loadResampler()]);
  // The service's default: one core stays with the event loop.
  const workers = loadConfig({}).ttsWorkers;
  const registry = await createEngineRegistry({
    languages: ['de-CH'],
    voices: ['anna'],
    voicesDir: null,
    sandboxCharactersPerSecond: 14,
    ttsEngine: 'espeak',
    ttsWorkers: workers,
    sttEngine: 'none',
    sttWorkers: 1,
    pocketsphinxModelDir: '',
    modelsDir: null,
  });
  const engine = registry.live.tts!;
  const engines = { engine, dialect: registry.dialect };
  // As the server does at start.
  await warmSynthesis(engines);
  let peakRss = process.memoryUsage().rss;
  const sampleMemory = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 20);
  try {
    const firstAudio: EngineFigures['firstAudio'] = [];
    for (const [label, text] of [
      ['10 words', TEN_WORDS],
      ['100 words', HUNDRED_WORDS],
    ] as const) {
      for (const model of ['swift', 'studio'] as const) {
        const plan = planSynthesis({ text, model, format: 'pcm16' }, false);
        const times: number[] = [];
        for (let round = 0; round < ROUNDS; round++) {
          const started = performance.now();
          const controller = new AbortController();
          const options = { voice: plan.voice, speed: 1, style: null, sampleRateHz: plan.sampleRateHz };
          try {
            for await (const event of engine.synthesize(plan.speech.document, options, controller.signal)) {
              if (event.type === 'audio') {
                times.push(performance.now() - started);
                controller.abort();
              }
            }
          } catch (error) {
            // The abort after the first chunk ends the stream with an AbortError.
            if (!controller.signal.aborted) throw error;
          }
        }
        firstAudio.push({ text: label, model, p50Ms: percentile(times, 50), p95Ms: percentile(times, 95) });
      }
    }
    const batch: EngineFigures['batch'] = [];
    for (const [label, text] of [
      ['10 words', TEN_WORDS],
      ['100 words', HUNDRED_WORDS],
    ] as const) {
      for (const format of FORMATS) {
        const plan = planSynthesis({ text, format: format.id }, false);
        const times: number[] = [];
        let audioSeconds = 0;
        for (let round = 0; round < 15; round++) {
          const started = performance.now();
          const outcome = await synthesizeBatch(engines, plan, new AbortController().signal);
          times.push(performance.now() - started);
          audioSeconds = outcome.durationSeconds;
        }
        const ms = percentile(times, 50);
        batch.push({ text: label, format: format.id, rateHz: plan.sampleRateHz, audioSeconds, ms, rtf: ms / 1000 / audioSeconds });
      }
    }
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    const syntheses = 20;
    histogram.enable();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: syntheses }, (_, i) =>
        synthesizeBatch(engines, planSynthesis({ text: HUNDRED_WORDS, format: FORMATS[i % FORMATS.length]!.id }, false), new AbortController().signal),
      ),
    );
    const wallMs = performance.now() - started;
    histogram.disable();
    return {
      firstAudio,
      batch,
      peakRssMb: peakRss / 1024 / 1024,
      concurrent: { syntheses, maxStallMs: histogram.max / 1e6, p99StallMs: histogram.percentile(99) / 1e6, wallMs },
      workers,
    };
  } finally {
    clearInterval(sampleMemory);
    await registry.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchTtsEngine(), null, 2));
}
