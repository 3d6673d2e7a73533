/**
 * One direction of a bridge: each RTP packet taken from one call's caller goes out to the other
 * call's caller as it arrives, as part of our own stream to that caller (our SSRC, our next
 * sequence number), so the far end hears one stream from us whether we play a prompt or pass
 * on the other call, and across the change.
 *
 * Timestamps follow the source's: the first packet after a gap (the bridge starting, a new
 * source, a hold) takes our stream's clock and the marker bit, and each later one moves on from
 * there by as much as the source's did (scaled where the clocks differ), so the source's pauses
 * stay pauses. Sequence numbers count our packets: a lost source packet leaves a timestamp gap,
 * not a sequence gap. A packet that comes after a later one is dropped rather than sent out of
 * order.
 */
import { flags } from '../sdp/direction.js';
import type { MediaCodec } from '../sdp/media-codec.js';
import type { RtpPacket } from '../rtp/rtp-packet.js';
import type { CallMedia } from './media-protocol.js';
import { EventRescaler, payloadConverter, type PayloadConverter } from './payload-converter.js';

/** What a forwarder needs of each call of a bridge (a `MediaSession`). */
export interface BridgeLeg {
  /** What the call negotiated now (a re-INVITE may change it). */
  readonly media: CallMedia;
  /** The timestamp the next packet of our stream to this caller carries, on our clock and after what was sent. */
  readonly streamTimestamp: number;
  /** Sends one packet of our stream to this call's caller (its direction permitting). */
  transmit(payload: Uint8Array, payloadType: number, timestamp: number, marker: boolean): void;
}

/** Sequence numbers behind the latest that mark a late or repeated packet; further behind, the source started over. */
const LATE_PACKETS = 100;
/** Sequence numbers ahead of the latest beyond which the source has started over rather than lost packets (a minute of 20 ms packets). */
const RESTART_PACKETS = 3000;

/** Forwards what `source`'s caller sends to `target`'s caller. */
export class RtpForwarder {
  /** Packets sent on, and packets dropped (late, unconvertible, or not to be sent: hold, no events on the other side). */
  readonly counters = { forwarded: 0, dropped: 0 };
  private sourceCodec: MediaCodec | null = null;
  private targetCodec: MediaCodec | null = null;
  private audio: PayloadConverter | null = null;
  private events: EventRescaler | null = null;
  /** Target clock units per source unit. */
  private ratio = 1;
  /** A packet has gone out since the last gap: the next one follows on from it. */
  private following = false;
  private ssrc = 0;
  private lastSequence = 0;
  private lastSourceTimestamp = 0;
  private lastTimestamp = 0;

  constructor(
    private readonly source: BridgeLeg,
    private readonly target: BridgeLeg,
  ) {}

  /** Takes a packet the source session accepted from its caller (audio or telephone-event, source checked). */
  forward(packet: RtpPacket): void {
    const from = this.source.media;
    const to = this.target.media;
    // A side that must not send to us, or that we must not send to (held), breaks the stream.
    if (!flags(from.direction).recv || !flags(to.direction).send) return this.drop(true);
    const event = packet.payloadType === from.telephoneEvent;
    if (event && to.telephoneEvent === null) return this.drop(false);
    if (from.codec !== this.sourceCodec || to.codec !== this.targetCodec) this.setUp(from.codec, to.codec);
    if (this.following && !this.inOrder(packet)) return this.drop(false);
    const payload = event ? this.events!.convert(packet.payload) : this.audio!.convert(packet.payload);
    if (payload === null) return this.drop(false);
    let timestamp: number;
    let marker = packet.marker;
    if (this.following) {
      timestamp = (this.lastTimestamp + Math.round(((packet.timestamp - this.lastSourceTimestamp) | 0) * this.ratio)) >>> 0;
    } else {
      timestamp = this.target.streamTimestamp;
      marker = true;
      this.following = true;
    }
    this.ssrc = packet.ssrc;
    this.lastSequence = packet.sequenceNumber;
    this.lastSourceTimestamp = packet.timestamp;
    this.lastTimestamp = timestamp;
    this.counters.forwarded += 1;
    this.target.transmit(payload, event ? to.telephoneEvent! : to.codec.payloadType, timestamp, marker);
  }

  /**
   * Whether the packet comes after the last one forwarded: a late or repeated one does not; a
   * new source, or numbering that jumped far, starts following afresh (a gap).
   */
  private inOrder(packet: RtpPacket): boolean {
    if (packet.ssrc !== this.ssrc) {
      this.following = false;
      return true;
    }
    const ahead = (packet.sequenceNumber - this.lastSequence) & 0xffff;
    if (ahead === 0) return false;
    if (ahead <= RESTART_PACKETS) return true;
    if (0x10000 - ahead < LATE_PACKETS) return false;
    this.following = false;
    return true;
  }

  private drop(gap: boolean): void {
    if (gap) this.following = false;
    this.counters.dropped += 1;
  }

  /** Converters for the codec pair; a changed pair (re-INVITE) is a gap. */
  private setUp(from: MediaCodec, to: MediaCodec): void {
    const changed =
      this.sourceCodec === null ||
      this.targetCodec === null ||
      from.name !== this.sourceCodec.name ||
      to.name !== this.targetCodec.name ||
      from.clockRate !== this.sourceCodec.clockRate ||
      to.clockRate !== this.targetCodec.clockRate;
    this.sourceCodec = from;
    this.targetCodec = to;
    if (!changed) return;
    this.audio = payloadConverter(from, to);
    this.ratio = to.clockRate / from.clockRate;
    this.events = new EventRescaler(this.ratio);
    this.following = false;
  }
}
