/** Our speech cut into 20 ms frames and encoded as runs: the same bytes as frame by frame, partial frames kept, Opus decodable. */
import opus from '@discordjs/opus';
import { describe, expect, it } from 'vitest';
import { decodeMulaw, encodeAlaw, encodeMulaw } from '../../../src/audio/g711.js';
import { FrameEncoder } from '../../../src/telephony/media/frame-encoder.js';
import type { FrameRun } from '../../../src/telephony/rtp/paced-stream.js';

const PCMU = { name: 'PCMU', payloadType: 0, clockRate: 8000, channels: 1 } as const;
const PCMA = { name: 'PCMA', payloadType: 8, clockRate: 8000, channels: 1 } as const;
const OPUS = { name: 'opus', payloadType: 111, clockRate: 48000, channels: 2 } as const;

/** A 440 Hz tone at `rate`, `samples` long. */
function tone(rate: number, samples: number, from = 0): Int16Array {
  return Int16Array.from({ length: samples }, (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * 440 * (from + i)) / rate)));
}

function framesOf(run: FrameRun | null): Uint8Array[] {
  if (!run) return [];
  return Array.from(run.ends, (end, n) => run.data.subarray(n === 0 ? 0 : run.ends[n - 1]!, end));
}

describe('FrameEncoder', () => {
  it('encodes G.711 in whole 20 ms frames, byte for byte as frame by frame, keeping the partial frame for later', () => {
    for (const [codec, encode] of [
      [PCMU, encodeMulaw],
      [PCMA, encodeAlaw],
    ] as const) {
      const encoder = new FrameEncoder(codec);
      const audio = tone(8000, 1000);
      const first = framesOf(encoder.encode(audio.subarray(0, 250)));
      const second = framesOf(encoder.encode(audio.subarray(250)));
      const last = framesOf(encoder.flush());
      expect(first.length, codec.name).toBe(1);
      expect(second.length, codec.name).toBe(5);
      expect(last.length, codec.name).toBe(1);
      const frames = [...first, ...second];
      frames.forEach((frame, n) => expect(frame, `${codec.name} frame ${n}`).toEqual(encode(audio.subarray(n * 160, (n + 1) * 160))));
      // The last 40 samples, padded with silence to a whole frame.
      const padded = new Int16Array(160);
      padded.set(audio.subarray(960));
      expect(last[0]).toEqual(encode(padded));
      expect(encoder.flush()).toBeNull();
    }
  });

  it('gives nothing until a frame is whole, and forgets the partial frame on reset', () => {
    const encoder = new FrameEncoder(PCMU);
    expect(encoder.encode(tone(8000, 100))).toBeNull();
    encoder.reset();
    expect(encoder.flush()).toBeNull();
    const run = encoder.encode(tone(8000, 160));
    expect(framesOf(run).map((frame) => decodeMulaw(frame).length)).toEqual([160]);
  });

  it('encodes Opus frame by frame into one run that a decoder plays back as 20 ms each', () => {
    const encoder = new FrameEncoder(OPUS);
    const frames = framesOf(encoder.encode(tone(48000, 960 * 5)));
    expect(frames.length).toBe(5);
    const decoder = new opus.OpusEncoder(48000, 1);
    for (const frame of frames) {
      expect(frame.length).toBeGreaterThan(0);
      expect(decoder.decode(Buffer.from(frame)).length).toBe(960 * 2);
    }
  });
});
