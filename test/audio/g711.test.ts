/**
 * The table-driven G.711 codec gives exactly what alawmulaw's array functions give (the ones
 * the service used before), for every value.
 */
import alawmulaw from 'alawmulaw';
import { describe, expect, it } from 'vitest';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from '../../src/audio/g711.js';

const { alaw, mulaw } = alawmulaw;

describe('G.711', () => {
  it('encodes every 16-bit sample exactly as alawmulaw does, in both laws', () => {
    // Samples one at a time, so a table indexed one off would show.
    for (let sample = -32768; sample <= 32767; sample += 1) {
      const one = Int16Array.of(sample);
      expect(encodeMulaw(one)[0]).toBe(mulaw.encode(one)[0]);
      expect(encodeAlaw(one)[0]).toBe(alaw.encode(one)[0]);
    }
  });

  it('decodes every byte exactly as alawmulaw does, and keeps frames whole', () => {
    for (let byte = 0; byte < 256; byte += 1) {
      expect(decodeMulaw(Uint8Array.of(byte))[0]).toBe(mulaw.decode(Uint8Array.of(byte))[0]);
      expect(decodeAlaw(Uint8Array.of(byte))[0]).toBe(alaw.decode(Uint8Array.of(byte))[0]);
    }
    const frame = Int16Array.from({ length: 160 }, (_, i) => Math.round(8000 * Math.sin(i / 5)));
    expect(decodeMulaw(encodeMulaw(frame))).toEqual(mulaw.decode(mulaw.encode(frame)));
    expect(decodeAlaw(encodeAlaw(frame))).toEqual(alaw.decode(alaw.encode(frame)));
  });
});
