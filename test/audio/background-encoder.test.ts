import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BackgroundEncoder, type EncodedAudio } from '../../src/audio/background-encoder.js';
import { loadMp3Encoder } from '../../src/audio/mp3-encoder.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { RateMatcher } from '../../src/audio/rate-matcher.js';
import { loadResampler } from '../../src/audio/resampler.js';
import { createStreamEncoder } from '../../src/audio/stream-encoder.js';
import type { FormatId } from '../../src/catalog/formats.js';

/** A voiced signal at `rateHz`, in engine-sized chunks (100 ms). */
function speechLike(seconds: number, rateHz: number, phase = 0): Int16Array[] {
  const chunks: Int16Array[] = [];
  const chunk = rateHz / 10;
  for (let c = 0; c < seconds * 10; c++) {
    const pcm = new Int16Array(chunk);
    for (let i = 0; i < chunk; i++) {
      const t = (phase + c * chunk + i) / rateHz;
      pcm[i] = Math.round(7000 * Math.sin(2 * Math.PI * 170 * t) + 2500 * Math.sin(2 * Math.PI * 1400 * t) * Math.sin(2 * Math.PI * 3 * t));
    }
    chunks.push(pcm);
  }
  return chunks;
}

/** What the event loop's own encoder makes of the same chunks (the synthesis session's path). */
async function inThread(
  format: FormatId,
  rateHz: number,
  serial: number,
  runs: Array<{ chunks: Int16Array[]; rateHz: number }>,
): Promise<{ bytes: Buffer; samples: number }> {
  const encoder = await createStreamEncoder(format, rateHz, serial);
  const rate = new RateMatcher(rateHz);
  const parts: Buffer[] = [];
  let samples = 0;
  const write = (pcm: Int16Array): void => {
    samples += pcm.length;
    if (pcm.length > 0) parts.push(...encoder.write(pcm));
  };
  for (const run of runs) for (const chunk of run.chunks) write(rate.push(chunk, run.rateHz));
  const tail = rate.finish();
  if (tail) write(tail);
  parts.push(...encoder.end());
  return { bytes: Buffer.concat(parts), samples };
}

/** The chunks as one run (there are always several). */
const joined = (chunks: Int16Array[]): Int16Array => concatPcm(chunks);

describe('the background encoder (a worker thread)', () => {
  const encoder = new BackgroundEncoder();
  beforeAll(async () => {
    await Promise.all([loadMp3Encoder(), loadResampler()]);
  });
  afterAll(() => encoder.close());

  it.each<[FormatId, number]>([
    ['mp3', 24_000],
    ['opus', 48_000],
    ['wav', 16_000],
    ['pcm16', 22_050],
    ['mulaw', 8000],
  ])('gives %s at %i Hz byte for byte what the event loop would', async (format, rateHz) => {
    // Two runs at different rates, as when a text's passages come from two models.
    const first = speechLike(3, 22_050);
    const second = speechLike(2, 16_000, 999);
    const expected = await inThread(format, rateHz, 77, [
      { chunks: first, rateHz: 22_050 },
      { chunks: second, rateHz: 16_000 },
    ]);
    // Written in two parts, the second with both rates, as sentences come.
    const stream = await encoder.open(format, rateHz, 77);
    stream.write([{ pcm: joined(first.slice(0, 12)), rateHz: 22_050 }]);
    stream.write([
      { pcm: joined(first.slice(12)), rateHz: 22_050 },
      { pcm: joined(second), rateHz: 16_000 },
    ]);
    const encoded = await stream.finish();
    expect(encoded.samples).toBe(expected.samples);
    expect(encoded.samples / rateHz).toBeCloseTo(5, 1);
    expect(encoded.audio.equals(expected.bytes)).toBe(true);
  });

  /** Encodes `seconds` of 8 kHz audio in one write. */
  const once = async (format: FormatId, seconds: number, rateHz = 8000): Promise<EncodedAudio> => {
    const stream = await encoder.open(format, 8000, 1);
    stream.write([{ pcm: joined(speechLike(seconds, 8000)), rateHz }]);
    return stream.finish();
  };

  it('keeps streams that run at the same time apart', async () => {
    const [a, b] = await Promise.all([once('wav', 1), once('wav', 2)]);
    expect([a.samples, b.samples]).toEqual([8000, 16_000]);
    expect([a.audio.length, b.audio.length]).toEqual([44 + 16_000, 44 + 32_000]);
  });

  it('reports a failed encoding and goes on with the next', async () => {
    // The resampler refuses a rate of 0 Hz.
    await expect(once('mp3', 1, 0)).rejects.toThrow(/resampler could not start/);
    expect((await once('pcm16', 1)).samples).toBe(8000);
  });

  it('drops an abandoned stream and goes on with the next', async () => {
    const stream = await encoder.open('mp3', 8000, 1);
    stream.write([{ pcm: joined(speechLike(1, 8000)), rateHz: 8000 }]);
    stream.abandon();
    expect((await once('mp3', 1)).samples).toBe(8000);
  });

  it('fails the streams under way when closed, and starts a new thread afterwards', async () => {
    const stream = await encoder.open('pcm16', 8000, 1);
    await encoder.close();
    await expect(stream.finish()).rejects.toThrow(/stopped/);
    expect((await once('pcm16', 1)).audio.length).toBe(16_000);
  });
});
