/**
 * One direction of a bridge on its own, with stand-ins for the two calls: how packets are
 * re-stamped onto the other call's stream (the clock at a gap, the source's steps after it,
 * scaled between 8 and 48 kHz), which are dropped (late, repeated, held, events the other side
 * does not take), and how events and audio change payload type.
 */
import { describe, expect, it } from 'vitest';
import type { CallMedia } from '../../../src/telephony/media/media-protocol.js';
import { RtpForwarder, type BridgeLeg } from '../../../src/telephony/media/rtp-forwarder.js';
import type { RtpPacket } from '../../../src/telephony/rtp/rtp-packet.js';
import type { MediaCodec } from '../../../src/telephony/sdp/media-codec.js';

const PCMU: MediaCodec = { name: 'PCMU', payloadType: 0, clockRate: 8000, channels: 1 };
const OPUS: MediaCodec = { name: 'opus', payloadType: 111, clockRate: 48000, channels: 2 };

interface Sent {
  readonly payload: Uint8Array;
  readonly payloadType: number;
  readonly timestamp: number;
  readonly marker: boolean;
}

/** A call as the forwarder sees it; `streamTimestamp` stands for its pacer's clock. */
function fakeLeg(codec: MediaCodec, changes: Partial<CallMedia> = {}): BridgeLeg & { media: CallMedia; streamTimestamp: number; sent: Sent[] } {
  const sent: Sent[] = [];
  return {
    media: {
      codec,
      telephoneEvent: codec.clockRate === 8000 ? 101 : 102,
      address: '192.0.2.1',
      port: 4000,
      rtcp: { address: '192.0.2.1', port: 4001 },
      rtcpMux: false,
      direction: 'sendrecv',
      signallingAddress: '192.0.2.1',
      ...changes,
    },
    streamTimestamp: 90_000,
    sent,
    transmit: (payload, payloadType, timestamp, marker) => sent.push({ payload: Uint8Array.from(payload), payloadType, timestamp, marker }),
  };
}

const packet = (sequenceNumber: number, timestamp: number, changes: Partial<RtpPacket> = {}): RtpPacket => ({
  payloadType: 0,
  sequenceNumber,
  timestamp,
  ssrc: 1234,
  marker: false,
  payload: new Uint8Array(160).fill(sequenceNumber & 0xff),
  ...changes,
});

describe('RtpForwarder', () => {
  it('starts on the other call’s clock with the marker bit, then steps as the source does, pauses included', () => {
    const a = fakeLeg(PCMU);
    const b = fakeLeg(PCMU);
    const forwarder = new RtpForwarder(a, b);
    forwarder.forward(packet(10, 1000));
    forwarder.forward(packet(11, 1160));
    forwarder.forward(packet(12, 1320, { marker: true }));
    // The source paused 100 ms (silence suppression): the pause stays.
    forwarder.forward(packet(13, 2120, { marker: true }));
    expect(b.sent.map((sent) => [sent.timestamp, sent.marker])).toEqual([
      [90_000, true],
      [90_160, false],
      [90_320, true],
      [91_120, true],
    ]);
    expect(b.sent[1]!.payload[0]).toBe(11);
    expect(forwarder.counters).toEqual({ forwarded: 4, dropped: 0 });
  });

  it('drops late and repeated packets instead of sending them out of order, and follows a source that starts over', () => {
    const a = fakeLeg(PCMU);
    const b = fakeLeg(PCMU);
    const forwarder = new RtpForwarder(a, b);
    forwarder.forward(packet(65535, 1000));
    forwarder.forward(packet(1, 1320)); // 0 lost across the wrap: a timestamp gap, no sequence gap of ours
    forwarder.forward(packet(0, 1160)); // late
    forwarder.forward(packet(1, 1320)); // repeated
    expect(b.sent.map((sent) => sent.timestamp)).toEqual([90_000, 90_320]);
    b.streamTimestamp = 95_000;
    forwarder.forward(packet(30_000, 7)); // numbering far off: a new start on the clock
    forwarder.forward(packet(2, 1480, { ssrc: 99 })); // another source: likewise
    b.streamTimestamp = 96_000;
    forwarder.forward(packet(3, 1640, { ssrc: 99 }));
    expect(b.sent.slice(2).map((sent) => [sent.timestamp, sent.marker])).toEqual([
      [95_000, true],
      [95_000, true],
      [95_160, false],
    ]);
    expect(forwarder.counters.dropped).toBe(2);
  });

  it('sends nothing to a held call and nothing from a call that must not send, and starts afresh after', () => {
    const a = fakeLeg(PCMU);
    const b = fakeLeg(PCMU, { direction: 'recvonly' });
    const forwarder = new RtpForwarder(a, b);
    forwarder.forward(packet(1, 160));
    b.media = { ...b.media, direction: 'sendrecv' };
    a.media = { ...a.media, direction: 'sendonly' };
    forwarder.forward(packet(2, 320));
    expect(b.sent).toEqual([]);
    a.media = { ...a.media, direction: 'recvonly' };
    forwarder.forward(packet(3, 480));
    forwarder.forward(packet(4, 640));
    expect(b.sent.map((sent) => [sent.timestamp, sent.marker])).toEqual([
      [90_000, true],
      [90_160, false],
    ]);
  });

  it('scales timestamps and event durations between G.711’s 8 kHz and Opus’s 48 kHz clock', () => {
    const a = fakeLeg(PCMU);
    const b = fakeLeg(OPUS);
    const forwarder = new RtpForwarder(a, b);
    const event = (duration: number, end: boolean): Uint8Array => Uint8Array.of(5, (end ? 0x80 : 0) | 10, duration >> 8, duration & 0xff);
    forwarder.forward(packet(1, 160, { payloadType: 101, payload: event(160, false), marker: true }));
    forwarder.forward(packet(2, 160, { payloadType: 101, payload: event(320, false) }));
    forwarder.forward(packet(3, 160, { payloadType: 101, payload: event(20_000, true) }));
    forwarder.forward(packet(4, 960, { payload: new Uint8Array(160) }));
    expect(b.sent.map((sent) => [sent.payloadType, sent.timestamp])).toEqual([
      [102, 90_000],
      [102, 90_000],
      [102, 90_000],
      [111, 94_800],
    ]);
    expect(Array.from(b.sent[1]!.payload)).toEqual([5, 10, (1920 >> 8) & 0xff, 1920 & 0xff]);
    // Beyond 16 bits the duration stops at its largest value.
    expect(Array.from(b.sent[2]!.payload)).toEqual([5, 0x80 | 10, 0xff, 0xff]);
  });

  it('drops events for a call that did not negotiate telephone-event, and audio that cannot be converted', () => {
    const a = fakeLeg(PCMU);
    const b = fakeLeg(PCMU, { telephoneEvent: null });
    const forwarder = new RtpForwarder(a, b);
    forwarder.forward(packet(1, 160, { payloadType: 101, payload: Uint8Array.of(1, 0, 0, 160) }));
    expect(b.sent).toEqual([]);
    const opus = fakeLeg(OPUS);
    const toOpus = new RtpForwarder(a, opus);
    // 30 ms of G.711: Opus has no frame of that length.
    toOpus.forward(packet(1, 240, { payload: new Uint8Array(240) }));
    expect(opus.sent).toEqual([]);
    expect(toOpus.counters.dropped).toBe(1);
  });
});
