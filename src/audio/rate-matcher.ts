import { concatPcm } from './pcm.js';
import { Resampler } from './resampler.js';

/**
 * Brings a synthesis's audio to the requested rate: chunks pass through untouched when the
 * rates agree, else through one streaming resampler for the whole synthesis.
 */
export class RateMatcher {
  private resampler: Resampler | null = null;

  constructor(private readonly targetRateHz: number) {}

  /** Converts a chunk; a change of input rate (passages from different models) flushes first. */
  push(pcm: Int16Array, rateHz: number): Int16Array {
    let tail: Int16Array | null = null;
    if (this.resampler && this.resampler.inputRateHz !== rateHz) tail = this.finish();
    if (rateHz === this.targetRateHz) return tail ? concatPcm([tail, pcm]) : pcm;
    this.resampler ??= new Resampler(rateHz, this.targetRateHz);
    const converted = this.resampler.process(pcm);
    return tail ? concatPcm([tail, converted]) : converted;
  }

  /** The resampler's held-back tail (once), and frees it; later calls return null. */
  finish(): Int16Array | null {
    if (!this.resampler) return null;
    const tail = this.resampler.flush();
    this.resampler.destroy();
    this.resampler = null;
    return tail;
  }
}
