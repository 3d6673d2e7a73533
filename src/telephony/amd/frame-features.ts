/**
 * What answering-machine detection measures in each 20 ms frame of the callee's audio: its
 * energy, for voice activity, and how much of that energy one steady frequency carries, for the
 * beep. The frequency comes from the zero crossings (interpolated between samples, so a pure
 * tone's is exact to a few hertz), and one Goertzel filter at that frequency says whether the
 * frame is that tone or something else crossing zero as often (speech, noise). One filter at
 * the measured frequency instead of a bank over 400–2000 Hz keeps a frame at three passes over
 * its samples, with nothing allocated.
 */

/** The measures of one frame; one object per stream, overwritten by each {@link FrameFeatures.measure}. */
export class FrameFeatures {
  /** Mean square of the samples about their mean (the DC a G.711 line may carry is left out). */
  energy = 0;
  /** The frequency the zero crossings give, in Hz (0 when there are too few crossings). */
  toneHz = 0;
  /** Share of the energy at {@link toneHz}: about 1 for a pure tone, well below for speech. */
  tonality = 0;

  private readonly samples: number;

  constructor(
    private readonly rateHz: number,
    frameSamples: number,
    /** Frames quieter than this mean square are not checked for a tone (they cannot be a beep). */
    private readonly minToneEnergy: number,
  ) {
    this.samples = frameSamples;
  }

  /** Measures one frame (exactly the frame length given at construction). */
  measure(frame: Int16Array): void {
    const n = frame.length;
    if (n !== this.samples) throw new RangeError(`a frame has ${this.samples} samples, not ${n}`);
    let sum = 0;
    let squares = 0;
    for (let i = 0; i < n; i++) {
      const x = frame[i]!;
      sum += x;
      squares += x * x;
    }
    const mean = sum / n;
    this.energy = Math.max(0, squares / n - mean * mean);
    this.toneHz = 0;
    this.tonality = 0;
    if (this.energy < this.minToneEnergy) return;
    this.toneHz = this.crossingHz(frame, mean);
    if (this.toneHz > 0) this.tonality = this.goertzelShare(frame, mean, this.toneHz);
  }

  /** Frequency from the first to the last zero crossing, each placed between its samples by linear interpolation. */
  private crossingHz(frame: Int16Array, mean: number): number {
    let crossings = 0;
    let first = 0;
    let last = 0;
    let previous = frame[0]! - mean;
    for (let i = 1; i < frame.length; i++) {
      const x = frame[i]! - mean;
      if (previous < 0 !== x < 0) {
        const at = i - 1 + previous / (previous - x);
        if (crossings === 0) first = at;
        last = at;
        crossings++;
      }
      previous = x;
    }
    // Two crossings a period: with fewer than three there is no full period to measure.
    if (crossings < 3 || last <= first) return 0;
    return ((crossings - 1) * this.rateHz) / (2 * (last - first));
  }

  /** Share of the frame's energy that a Goertzel filter at `hz` finds. */
  private goertzelShare(frame: Int16Array, mean: number, hz: number): number {
    const coefficient = 2 * Math.cos((2 * Math.PI * hz) / this.rateHz);
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < frame.length; i++) {
      const s0 = frame[i]! - mean + coefficient * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    const power = s1 * s1 + s2 * s2 - coefficient * s1 * s2;
    // A sine of amplitude A over n samples has Goertzel power (A·n/2)² and mean square A²/2.
    const n = frame.length;
    return (2 * power) / (n * n * this.energy);
  }
}
