/** The reused packet buffer: the same bytes as a fresh packet, one buffer while the socket keeps up, a new one when it queues. */
import { describe, expect, it } from 'vitest';
import { PacketBuffer } from '../../../src/telephony/media/packet-buffer.js';
import { parseRtp, serializeRtp } from '../../../src/telephony/rtp/rtp-packet.js';

const fields = { payloadType: 8, sequenceNumber: 65535, timestamp: 2 ** 32 - 1, ssrc: 0xdeadbeef, marker: true, payload: new Uint8Array(160).fill(0x55) };

/** A socket whose send queue holds `queued` datagrams. */
const socket = (queued: number): { getSendQueueCount(): number } => ({ getSendQueueCount: () => queued });

describe('PacketBuffer', () => {
  it('writes the bytes serializeRtp makes', () => {
    const buffer = new PacketBuffer();
    const { payloadType, sequenceNumber, timestamp, ssrc, marker, payload } = fields;
    const written = buffer.write(payloadType, sequenceNumber, timestamp, ssrc, marker, payload);
    expect(Buffer.from(written)).toEqual(Buffer.from(serializeRtp(fields)));
    expect(parseRtp(written)).toEqual({ ...fields, payload: expect.any(Uint8Array) });
  });

  it('gives the same bytes back for packets of one length while the socket sends at once, and new ones once it queues', () => {
    const buffer = new PacketBuffer();
    const first = buffer.write(0, 1, 160, 7, false, new Uint8Array(160));
    buffer.sent(socket(0));
    const second = buffer.write(0, 2, 320, 7, false, new Uint8Array(160));
    expect(second).toBe(first);
    expect(second[3]).toBe(2);
    buffer.sent(socket(1));
    const third = buffer.write(0, 3, 480, 7, false, new Uint8Array(160));
    expect(third.buffer).not.toBe(first.buffer);
    // The queued packet's bytes were left alone.
    expect(first[3]).toBe(2);
  });

  it('takes a payload of any length, growing for one larger than a datagram usually is', () => {
    const buffer = new PacketBuffer();
    expect(buffer.write(111, 1, 960, 7, false, new Uint8Array(61)).length).toBe(73);
    const large = buffer.write(111, 2, 1920, 7, false, new Uint8Array(4000).fill(9));
    expect(large.length).toBe(4012);
    expect(large[4011]).toBe(9);
  });
});
