/**
 * Minimal RTCP (RFC 3550 section 6) for one call's audio: the sender and receiver reports we
 * owe the peer, and what the peer's reports say about our stream (loss, jitter, round trip).
 *
 * Reports are built with rtp.js. Incoming ones are read by hand: rtp.js 0.15.5 reads the
 * cumulative-lost field as 12 bits instead of 24 (5000 comes back as 904) and throws on a
 * compound packet with any part it does not like, where one bad packet from the network should
 * cost only itself.
 */
import { CompoundPacket, ReceiverReportPacket, ReceptionReport, SdesChunk, SdesPacket, SenderReportPacket, type SdesItemType } from 'rtp.js/packets';
import type { ReceptionStats } from './sequence-tracker.js';

/** What we sent, for a sender report. */
export interface SentStats {
  /** RTP timestamp of the same instant as `nowMs` (the clock the media runs on). */
  readonly rtpTimestamp: number;
  readonly packetCount: number;
  /** Payload bytes sent (headers not counted, RFC 3550 6.4.1). */
  readonly octetCount: number;
}

/** What a peer's report says about our stream. */
export interface PeerReceptionView {
  /** Share of our packets lost since its previous report, 0–1. */
  readonly fractionLost: number;
  readonly cumulativeLost: number;
  readonly extendedHighestSeq: number;
  readonly jitterMs: number;
  /** Round trip from our last sender report it saw; absent before it has seen one. */
  readonly roundTripMs?: number;
}

/** The useful parts of one incoming RTCP compound packet. */
export interface PeerReport {
  /** SSRC of the peer's first SR or RR. */
  readonly ssrc: number;
  /** From its sender report: what it has sent us. */
  readonly sender?: { readonly ntpMs: number; readonly rtpTimestamp: number; readonly packetCount: number; readonly octetCount: number };
  /** Its report block about our SSRC, if there was one. */
  readonly ourStream?: PeerReceptionView;
  /** It sent BYE: the stream is ending. */
  readonly bye: boolean;
}

/** How an {@link RtcpSession} is set up. */
export interface RtcpSessionOptions {
  /** Our SSRC. */
  readonly ssrc: number;
  /** Our canonical name (RFC 3550 6.5.1), carried in every compound packet. */
  readonly cname: string;
  /** Clock rate of our payload, to turn the peer's jitter figure into milliseconds. */
  readonly clockRate: number;
}

/** Seconds from the NTP epoch (1900) to the Unix epoch (1970). */
const NTP_OFFSET_S = 2_208_988_800;
const SR = 200;
const RR = 201;
const BYE = 203;

/** The RTCP side of one RTP session. Times are Unix epoch milliseconds (fractions welcome), passed in. */
export class RtcpSession {
  private expectedPrior = 0;
  private receivedPrior = 0;
  private priorSsrc: number | null = null;
  /** Middle 32 bits of the NTP time of the peer's last sender report, and when it arrived. */
  private lastSr: { middle: number; arrivalMs: number } | null = null;

  constructor(private readonly options: RtcpSessionOptions) {}

  /** A sender report (with a reception block when something was received) and our CNAME. */
  senderReport(sent: SentStats, reception: ReceptionStats | null, nowMs: number): Uint8Array {
    const report = new SenderReportPacket();
    report.setSsrc(this.options.ssrc);
    const { seconds, fraction } = toNtp(nowMs);
    report.setNtpSeconds(seconds);
    report.setNtpFraction(fraction);
    report.setRtpTimestamp(sent.rtpTimestamp >>> 0);
    report.setPacketCount(sent.packetCount >>> 0);
    report.setOctetCount(sent.octetCount >>> 0);
    if (reception) report.addReport(this.block(reception, nowMs));
    return this.compound(report);
  }

  /** A receiver report (for a session that has sent nothing yet) and our CNAME. */
  receiverReport(reception: ReceptionStats | null, nowMs: number): Uint8Array {
    const report = new ReceiverReportPacket();
    report.setSsrc(this.options.ssrc);
    if (reception) report.addReport(this.block(reception, nowMs));
    return this.compound(report);
  }

  /**
   * Reads an incoming compound packet; `null` when it holds no well-formed SR, RR or BYE.
   * Never throws; a malformed part ends the reading, what came before it counts.
   */
  receive(datagram: Uint8Array, nowMs: number): PeerReport | null {
    const view = new DataView(datagram.buffer, datagram.byteOffset, datagram.byteLength);
    let ssrc: number | null = null;
    let sender: PeerReport['sender'];
    let ourStream: PeerReceptionView | undefined;
    let bye = false;
    for (let offset = 0; offset + 8 <= datagram.length;) {
      const first = datagram[offset]!;
      const type = datagram[offset + 1]!;
      const size = (view.getUint16(offset + 2) + 1) * 4;
      if (first >> 6 !== 2 || offset + size > datagram.length) break;
      let blocks = -1;
      if (type === SR && size >= 28) {
        const ntpMs = (view.getUint32(offset + 8) - NTP_OFFSET_S) * 1000 + (view.getUint32(offset + 12) / 2 ** 32) * 1000;
        sender = { ntpMs, rtpTimestamp: view.getUint32(offset + 16), packetCount: view.getUint32(offset + 20), octetCount: view.getUint32(offset + 24) };
        this.lastSr = { middle: view.getUint32(offset + 10), arrivalMs: nowMs };
        blocks = offset + 28;
      } else if (type === RR) blocks = offset + 8;
      else if (type === BYE) {
        bye = true;
        if ((first & 0x1f) > 0 && size >= 8) ssrc ??= view.getUint32(offset + 4);
      }
      if (blocks >= 0) {
        ssrc ??= view.getUint32(offset + 4);
        const count = Math.min(first & 0x1f, Math.floor((offset + size - blocks) / 24));
        for (let i = 0; i < count; i++) {
          const at = blocks + i * 24;
          if (view.getUint32(at) === this.options.ssrc) ourStream = this.peerView(view, at, nowMs);
        }
      }
      offset += size;
    }
    if (ssrc === null) return null;
    return { ssrc, ...(sender ? { sender } : {}), ...(ourStream ? { ourStream } : {}), bye };
  }

  /** Our reception block for the peer's source; the loss fraction covers the time since the previous block. */
  private block(reception: ReceptionStats, nowMs: number): ReceptionReport {
    if (reception.ssrc !== this.priorSsrc) {
      this.priorSsrc = reception.ssrc;
      this.expectedPrior = 0;
      this.receivedPrior = 0;
    }
    const expected = reception.expected - this.expectedPrior;
    const lost = expected - (reception.received - this.receivedPrior);
    this.expectedPrior = reception.expected;
    this.receivedPrior = reception.received;
    const block = new ReceptionReport();
    block.setSsrc(reception.ssrc);
    block.setFractionLost(expected <= 0 || lost <= 0 ? 0 : Math.min(255, Math.floor((lost * 256) / expected)));
    // Never negative here (duplicates are not counted), so rtp.js's writing of the field is right.
    block.setTotalLost(Math.min(0x7fffff, reception.cumulativeLost));
    block.setHighestSeqNumber(reception.extendedHighestSeq >>> 0);
    block.setJitter(Math.floor(reception.jitter) >>> 0);
    if (this.lastSr) {
      block.setLastSRTimestamp(this.lastSr.middle);
      block.setDelaySinceLastSR(Math.round(((nowMs - this.lastSr.arrivalMs) / 1000) * 65536) >>> 0);
    }
    return block;
  }

  private peerView(view: DataView, at: number, nowMs: number): PeerReceptionView {
    const lsr = view.getUint32(at + 16);
    const dlsr = view.getUint32(at + 20);
    const result = {
      fractionLost: view.getUint8(at + 4) / 256,
      // A signed 24-bit count: shifting it to the top of an int32 and back extends the sign.
      cumulativeLost: ((view.getUint32(at + 4) & 0xffffff) << 8) >> 8,
      extendedHighestSeq: view.getUint32(at + 8),
      jitterMs: (view.getUint32(at + 12) * 1000) / this.options.clockRate,
    };
    if (lsr === 0) return result;
    // RFC 3550 6.4.1: round trip = arrival − LSR − DLSR, all in 1/65536 s of the NTP clock.
    const { seconds, fraction } = toNtp(nowMs);
    const arrival = (((seconds & 0xffff) << 16) | (fraction >>> 16)) >>> 0;
    const roundTrip = (arrival - lsr - dlsr) >>> 0;
    // A "negative" round trip (clock steps, a bogus block) wraps to a huge value: not reported.
    return roundTrip < 0x80000000 ? { ...result, roundTripMs: (roundTrip / 65536) * 1000 } : result;
  }

  private compound(report: SenderReportPacket | ReceiverReportPacket): Uint8Array {
    const chunk = new SdesChunk();
    chunk.setSsrc(this.options.ssrc);
    chunk.addItem(1 as SdesItemType, this.options.cname);
    const sdes = new SdesPacket();
    sdes.addChunk(chunk);
    const packet = new CompoundPacket();
    packet.addPacket(report);
    packet.addPacket(sdes);
    const view = packet.getView();
    return new Uint8Array(view.buffer, view.byteOffset, view.byteLength);
  }
}

/** Unix epoch milliseconds as a 64-bit NTP timestamp: whole seconds since 1900 and 1/2^32 fractions. */
function toNtp(epochMs: number): { seconds: number; fraction: number } {
  const unixSeconds = Math.floor(epochMs / 1000);
  const fraction = Math.min(0xffffffff, Math.round(((epochMs - unixSeconds * 1000) / 1000) * 2 ** 32));
  return { seconds: (unixSeconds + NTP_OFFSET_S) >>> 0, fraction };
}
