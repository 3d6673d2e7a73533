/**
 * Where one call's media comes from and where ours goes (strict, symmetric RTP). Only the
 * SDP's address and the signalling's address are heard ({@link ExpectedSources}); before the
 * media is latched, a source must send {@link LEARN_PACKETS} packets of one stream in
 * sequence (a strict-RTP probation), so a single packet, or a spray of unrelated ones, never
 * decides where the call's audio goes; once latched, only that stream (its SSRC) may move, as a
 * NAT rebinding does. Our RTP goes to the latched source (the SDP's address until then), our
 * RTCP to where the caller's own RTCP comes from once heard.
 */
import type dgram from 'node:dgram';
import type { RtpPacket } from '../rtp/rtp-packet.js';
import { ExpectedSources } from './expected-sources.js';
import type { CallMedia } from './media-protocol.js';

/** Packets of one stream in sequence from one source that latch the call's media to it (a 60 ms probation). */
export const LEARN_PACKETS = 3;

/** An address and port to send to. */
export interface MediaAddress {
  readonly address: string;
  readonly port: number;
}

/** The caller's side of one call's media. */
export class CallerSource {
  private readonly expected: ExpectedSources;
  private latched = false;
  private ssrc = 0;
  private rtp: MediaAddress;
  private rtcpTarget: MediaAddress;
  /** The caller's own RTCP has set {@link rtcpTarget}. */
  private rtcpHeard = false;
  /** The stream being learned before the media latches. */
  private readonly candidate = { address: '', port: 0, ssrc: -1, sequence: 0, count: 0 };

  constructor(media: CallMedia) {
    this.expected = new ExpectedSources(media.address, media.signallingAddress);
    this.rtp = { address: media.address, port: media.port };
    this.rtcpTarget = media.rtcp;
  }

  /** Where our RTP goes. */
  get rtpTarget(): MediaAddress {
    return this.rtp;
  }

  /** Where our RTCP goes without rtcp-mux. */
  get rtcpDestination(): MediaAddress {
    return this.rtcpTarget;
  }

  /** Takes a re-negotiated description; a source no longer expected is learned afresh. */
  update(media: CallMedia): void {
    this.expected.set(media.address, media.signallingAddress);
    if (this.latched && this.expected.has(this.rtp.address)) return;
    this.latched = false;
    this.rtp = { address: media.address, port: media.port };
    this.rtcpTarget = media.rtcp;
    this.rtcpHeard = false;
    this.candidate.count = 0;
  }

  /** Whether a datagram from `address` may be read at all (allocates nothing). */
  expects(address: string): boolean {
    return this.expected.has(address);
  }

  /**
   * Takes an RTP packet from an expected address: learns or follows its source.
   * @returns false for another stream once the media is latched (a stranger, to be dropped).
   */
  accept(packet: RtpPacket, from: dgram.RemoteInfo): boolean {
    if (!this.latched) {
      this.learn(packet, from);
      return true;
    }
    if (from.address === this.rtp.address && from.port === this.rtp.port) return true;
    if (packet.ssrc !== this.ssrc) return false;
    this.latch(from, packet.ssrc);
    return true;
  }

  /** The caller's RTCP from `from` with its SSRC: ours goes back there (symmetric RTCP, RFC 4961). */
  heardRtcp(from: dgram.RemoteInfo, ssrc: number): void {
    if (!this.latched || ssrc !== this.ssrc) return;
    this.rtcpTarget = { address: from.address, port: from.port };
    this.rtcpHeard = true;
  }

  private learn(packet: RtpPacket, from: dgram.RemoteInfo): void {
    const candidate = this.candidate;
    if (
      candidate.address === from.address &&
      candidate.port === from.port &&
      candidate.ssrc === packet.ssrc &&
      packet.sequenceNumber === ((candidate.sequence + 1) & 0xffff)
    ) {
      candidate.count += 1;
    } else {
      candidate.address = from.address;
      candidate.port = from.port;
      candidate.ssrc = packet.ssrc;
      candidate.count = 1;
    }
    candidate.sequence = packet.sequenceNumber;
    if (candidate.count >= LEARN_PACKETS) this.latch(from, packet.ssrc);
  }

  private latch(from: dgram.RemoteInfo, ssrc: number): void {
    this.latched = true;
    this.ssrc = ssrc;
    this.rtp = { address: from.address, port: from.port };
    // Behind NAT the SDP's RTCP address is as wrong as its RTP one: the port above the real
    // RTP source is the best guess until the caller's own RTCP shows where it is.
    if (!this.rtcpHeard) this.rtcpTarget = { address: from.address, port: from.port + 1 };
  }
}
