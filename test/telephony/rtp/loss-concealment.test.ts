/** Concealment of lost G.711 frames: the last frame repeated and faded, then silence, then a soft restart. */
import { describe, expect, it } from 'vitest';
import { LossConcealer } from '../../../src/telephony/rtp/loss-concealment.js';

const peak = (pcm: Int16Array): number => pcm.reduce((max, s) => Math.max(max, Math.abs(s)), 0);
const tone = (length: number, amplitude = 10000): Int16Array =>
  Int16Array.from({ length }, (_, i) => Math.round(amplitude * Math.sin((2 * Math.PI * 400 * i) / 8000)));

describe('LossConcealer', () => {
  it('passes good frames through untouched', () => {
    const concealer = new LossConcealer({ sampleRate: 8000, frameSamples: 160 });
    const frame = tone(160);
    expect(concealer.process(frame)).toBe(frame);
    expect(concealer.process(frame)).toBe(frame);
  });

  it('repeats the last frame at a falling level and is silent from 60 ms on', () => {
    const concealer = new LossConcealer({ sampleRate: 8000, frameSamples: 160 });
    const frame = Int16Array.from({ length: 160 }, () => 12000);
    concealer.process(frame);
    const concealed = [concealer.conceal(), concealer.conceal(), concealer.conceal(), concealer.conceal()];
    // A linear fade over 480 samples: 1 → 2/3 in the first frame, 2/3 → 1/3, 1/3 → 0, then nothing.
    expect(concealed[0]![0]).toBe(12000);
    expect(concealed[0]![159]).toBe(Math.round(12000 * (1 - 159 / 480)));
    expect(concealed[1]![0]).toBe(8000);
    expect(concealed[2]![0]).toBe(4000);
    expect(concealed[2]![159]).toBe(Math.round(12000 * (1 / 480)));
    expect(peak(concealed[3]!)).toBe(0);
    for (const out of concealed) expect(out.length).toBe(160);
    // The fade never rises, sample by sample across frames.
    const all = concealed.flatMap((out) => [...out]);
    for (let i = 1; i < all.length; i++) expect(all[i]!).toBeLessThanOrEqual(all[i - 1]!);
    // The original is not touched.
    expect(peak(frame)).toBe(12000);
  });

  it('fades in the first good frame after a loss, from the level the concealment had reached', () => {
    const concealer = new LossConcealer({ sampleRate: 8000, frameSamples: 160 });
    const frame = Int16Array.from({ length: 160 }, () => 9000);
    concealer.process(frame);
    concealer.conceal();
    const resumed = concealer.process(frame);
    expect(resumed).not.toBe(frame);
    expect(resumed[0]).toBe(Math.round(9000 * (1 - 160 / 480)));
    expect(resumed[159]).toBeGreaterThan(8900);
    // One good frame later all is back to normal.
    expect(concealer.process(frame)).toBe(frame);
  });

  it('fades in from silence after a long gap', () => {
    const concealer = new LossConcealer({ sampleRate: 8000, frameSamples: 160 });
    concealer.process(tone(160));
    for (let i = 0; i < 10; i++) expect(peak(concealer.conceal())).toBeLessThanOrEqual(10000);
    const resumed = concealer.process(Int16Array.from({ length: 160 }, () => 10000));
    expect(resumed[0]).toBe(0);
    expect(resumed[80]).toBe(5000);
  });

  it('gives silence of one frame before any audio was seen, and after reset', () => {
    const concealer = new LossConcealer({ sampleRate: 16000, frameSamples: 320 });
    expect(concealer.conceal()).toEqual(new Int16Array(320));
    concealer.process(tone(320));
    concealer.reset();
    expect(concealer.conceal()).toEqual(new Int16Array(320));
  });

  it('follows the sample rate and the frame length it is given', () => {
    const concealer = new LossConcealer({ sampleRate: 48000, frameSamples: 960, fadeMs: 40 });
    concealer.process(Int16Array.from({ length: 960 }, () => 1000));
    expect(peak(concealer.conceal())).toBe(1000);
    expect(peak(concealer.conceal())).toBe(500);
    expect(peak(concealer.conceal())).toBe(0);
  });
});
