import { findEspeakLibrary } from '../../engine/espeak/espeak-native.js';
import { EspeakPool } from '../../engine/espeak/espeak-pool.js';
import { EspeakTtsEngine } from '../../engine/espeak/espeak-tts.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { loadResampler, Resampler } from '../../src/audio/resampler.js';

/**
 * Real speech for recognition tests: eSpeak NG speaks the texts (one pool for the caller's
 * tests), resampled to the rate asked for.
 */
export class SpeechAudio {
  private constructor(private readonly pool: EspeakPool) {}

  static async start(): Promise<SpeechAudio> {
    await loadResampler();
    return new SpeechAudio(await EspeakPool.start(1, findEspeakLibrary(undefined)));
  }

  /** `text` spoken in `language` by `voice`, as PCM16 mono at `rateHz`. */
  async speak(text: string, rateHz: number, language = 'en', voice = 'jonas'): Promise<Int16Array> {
    const engine = new EspeakTtsEngine(this.pool);
    const chunks: Int16Array[] = [];
    const document = { passages: [{ language, dialect: 'standard', items: [{ type: 'text' as const, text }] }] };
    let resampler: Resampler | null = null;
    for await (const event of engine.synthesize(document, { voice, speed: 1, style: null, sampleRateHz: rateHz }, new AbortController().signal)) {
      if (event.type !== 'audio') continue;
      if (event.sampleRateHz === rateHz) chunks.push(event.pcm);
      else chunks.push((resampler ??= new Resampler(event.sampleRateHz, rateHz)).process(event.pcm));
    }
    if (resampler) {
      chunks.push(resampler.flush());
      resampler.destroy();
    }
    return concatPcm(chunks);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

/** Silence of `seconds` at `rateHz`. */
export function silencePcm(seconds: number, rateHz: number): Int16Array {
  return new Int16Array(Math.round(seconds * rateHz));
}

/** Where a recording is louder than `threshold` (RMS over 20 ms frames): first and last loud frame, in seconds. */
export function loudSpan(pcm: Int16Array, rateHz: number, from = 0, to = pcm.length, threshold = 500): { start: number; end: number } {
  const frame = rateHz / 50;
  let start = -1;
  let end = -1;
  // Bounds computed from seconds may be a hair off a whole sample.
  for (let at = Math.round(from); at + frame <= Math.round(to); at += frame) {
    let sum = 0;
    for (let i = at; i < at + frame; i++) sum += pcm[i]! * pcm[i]!;
    if (Math.sqrt(sum / frame) > threshold) {
      if (start < 0) start = at;
      end = at + frame;
    }
  }
  return { start: start / rateHz, end: end / rateHz };
}
