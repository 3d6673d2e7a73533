/**
 * In-band DTMF detection for calls whose peer sends key presses as tones in the audio rather
 * than as RFC 4733 events. Goertzel filters measure the eight DTMF frequencies over 20 ms
 * windows every 10 ms; a window counts as a key only if the two strongest tones (one per group)
 * are loud enough, within the twist limits, clearly above the other tones of their group,
 * carry most of the window's energy, have no strong second harmonic (voice has them) and last
 * through the whole window. A key is reported once per press, after it held for about 40 ms.
 */

/** How a {@link GoertzelDtmfDetector} is set up; defaults follow common practice (ITU-T Q.24 ranges). */
export interface GoertzelDtmfOptions {
  /** 8000 or 16000 Hz (any rate above 6.6 kHz works; the window is always 20 ms). */
  readonly sampleRate: number;
  /** Quietest tone accepted, peak level relative to full scale (default −38 dBFS). */
  readonly minToneDbfs?: number;
  /** How much louder the low-group tone may be than the high one (default 8 dB). */
  readonly normalTwistDb?: number;
  /** How much louder the high-group tone may be than the low one (default 4 dB). */
  readonly reverseTwistDb?: number;
}

const ROWS = [697, 770, 852, 941];
const COLUMNS = [1209, 1336, 1477, 1633];
const KEYS = ['123A', '456B', '789C', '*#0D'].map((row) => [...row]);
/** The best tone of a group must be this much stronger than the group's others (−8 dB). */
const GROUP_MARGIN = 10 ** (8 / 10);
/** Share of the window's energy the two tones must carry: about 4 dB above everything else together. */
const TONE_SHARE = 0.7;
/**
 * A second harmonic of the high-group tone this strong (−10 dB) marks voice, whose harmonics come
 * in series, not a DTMF generator. Only the high group is checked: twice a low-group frequency
 * (1394–1882 Hz) lies within 60 Hz of a high-group tone, which a 20 ms window cannot tell apart.
 */
const HARMONIC_LIMIT = 10 ** (-10 / 10);
/** The two 10 ms halves of a window may differ in energy this much at most (6 dB): the tone lasts through it. */
const STEADY_RATIO = 4;
/** Frequency deviation a generator may have (ITU-T Q.24: accept ±1.5 %). */
const DEVIATION = 0.015;
/** Windows in a row (10 ms apart) that make a press: 3 needs about 30–40 ms of tone and rejects 20 ms blips. */
const HITS_TO_PRESS = 3;
/** Windows in a row without the key that end a press: bridges 10 ms dropouts, splits presses 40 ms apart. */
const MISSES_TO_RELEASE = 4;

/** Detects DTMF key presses in PCM16 audio of one stream. */
export class GoertzelDtmfDetector {
  private readonly half: number;
  private readonly window: Float64Array;
  private readonly coefficients: Float64Array;
  private readonly powers = new Float64Array(8);
  private readonly minTonePower: number;
  private readonly normalTwist: number;
  private readonly reverseTwist: number;
  private filled = 0;
  private halves = 0;
  private candidate: string | null = null;
  private hits = 0;
  private pressed: string | null = null;
  private misses = 0;

  constructor(options: GoertzelDtmfOptions) {
    this.half = Math.round(options.sampleRate / 100);
    const n = this.half * 2;
    this.window = new Float64Array(n);
    // Coefficients 0–23: each tone (rows, then columns) at its frequency and ±1.5 %, the deviation a
    // receiver must accept (over 20 ms a 1633 Hz tone 1.5 % off loses 3.7 dB at its nominal
    // frequency alone, enough to fail the twist test); 24–27: the columns' second harmonics.
    const fundamentals = [...ROWS, ...COLUMNS];
    const probes = fundamentals.flatMap((f) => [f, f * (1 - DEVIATION), f * (1 + DEVIATION)]);
    const frequencies = [...probes, ...COLUMNS.map((f) => 2 * f)];
    this.coefficients = Float64Array.from(frequencies, (f) => 2 * Math.cos((2 * Math.PI * f) / options.sampleRate));
    // A sine of amplitude A over n samples gives Goertzel power (A·n/2)².
    const minAmplitude = 32768 * 10 ** ((options.minToneDbfs ?? -38) / 20);
    this.minTonePower = ((minAmplitude * n) / 2) ** 2;
    this.normalTwist = 10 ** ((options.normalTwistDb ?? 8) / 10);
    this.reverseTwist = 10 ** ((options.reverseTwistDb ?? 4) / 10);
  }

  /** Takes the next samples (any length); returns the keys whose press was recognised in them, in order. */
  process(pcm: Int16Array): string[] {
    const keys: string[] = [];
    const n = this.window.length;
    for (let i = 0; i < pcm.length;) {
      // The window is kept in time order: the newest half is written after the older one.
      const offset = this.half + this.filled;
      const take = Math.min(pcm.length - i, this.half - this.filled);
      for (let j = 0; j < take; j++) this.window[offset + j] = pcm[i + j]!;
      i += take;
      this.filled += take;
      if (this.filled < this.half) break;
      this.filled = 0;
      this.halves++;
      const key = this.halves >= 2 ? this.classify() : null;
      const pressed = this.track(key);
      if (pressed) keys.push(pressed);
      this.window.copyWithin(0, this.half, n);
    }
    return keys;
  }

  /** Forgets the audio and any press in progress (a new stream). */
  reset(): void {
    this.filled = 0;
    this.halves = 0;
    this.candidate = null;
    this.hits = 0;
    this.pressed = null;
    this.misses = 0;
  }

  /** Follows the per-window keys; returns a key when its press is recognised. */
  private track(key: string | null): string | null {
    if (key !== null && key === this.candidate) this.hits++;
    else {
      this.candidate = key;
      this.hits = key === null ? 0 : 1;
    }
    if (key !== null && key === this.pressed) {
      this.misses = 0;
      return null;
    }
    if (this.pressed !== null && ++this.misses >= MISSES_TO_RELEASE) this.pressed = null;
    if (key !== null && this.hits >= HITS_TO_PRESS) {
      this.pressed = key;
      this.misses = 0;
      return key;
    }
    return null;
  }

  /** The key the current 20 ms window holds, or null. */
  private classify(): string | null {
    const x = this.window;
    const n = x.length;
    let first = 0;
    let second = 0;
    for (let i = 0; i < this.half; i++) first += x[i]! * x[i]!;
    for (let i = this.half; i < n; i++) second += x[i]! * x[i]!;
    // Two tones at the minimum level carry at least this energy: quieter windows (silence) end here.
    if (first + second < (4 * this.minTonePower) / n) return null;
    if (Math.min(first, second) * STEADY_RATIO < Math.max(first, second)) return null;
    const powers = this.powers;
    for (let k = 0; k < 8; k++) powers[k] = Math.max(this.power(3 * k), this.power(3 * k + 1), this.power(3 * k + 2));
    const row = strongest(powers, 0);
    const column = strongest(powers, 4);
    const rowPower = powers[row]!;
    const columnPower = powers[column]!;
    if (rowPower < this.minTonePower || columnPower < this.minTonePower) return null;
    if (rowPower > columnPower * this.normalTwist || columnPower > rowPower * this.reverseTwist) return null;
    for (let k = 0; k < 8; k++) {
      if (k !== row && k !== column && powers[k]! * GROUP_MARGIN > (k < 4 ? rowPower : columnPower)) return null;
    }
    // Goertzel power P of a sine is (A·n/2)² and its energy A²·n/2, so the energy is 2P/n.
    if ((2 * (rowPower + columnPower)) / n < TONE_SHARE * (first + second)) return null;
    if (this.power(20 + column) > columnPower * HARMONIC_LIMIT) return null;
    return KEYS[row]![column - 4]!;
  }

  /** Goertzel power of the window at frequency `k`. */
  private power(k: number): number {
    const coefficient = this.coefficients[k]!;
    const x = this.window;
    let s1 = 0;
    let s2 = 0;
    for (let i = 0; i < x.length; i++) {
      const s0 = x[i]! + coefficient * s1 - s2;
      s2 = s1;
      s1 = s0;
    }
    return s1 * s1 + s2 * s2 - coefficient * s1 * s2;
  }
}

/** Index of the largest of the four powers from `from`. */
function strongest(powers: Float64Array, from: number): number {
  let best = from;
  for (let k = from + 1; k < from + 4; k++) if (powers[k]! > powers[best]!) best = k;
  return best;
}
