/**
 * RTCP reports: ours read back by rtp.js, the peer's (built with rtp.js or by hand) read by us,
 * with loss fractions per interval, LSR/DLSR and the round trip, and garbage that must not throw.
 */
import { CompoundPacket, ReceiverReportPacket, ReceptionReport, SdesPacket, SenderReportPacket, type RtcpPacket } from 'rtp.js/packets';
import { describe, expect, it } from 'vitest';
import { JitterBuffer } from '../../../src/telephony/rtp/jitter-buffer.js';
import { RtcpSession } from '../../../src/telephony/rtp/rtcp.js';
import { isRtcp } from '../../../src/telephony/rtp/rtp-packet.js';
import type { ReceptionStats } from '../../../src/telephony/rtp/sequence-tracker.js';

const US = 0x11111111;
const PEER = 0x22222222;
const NTP_OFFSET_S = 2_208_988_800;
/** 2024-06-01T12:00:00.250Z */
const NOW = Date.UTC(2024, 5, 1, 12, 0, 0, 250);

function parse(bytes: Uint8Array): RtcpPacket[] {
  return new CompoundPacket(new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)).getPackets();
}

function bytesOf(packet: { getView(): DataView }): Uint8Array {
  const view = packet.getView();
  return new Uint8Array(view.buffer, view.byteOffset, view.byteLength).slice();
}

const session = (): RtcpSession => new RtcpSession({ ssrc: US, cname: 'sprachrohr@test', clockRate: 8000 });

const reception = (fields: Partial<ReceptionStats> = {}): ReceptionStats => ({
  ssrc: PEER,
  extendedHighestSeq: 70000,
  expected: 1000,
  received: 900,
  cumulativeLost: 100,
  jitter: 123.7,
  ...fields,
});

/** The peer's receiver report about our stream, built with rtp.js. */
function peerReceiverReport(block: {
  fractionLost?: number;
  totalLost?: number;
  highestSeq?: number;
  jitter?: number;
  lsr?: number;
  dlsr?: number;
}): Uint8Array {
  const report = new ReceptionReport();
  report.setSsrc(US);
  report.setFractionLost(block.fractionLost ?? 0);
  report.setTotalLost(block.totalLost ?? 0);
  report.setHighestSeqNumber(block.highestSeq ?? 0);
  report.setJitter(block.jitter ?? 0);
  report.setLastSRTimestamp(block.lsr ?? 0);
  report.setDelaySinceLastSR(block.dlsr ?? 0);
  const rr = new ReceiverReportPacket();
  rr.setSsrc(PEER);
  rr.addReport(report);
  return bytesOf(rr);
}

describe('RtcpSession reports', () => {
  it('builds a sender report rtp.js reads back, with the NTP time of now and our CNAME', () => {
    const bytes = session().senderReport({ rtpTimestamp: 2 ** 32 - 1, packetCount: 500, octetCount: 80000 }, null, NOW);
    expect(isRtcp(bytes)).toBe(true);
    const [sr, sdes] = parse(bytes) as [SenderReportPacket, SdesPacket];
    expect(sr.dump()).toMatchObject({ packetType: 200, ssrc: US, rtpTimestamp: 2 ** 32 - 1, packetCount: 500, octetCount: 80000, reports: [] });
    expect(sr.getNtpSeconds()).toBe(Math.floor(NOW / 1000) + NTP_OFFSET_S);
    expect(sr.getNtpFraction()).toBe(2 ** 30); // 0.25 s
    expect(sdes.getChunks()[0]!.dump()).toMatchObject({ ssrc: US, items: [{ type: 1, text: 'sprachrohr@test' }] });
  });

  it('adds a reception block for the peer from the jitter buffer statistics', () => {
    const buffer = new JitterBuffer({ payloadType: 0 });
    for (let seq = 0; seq < 100; seq++)
      if (seq % 10 !== 3)
        buffer.push(
          { payloadType: 0, sequenceNumber: (65500 + seq) & 0xffff, timestamp: seq * 160, ssrc: PEER, marker: false, payload: new Uint8Array(160) },
          seq * 20 + (seq % 2) * 4,
        );
    const bytes = session().receiverReport(buffer.reception(), NOW);
    const [rr] = parse(bytes) as [ReceiverReportPacket];
    const block = rr.getReports()[0]!.dump();
    // 10 of 100 lost: 25/256; highest 65599 = one wrap + 63.
    expect(block).toMatchObject({ ssrc: PEER, fractionLost: 25, highestSeq: 65536 + 63, lsr: 0, dlsr: 0 });
    expect(block.jitter).toBeGreaterThan(0);
    expect(block.jitter).toBe(Math.floor(buffer.reception()!.jitter));
    expect(buffer.stats().lost).toBe(10);
  });

  it('gives the loss fraction of each interval and the cumulative count across them', () => {
    const rtcp = session();
    const fraction = (stats: ReceptionStats): number => (parse(rtcp.receiverReport(stats, NOW))[0] as ReceiverReportPacket).getReports()[0]!.getFractionLost();
    expect(fraction(reception({ expected: 100, received: 50, cumulativeLost: 50 }))).toBe(128);
    expect(fraction(reception({ expected: 200, received: 150, cumulativeLost: 50 }))).toBe(0);
    expect(fraction(reception({ expected: 300, received: 225, cumulativeLost: 75 }))).toBe(64);
    // Duplicates or late arrivals outnumbering the losses of an interval: zero, not negative.
    expect(fraction(reception({ expected: 310, received: 240, cumulativeLost: 70 }))).toBe(0);
    // A new source starts its own intervals.
    expect(fraction(reception({ ssrc: 5, expected: 10, received: 9, cumulativeLost: 1 }))).toBe(25);
  });

  it('writes a cumulative loss above 4095 in full (the 24-bit field)', () => {
    const bytes = session().receiverReport(reception({ cumulativeLost: 5000 }), NOW);
    expect(bytes.slice(8 + 5, 8 + 8)).toEqual(Uint8Array.of(0x00, 0x13, 0x88));
    // The peer reads it back in full (rtp.js's own reader would say 904).
    const peer = new RtcpSession({ ssrc: PEER, cname: 'peer', clockRate: 8000 });
    expect(peer.receive(bytes, NOW)).toMatchObject({ ssrc: US, ourStream: { cumulativeLost: 5000 } });
  });

  it('sends a receiver report with no block before anything arrived', () => {
    const [rr, sdes] = parse(session().receiverReport(null, NOW));
    expect((rr as ReceiverReportPacket).getReports()).toEqual([]);
    expect(sdes).toBeInstanceOf(SdesPacket);
  });

  it("echoes the middle bits of the peer's last sender report and the delay since it (LSR, DLSR)", () => {
    const rtcp = session();
    const peerSr = new SenderReportPacket();
    peerSr.setSsrc(PEER);
    peerSr.setNtpSeconds(0xabcd1234);
    peerSr.setNtpFraction(0x56789abc);
    peerSr.setRtpTimestamp(42);
    peerSr.setPacketCount(7);
    peerSr.setOctetCount(1120);
    const report = rtcp.receive(bytesOf(peerSr), NOW);
    expect(report).toMatchObject({ ssrc: PEER, bye: false, sender: { rtpTimestamp: 42, packetCount: 7, octetCount: 1120 } });
    expect(report!.sender!.ntpMs).toBeCloseTo((0xabcd1234 - NTP_OFFSET_S) * 1000 + (0x56789abc / 2 ** 32) * 1000, 3);
    const [sr] = parse(rtcp.senderReport({ rtpTimestamp: 0, packetCount: 1, octetCount: 160 }, reception(), NOW + 1500)) as [SenderReportPacket];
    const block = sr.getReports()[0]!;
    expect(block.getLastSRTimestamp()).toBe(0x1234_5678);
    expect(block.getDelaySinceLastSR()).toBe(1.5 * 65536);
  });
});

describe('RtcpSession.receive', () => {
  it("reads the peer's view of our stream: loss, jitter in ms, highest sequence", () => {
    const report = session().receive(peerReceiverReport({ fractionLost: 64, totalLost: 5000, highestSeq: 123456, jitter: 240 }), NOW);
    expect(report).toEqual({ ssrc: PEER, bye: false, ourStream: { fractionLost: 0.25, cumulativeLost: 5000, extendedHighestSeq: 123456, jitterMs: 30 } });
  });

  it("reads a negative cumulative loss as RFC 3550 writes it (two's complement, 24 bits)", () => {
    const bytes = peerReceiverReport({ totalLost: 1 });
    bytes.set([0xff, 0xff, 0xfd], 8 + 5);
    expect(session().receive(bytes, NOW)!.ourStream!.cumulativeLost).toBe(-3);
  });

  it('computes the round trip from LSR and DLSR once the peer has seen a sender report of ours', () => {
    const rtcp = session();
    const sentAt = NOW;
    const [sr] = parse(rtcp.senderReport({ rtpTimestamp: 0, packetCount: 0, octetCount: 0 }, null, sentAt)) as [SenderReportPacket];
    const lsr = (((sr.getNtpSeconds() & 0xffff) << 16) | (sr.getNtpFraction() >>> 16)) >>> 0;
    // The peer held it 500 ms before reporting; the report arrives 620 ms after we sent: 120 ms round trip.
    const report = rtcp.receive(peerReceiverReport({ lsr, dlsr: 0.5 * 65536 }), sentAt + 620);
    expect(report!.ourStream!.roundTripMs).toBeCloseTo(120, 1);
    expect(rtcp.receive(peerReceiverReport({ lsr: 0 }), sentAt + 620)!.ourStream!.roundTripMs).toBeUndefined();
    // A block claiming more delay than has passed gives no round trip rather than a negative or huge one.
    expect(rtcp.receive(peerReceiverReport({ lsr, dlsr: 2 * 65536 }), sentAt + 620)!.ourStream!.roundTripMs).toBeUndefined();
  });

  it('finds the block about us among others, in a compound packet with SDES and BYE', () => {
    const other = new ReceptionReport();
    other.setSsrc(0x33333333);
    other.setFractionLost(200);
    const ours = new ReceptionReport();
    ours.setSsrc(US);
    ours.setFractionLost(32);
    const sr = new SenderReportPacket();
    sr.setSsrc(PEER);
    sr.addReport(other);
    sr.addReport(ours);
    const compound = new CompoundPacket();
    compound.addPacket(sr);
    compound.addPacket(new SdesPacket());
    const withBye = Uint8Array.from([...bytesOf(compound), 0x81, 203, 0x00, 0x01, 0x22, 0x22, 0x22, 0x22]);
    const report = session().receive(withBye, NOW);
    expect(report).toMatchObject({ ssrc: PEER, bye: true, ourStream: { fractionLost: 0.125 } });
  });

  it('reports a BYE on its own', () => {
    expect(session().receive(Uint8Array.of(0x81, 203, 0x00, 0x01, 0x22, 0x22, 0x22, 0x22), NOW)).toEqual({ ssrc: PEER, bye: true });
  });

  it('returns null for garbage and keeps what came before a malformed part', () => {
    const rtcp = session();
    const good = peerReceiverReport({ fractionLost: 128 });
    for (const bytes of [
      new Uint8Array(0),
      Uint8Array.of(0x81),
      good.subarray(0, 7),
      Uint8Array.of(0x41, 201, 0, 1, 0, 0, 0, 0),
      Uint8Array.of(0x80, 201, 0, 9, 0, 0, 0, 0),
      Uint8Array.of(0x80, 202, 0, 1, 1, 2, 3, 4),
    ]) {
      expect(rtcp.receive(bytes, NOW)).toBeNull();
    }
    // A report block count larger than the packet: only the blocks that fit are read.
    expect(rtcp.receive(Uint8Array.of(0x81, 201, 0, 1, 0x22, 0x22, 0x22, 0x22), NOW)).toEqual({ ssrc: PEER, bye: false });
    const withTrailingJunk = Uint8Array.from([...good, 0x80, 200, 0xff, 0xff, 1, 2, 3, 4]);
    expect(rtcp.receive(withTrailingJunk, NOW)!.ourStream!.fractionLost).toBe(0.5);
  });

  it('never throws on random and mutated datagrams', () => {
    const rtcp = session();
    let seed = 99;
    const random = (): number => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) / 2 ** 24;
    const good = rtcp.senderReport({ rtpTimestamp: 1, packetCount: 2, octetCount: 3 }, reception(), NOW);
    for (let round = 0; round < 5000; round++) {
      const bytes =
        round % 2 === 0
          ? Uint8Array.from({ length: Math.floor(random() * 80) }, () => Math.floor(random() * 256))
          : good.slice(0, Math.floor(random() * (good.length + 1)));
      if (round % 2 === 1) for (let flips = 0; flips < 3 && bytes.length > 0; flips++) bytes[Math.floor(random() * bytes.length)] = Math.floor(random() * 256);
      expect(() => rtcp.receive(bytes, NOW)).not.toThrow();
    }
  });
});
