/** Payloads in the other call's codec: passed as they are, mapped byte by byte between the G.711 laws, through libopus at 8 kHz. */
import opus from '@discordjs/opus';
import { describe, expect, it } from 'vitest';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from '../../../src/audio/g711.js';
import { EventRescaler, payloadConverter } from '../../../src/telephony/media/payload-converter.js';
import type { MediaCodec } from '../../../src/telephony/sdp/media-codec.js';
import { tonePcm } from '../../helpers/audio-fixtures.js';

const PCMU: MediaCodec = { name: 'PCMU', payloadType: 0, clockRate: 8000, channels: 1 };
const PCMA: MediaCodec = { name: 'PCMA', payloadType: 8, clockRate: 8000, channels: 1 };
const OPUS: MediaCodec = { name: 'opus', payloadType: 111, clockRate: 48000, channels: 2 };
const EVERY_BYTE = Uint8Array.from({ length: 256 }, (_, byte) => byte);

describe('payloadConverter', () => {
  it('passes a payload of the same codec as it is, whatever its payload type', () => {
    const payload = new Uint8Array(160).fill(7);
    expect(payloadConverter(PCMU, { ...PCMU, payloadType: 96 }).convert(payload)).toBe(payload);
    expect(payloadConverter(OPUS, { ...OPUS, payloadType: 96 }).convert(payload)).toBe(payload);
  });

  it('maps every µ-law byte to the A-law byte of its sample and back, into one reused buffer', () => {
    const toAlaw = payloadConverter(PCMU, PCMA);
    const alaw = toAlaw.convert(EVERY_BYTE)!;
    expect(Array.from(alaw)).toEqual(Array.from(encodeAlaw(decodeMulaw(EVERY_BYTE))));
    expect(toAlaw.convert(EVERY_BYTE)).toBe(alaw);
    expect(Array.from(payloadConverter(PCMA, PCMU).convert(EVERY_BYTE)!)).toEqual(Array.from(encodeMulaw(decodeAlaw(EVERY_BYTE))));
  });

  it('turns 20 ms of G.711 into one Opus packet that decodes to 20 ms, and an Opus packet into 160 bytes of G.711', () => {
    const frame = encodeMulaw(tonePcm(0.02, 8000, 300));
    const packet = payloadConverter(PCMU, OPUS).convert(frame)!;
    const decoded = new opus.OpusEncoder(48000, 1).decode(Buffer.from(packet));
    expect(decoded.byteLength / 2).toBe(960);
    const wide = tonePcm(0.02, 48000, 300);
    const opusPacket = new opus.OpusEncoder(48000, 1).encode(Buffer.from(wide.buffer, wide.byteOffset, wide.byteLength));
    expect(payloadConverter(OPUS, PCMA).convert(opusPacket)!.length).toBe(160);
    expect(payloadConverter(OPUS, PCMU).convert(Uint8Array.of(0xff, 0xff, 0xff))).toBeNull();
  });
});

describe('EventRescaler', () => {
  it('scales the duration of every event block, and passes payloads between equal clocks as they are', () => {
    const payload = Uint8Array.of(1, 0, 0, 160, 2, 0x80, 0x01, 0x00);
    expect(Array.from(new EventRescaler(6).convert(payload))).toEqual([1, 0, 0x03, 0xc0, 2, 0x80, 0x06, 0x00]);
    expect(Array.from(new EventRescaler(1 / 6).convert(Uint8Array.of(1, 0, 0x03, 0xc0)))).toEqual([1, 0, 0, 160]);
    expect(new EventRescaler(1).convert(payload)).toBe(payload);
  });
});
