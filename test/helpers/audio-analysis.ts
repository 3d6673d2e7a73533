import { rms } from '../engine/tts-conformance.js';

/**
 * Typical fundamental frequency of voiced speech: per 40 ms frame the autocorrelation peak in
 * 70–400 Hz, refined by parabolic interpolation; the mean of the middle half of the frame
 * estimates (robust to octave slips at either end).
 */
export function medianPitchHz(pcm: Int16Array, rate: number): number {
  const frame = Math.round(rate * 0.04);
  const minLag = Math.round(rate / 400);
  const maxLag = Math.round(rate / 70);
  const estimates: number[] = [];
  for (let start = 0; start + frame + maxLag + 1 < pcm.length; start += frame) {
    const slice = pcm.subarray(start, start + frame + maxLag + 1);
    if (rms(slice) < 1500) continue;
    const correlation = (lag: number): number => {
      let sum = 0;
      for (let i = 0; i < frame; i++) sum += slice[i]! * slice[i + lag]!;
      return sum;
    };
    let bestLag = 0;
    let best = 0;
    for (let lag = minLag; lag <= maxLag; lag++) {
      const value = correlation(lag);
      if (value > best) {
        best = value;
        bestLag = lag;
      }
    }
    if (bestLag <= minLag || bestLag >= maxLag) continue;
    const left = correlation(bestLag - 1);
    const right = correlation(bestLag + 1);
    const shift = (left - right) / (2 * (left - 2 * best + right) || 1);
    estimates.push(rate / (bestLag + shift));
  }
  estimates.sort((a, b) => a - b);
  const middle = estimates.slice(Math.floor(estimates.length / 4), Math.ceil((estimates.length * 3) / 4));
  return middle.reduce((sum, f) => sum + f, 0) / Math.max(1, middle.length);
}
