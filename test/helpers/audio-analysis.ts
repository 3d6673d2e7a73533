import { rms } from '../engine/tts-conformance.js';

/** Median fundamental frequency of the voiced 40 ms frames, by autocorrelation (70–400 Hz). */
export function medianPitchHz(pcm: Int16Array, rate: number): number {
  const frame = Math.round(rate * 0.04);
  const estimates: number[] = [];
  for (let start = 0; start + frame * 2 < pcm.length; start += frame) {
    const slice = pcm.subarray(start, start + frame * 2);
    if (rms(slice) < 1500) continue;
    let bestLag = 0;
    let best = 0;
    for (let lag = Math.round(rate / 400); lag <= Math.round(rate / 70); lag++) {
      let sum = 0;
      for (let i = 0; i < frame; i++) sum += slice[i]! * slice[i + lag]!;
      if (sum > best) {
        best = sum;
        bestLag = lag;
      }
    }
    if (bestLag > 0) estimates.push(rate / bestLag);
  }
  estimates.sort((a, b) => a - b);
  return estimates[Math.floor(estimates.length / 2)] ?? 0;
}
