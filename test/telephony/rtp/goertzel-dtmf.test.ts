/**
 * In-band DTMF detection on synthesized signals: every key at both rates, off-frequency and
 * twisted tones, noise, G.711, durations at the edges, one report per press, and signals that
 * must never trigger (voice-like harmonic series, white noise, single tones, twist beyond the limits).
 */
import { describe, expect, it } from 'vitest';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from '../../../src/audio/g711.js';
import { GoertzelDtmfDetector } from '../../../src/telephony/rtp/goertzel-dtmf.js';

const ROWS = [697, 770, 852, 941];
const COLUMNS = [1209, 1336, 1477, 1633];
const KEYS = ['123A', '456B', '789C', '*#0D'];
const ALL = KEYS.flatMap((row, r) => [...row].map((key, c) => ({ key, low: ROWS[r]!, high: COLUMNS[c]! })));

/** A deterministic uniform noise source in −1…1. */
function noiseSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (state * 1103515245 + 12345) >>> 0) / 2 ** 31 - 1;
}

interface ToneSpec {
  readonly low: number;
  readonly high: number;
  readonly ms: number;
  /** Peak amplitude of each tone. */
  readonly amplitude?: number;
  /** dB by which the low tone is louder than the high one (negative: reverse twist). */
  readonly twistDb?: number;
  /** Frequency deviation, e.g. 0.015. */
  readonly deviation?: number;
  readonly noise?: number;
}

function dualTone(rate: number, spec: ToneSpec, random = noiseSource(1)): Int16Array {
  const n = Math.round((rate * spec.ms) / 1000);
  const amplitude = spec.amplitude ?? 8000;
  const twist = spec.twistDb ?? 0;
  const lowAmp = twist >= 0 ? amplitude : amplitude * 10 ** (twist / 20);
  const highAmp = twist >= 0 ? amplitude * 10 ** (-twist / 20) : amplitude;
  const d = 1 + (spec.deviation ?? 0);
  return Int16Array.from({ length: n }, (_, i) => {
    const t = i / rate;
    const v = lowAmp * Math.sin(2 * Math.PI * spec.low * d * t) + highAmp * Math.sin(2 * Math.PI * spec.high * d * t + 1) + (spec.noise ?? 0) * random();
    return Math.max(-32768, Math.min(32767, Math.round(v)));
  });
}

const silence = (rate: number, ms: number): Int16Array => new Int16Array(Math.round((rate * ms) / 1000));

function concat(...parts: Int16Array[]): Int16Array {
  const out = new Int16Array(parts.reduce((sum, p) => sum + p.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}

/** Detects over the whole signal, fed in 20 ms frames like a call's audio. */
function detect(rate: number, pcm: Int16Array): string {
  const detector = new GoertzelDtmfDetector({ sampleRate: rate });
  const frame = rate / 50;
  let keys = '';
  for (let i = 0; i < pcm.length; i += frame) keys += detector.process(pcm.subarray(i, i + frame)).join('');
  return keys;
}

/** A tone with silence around it, starting at a given offset into the 10 ms analysis grid. */
const framed = (rate: number, spec: ToneSpec, offsetMs = 3): Int16Array => concat(silence(rate, 40 + offsetMs), dualTone(rate, spec), silence(rate, 80));

describe.each([8000, 16000])('GoertzelDtmfDetector at %i Hz', (rate) => {
  it('recognises all sixteen keys, once each', () => {
    for (const { key, low, high } of ALL) expect(detect(rate, framed(rate, { low, high, ms: 100 })), key).toBe(key);
    const dialled = concat(...ALL.map(({ low, high }) => concat(dualTone(rate, { low, high, ms: 70 }), silence(rate, 60))));
    expect(detect(rate, dialled)).toBe(ALL.map((k) => k.key).join(''));
  });

  it('accepts tones 1.5 % off frequency, with normal twist up to 8 dB and reverse twist up to 4 dB', () => {
    for (const { key, low, high } of ALL) {
      for (const deviation of [-0.015, 0.015])
        for (const twistDb of [-3.5, 0, 7]) {
          expect(detect(rate, framed(rate, { low, high, ms: 60, deviation, twistDb })), `${key} ${deviation} ${twistDb} dB`).toBe(key);
        }
    }
  });

  it('rejects twist beyond the limits', () => {
    for (const { key, low, high } of ALL) {
      expect(detect(rate, framed(rate, { low, high, ms: 100, twistDb: 11 })), `${key} normal`).toBe('');
      expect(detect(rate, framed(rate, { low, high, ms: 100, twistDb: -7 })), `${key} reverse`).toBe('');
    }
  });

  it('works from −30 dBFS per tone to full scale, and ignores tones below −42 dBFS', () => {
    for (const amplitude of [32768 * 10 ** (-30 / 20), 2000, 16000]) {
      for (const { key, low, high } of ALL) expect(detect(rate, framed(rate, { low, high, ms: 80, amplitude })), `${key} at ${amplitude}`).toBe(key);
    }
    for (const { low, high } of ALL) expect(detect(rate, framed(rate, { low, high, ms: 80, amplitude: 32768 * 10 ** (-42 / 20) }))).toBe('');
  });

  it('hears keys through noise 20 dB below the tones', () => {
    // Each tone 4000 peak (power 8e6); uniform noise ±1730 has power 1e6 … ±550 gives 1e5: 20 dB under both tones together.
    const random = noiseSource(7);
    for (const { key, low, high } of ALL) expect(detect(rate, framed(rate, { low, high, ms: 80, amplitude: 4000, noise: 1730 * 0.55 }, 0)), key).toBe(key);
    const noisy = concat(
      dualTone(rate, { low: 852, high: 1477, ms: 80, amplitude: 4000, noise: 1000 }, random),
      dualTone(rate, { low: 0, high: 0, ms: 100, amplitude: 0, noise: 1000 }, random),
    );
    expect(detect(rate, noisy)).toBe('9');
  });

  it('detects 40 ms tones wherever they fall, and ignores tones of 20 ms and less', () => {
    for (const offsetMs of [0, 2.5, 5, 7.5]) {
      for (const { key, low, high } of ALL) {
        expect(detect(rate, framed(rate, { low, high, ms: 40 }, offsetMs)), `${key} 40 ms at +${offsetMs}`).toBe(key);
        for (const ms of [10, 20]) expect(detect(rate, framed(rate, { low, high, ms }, offsetMs)), `${key} ${ms} ms at +${offsetMs}`).toBe('');
      }
    }
  });

  it('reports a long press once, bridges a 10 ms dropout, and splits presses 50 ms apart', () => {
    const tone = (ms: number): Int16Array => dualTone(rate, { low: 770, high: 1336, ms });
    expect(detect(rate, concat(tone(2000), silence(rate, 50)))).toBe('5');
    expect(detect(rate, concat(tone(100), silence(rate, 10), tone(100), silence(rate, 50)))).toBe('5');
    expect(detect(rate, concat(tone(100), silence(rate, 50), tone(100), silence(rate, 50)))).toBe('55');
  });

  it('gives the same keys however the audio is cut into chunks', () => {
    const signal = concat(
      ...'159#'.split('').map((key) => {
        const { low, high } = ALL.find((k) => k.key === key)!;
        return concat(dualTone(rate, { low, high, ms: 60 }), silence(rate, 55));
      }),
    );
    const random = noiseSource(3);
    const detector = new GoertzelDtmfDetector({ sampleRate: rate });
    let keys = '';
    for (let i = 0; i < signal.length;) {
      const size = 1 + Math.floor(((random() + 1) / 2) * 500);
      keys += detector.process(signal.subarray(i, i + size)).join('');
      i += size;
    }
    expect(keys).toBe('159#');
    expect(detect(rate, signal)).toBe('159#');
  });

  it('never triggers on voice-like harmonic series, across fundamentals from 80 to 400 Hz', () => {
    for (let f0 = 80; f0 <= 400; f0 += 2.5) {
      const n = rate / 2;
      // A buzz whose harmonics fall off 6 dB per octave, with a slow vibrato like a voice.
      const pcm = Int16Array.from({ length: n }, (_, i) => {
        const t = i / rate;
        let v = 0;
        for (let h = 1; h * f0 * 1.02 < rate / 2; h++) v += (6000 / h) * Math.sin(2 * Math.PI * h * f0 * (t + 0.002 * Math.sin(2 * Math.PI * 5 * t)) + h);
        return Math.max(-32768, Math.min(32767, Math.round(v)));
      });
      expect(detect(rate, pcm), `f0 ${f0}`).toBe('');
    }
    // The brief's case: the harmonics of 150 Hz, equal in level.
    const flat = Int16Array.from({ length: rate }, (_, i) => {
      let v = 0;
      for (let h = 1; h * 150 < rate / 2; h++) v += 1500 * Math.sin((2 * Math.PI * h * 150 * i) / rate + h * h);
      return Math.max(-32768, Math.min(32767, Math.round(v)));
    });
    expect(detect(rate, flat)).toBe('');
  });

  it('never triggers on white noise, silence, or a single DTMF frequency', () => {
    const random = noiseSource(11);
    for (const level of [300, 3000, 20000])
      expect(
        detect(
          rate,
          Int16Array.from({ length: rate * 3 }, () => Math.round(level * random())),
        ),
      ).toBe('');
    expect(detect(rate, silence(rate, 1000))).toBe('');
    for (const f of [...ROWS, ...COLUMNS]) {
      expect(
        detect(
          rate,
          Int16Array.from({ length: rate / 2 }, (_, i) => Math.round(10000 * Math.sin((2 * Math.PI * f * i) / rate))),
        ),
        `${f} Hz`,
      ).toBe('');
    }
  });

  it('rejects a dual tone among other loud tones (music, not a keypad)', () => {
    const chord = concat(dualTone(rate, { low: 770, high: 1336, ms: 200, amplitude: 4000 }), silence(rate, 60));
    const extra = Int16Array.from({ length: chord.length }, (_, i) =>
      Math.round(4000 * Math.sin((2 * Math.PI * 1050 * i) / rate) + 4000 * Math.sin((2 * Math.PI * 440 * i) / rate)),
    );
    expect(
      detect(
        rate,
        chord.map((s, i) => Math.max(-32768, Math.min(32767, s + extra[i]!))),
      ),
    ).toBe('');
  });

  it('starts afresh on reset', () => {
    const detector = new GoertzelDtmfDetector({ sampleRate: rate });
    const tone = dualTone(rate, { low: 941, high: 1209, ms: 100 });
    expect(detector.process(tone)).toEqual(['*']);
    detector.reset();
    expect(detector.process(tone)).toEqual(['*']);
  });
});

describe('GoertzelDtmfDetector on G.711 audio', () => {
  it('recognises every key after µ-law and A-law coding', () => {
    for (const { key, low, high } of ALL) {
      const pcm = framed(8000, { low, high, ms: 60, amplitude: 5000 });
      expect(detect(8000, decodeMulaw(encodeMulaw(pcm))), `${key} µ-law`).toBe(key);
      expect(detect(8000, decodeAlaw(encodeAlaw(pcm))), `${key} A-law`).toBe(key);
    }
  });
});
