/**
 * Encoding cost of each output format per second of audio: how many times faster than real
 * time each encoder runs, at the format's default rate and at its extreme rates. Audio goes in
 * as 100 ms chunks, as synthesis delivers it.
 * Run: npm run bench (or: node --import tsx test/bench/encode-formats.bench.ts)
 */
import { performance } from 'node:perf_hooks';
import { createStreamEncoder } from '../../src/audio/stream-encoder.js';
import { loadMp3Encoder } from '../../src/audio/mp3-encoder.js';
import { FORMATS, type FormatId } from '../../src/catalog/formats.js';

const AUDIO_SECONDS = 10;
const ROUNDS = 10;
/** Timed trials per case; the median is reported, as the machines are shared and noisy. */
const TRIALS = 7;

/** Speech-like test signal: a tone gliding through the voice band with syllable-rate gaps. */
function testSignal(rate: number): Int16Array {
  const pcm = new Int16Array(AUDIO_SECONDS * rate);
  let phase = 0;
  for (let i = 0; i < pcm.length; i++) {
    const t = i / rate;
    phase += (2 * Math.PI * (180 + 120 * Math.sin(2 * Math.PI * 0.7 * t))) / rate;
    const syllable = Math.sin(2 * Math.PI * 4 * t) > -0.3 ? 1 : 0;
    pcm[i] = Math.round(9000 * syllable * (Math.sin(phase) + 0.3 * Math.sin(3 * phase)));
  }
  return pcm;
}

/** Encodes a signal through a stream encoder in 100 ms chunks. */
async function encodeInChunks(format: FormatId, pcm: Int16Array, rate: number): Promise<number> {
  const encoder = await createStreamEncoder(format, rate, 1);
  const chunk = rate / 10;
  let bytes = 0;
  for (let at = 0; at < pcm.length; at += chunk) for (const part of encoder.write(pcm.subarray(at, at + chunk))) bytes += part.length;
  for (const part of encoder.end()) bytes += part.length;
  return bytes;
}

export interface EncodeFigure {
  format: string;
  rateHz: number;
  msPerAudioSecond: number;
  timesRealTime: number;
}

/** Measures every format at its lowest, default and highest rate. */
export async function benchEncoding(): Promise<EncodeFigure[]> {
  await loadMp3Encoder();
  const figures: EncodeFigure[] = [];
  for (const format of FORMATS) {
    const rates = [...new Set([format.sample_rates_hz[0]!, format.default_sample_rate_hz, format.sample_rates_hz[format.sample_rates_hz.length - 1]!])];
    for (const rate of rates) {
      const pcm = testSignal(rate);
      for (let i = 0; i < 3; i++) await encodeInChunks(format.id, pcm, rate); // warm up
      const trials: number[] = [];
      for (let trial = 0; trial < TRIALS; trial++) {
        const start = performance.now();
        for (let i = 0; i < ROUNDS; i++) await encodeInChunks(format.id, pcm, rate);
        trials.push((performance.now() - start) / ROUNDS / AUDIO_SECONDS);
      }
      const msPerAudioSecond = trials.sort((a, b) => a - b)[Math.floor(TRIALS / 2)]!;
      figures.push({ format: format.id, rateHz: rate, msPerAudioSecond, timesRealTime: 1000 / msPerAudioSecond });
    }
  }
  return figures;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of await benchEncoding()) {
    console.log(
      `${f.format.padEnd(6)} ${String(f.rateHz).padStart(5)} Hz  ${f.msPerAudioSecond.toFixed(3)} ms per audio second  ${Math.round(f.timesRealTime)}× real time`,
    );
  }
}
