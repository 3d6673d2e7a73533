/**
 * One call's media in the media thread (docs/architecture.md, "One way through"): caller RTP →
 * jitter buffer → decode → loss concealment → in-band DTMF → decoded audio out; voice activity
 * (speech start, barge-in) as G.711 packets arrive in sequence, for Opus after the jitter
 * buffer; RFC 4733 events → keys out; our encoded 20 ms frames → the pacer → RTP to where the
 * caller's packets really come from (symmetric RTP, for callers behind NAT).
 *
 * Prompts are numbered: frames of a prompt that was stopped (barge-in) or has been followed by
 * another are dropped, so frames still on their way from the main thread never play late.
 */
import { EventEmitter } from 'node:events';
import type dgram from 'node:dgram';
import opus from '@discordjs/opus';
import { WebRtcVad } from '../../../engine/vad/webrtc-vad.js';
import { decodeAlaw, decodeMulaw } from '../../audio/g711.js';
import { Resampler } from '../../audio/resampler.js';
import { DtmfReceiver, dtmfEventFrames } from '../rtp/dtmf.js';
import { GoertzelDtmfDetector } from '../rtp/goertzel-dtmf.js';
import { JitterBuffer } from '../rtp/jitter-buffer.js';
import { LossConcealer } from '../rtp/loss-concealment.js';
import { PacedStream, type FrameRun } from '../rtp/paced-stream.js';
import type { PacerClock, Tickable } from '../rtp/pacer.js';
import { RtcpSession, type PeerReport } from '../rtp/rtcp.js';
import { isRtcp, parseRtp, type RtpPacket } from '../rtp/rtp-packet.js';
import { flags } from '../sdp/direction.js';
import { CallerSource } from './caller-source.js';
import type { BridgeableLeg } from './media-bridge.js';
import { absoluteNow, type CallMedia, type CallQuality, type PlayoutReport } from './media-protocol.js';
import { PacketBuffer } from './packet-buffer.js';
import { PlayoutMarks, type ReachedMark } from './playout-marks.js';
import type { RtpPorts } from './rtp-port-pool.js';
import type { RtpForwarder } from './rtp-forwarder.js';

export interface MediaSessionEvents {
  /** A key: from RFC 4733 events, or (without events) heard in the audio. */
  dtmf: [key: string, via: 'rfc4733' | 'inband'];
  /** 20 ms of the caller's decoded audio at {@link MediaSession.audioRateHz}; the array is reused for the next frame, so copy what you keep. */
  audio: [pcm: Int16Array];
  /** The caller started speaking (three voiced frames in a row). */
  'speech-start': [];
  /** Prompt `prompt` is over: all of it was sent after its end, or it was stopped. */
  'played-out': [prompt: number, report: PlayoutReport];
  /** A mark set by {@link MediaSession.addMark} came due: played, or dropped before it was. */
  mark: [mark: number, played: boolean];
}

/** Receive ticks between two RTCP reports (RFC 3550's 5 s minimum interval). */
const RTCP_EVERY_TICKS = 250;
/** Frames of voiced audio in a row that count as speech starting (60 ms, as the endpointer). */
const SPEECH_START_FRAMES = 3;
/** Fewer sequence numbers than this behind the latest: a late or duplicate packet; further behind, the numbering started over. */
const LATE_PACKETS = 50;

/** The media of one call. */
export class MediaSession extends EventEmitter<MediaSessionEvents> implements BridgeableLeg {
  private callMedia: CallMedia;
  // Per codec: made again when a re-INVITE changes the codec (see setUpCodec).
  private jitter!: JitterBuffer;
  private concealer!: LossConcealer;
  private outgoing!: PacedStream;
  /** The receive side's tick on the pacer clock: one frame out of the jitter buffer. */
  private readonly receiveTick: Tickable = { tick: (): boolean => this.playIncoming(), afterSends: true };
  private readonly dtmfIn = new DtmfReceiver();
  private inband: GoertzelDtmfDetector | null = null;
  private vad: WebRtcVad | null = null;
  private voicedRun = 0;
  /** G.711: voice is detected on arrival ({@link checkArrival}); Opus: when the frame is played out (decoding is stateful). */
  private voiceOnArrival = false;
  /** The last packet checked on arrival: its source and sequence number. */
  private arrivalSsrc = -1;
  private arrivalSequence = 0;
  /** The latest arrival, decoded for the voice detector. */
  private readonly arrived = new Int16Array(160);
  private decoder: InstanceType<typeof opus.OpusEncoder> | null = null;
  private downsampler: Resampler | null = null;
  /** The latest G.711 frame, decoded in place: 10,000 arrays a second less for the collector at 200 calls. */
  private readonly decoded = new Int16Array(160);
  /** Downsampled Opus audio waiting to fill a 20 ms frame. */
  private heardPending = new Int16Array(0);
  /** Where the caller's media comes from and ours goes (strict, symmetric RTP). */
  private readonly source: CallerSource;
  private readonly ssrc = Math.floor(Math.random() * 2 ** 32) >>> 0;
  private sequence = Math.floor(Math.random() * 65536);
  /** Every packet of our stream is written here (prompts and, bridged, the other call's audio alike). */
  private readonly packet = new PacketBuffer();
  /** While bridged: where what the caller sends goes, on arrival. */
  private forwarder: RtpForwarder | null = null;
  private closed = false;
  /** The prompt being played, and what has become of it. */
  private prompt = { id: 0, bargeIn: false, ended: false, over: true, framesSent: 0, firstPacketAt: 0 };
  /** Marks in the prompt's frames (a stream bot's marks). */
  private readonly marks = new PlayoutMarks();
  /** When the caller's voice was last heard (absolute ms), for turn latency. */
  private lastVoiceAt = 0;
  /** `strangersDropped`: packets from addresses the call did not name, dropped unread. */
  readonly counters = { packetsIn: 0, packetsOut: 0, garbageIn: 0, octetsOut: 0, strangersDropped: 0 };
  private rtcp!: RtcpSession;
  private ticks = 0;
  private lastTimestamp = 0;
  /** The caller's latest RTCP report: how our stream reaches it, and what it sent. */
  peerReport: PeerReport | null = null;

  constructor(
    private readonly ports: RtpPorts,
    media: CallMedia,
    private readonly pacer: PacerClock,
  ) {
    super();
    this.callMedia = media;
    this.source = new CallerSource(media);
    this.setUpCodec();
    ports.rtp.on('message', (data, from) => this.receive(data, from));
    ports.rtcp.on('message', (data, from) => this.receiveRtcp(data, from));
    pacer.add(this.receiveTick);
  }

  /** What the call negotiated now. */
  get media(): CallMedia {
    return this.callMedia;
  }

  /** The rate of the caller's audio this session gives out: 8000 for G.711, 16000 for Opus. */
  get audioRateHz(): number {
    return this.callMedia.codec.name === 'opus' ? 16000 : 8000;
  }

  /** Samples of one 20 ms frame of the caller's audio. */
  get frameSamples(): number {
    return this.audioRateHz / 50;
  }

  /** Takes a re-negotiated media description (hold, resume, codec change, new address). */
  update(media: CallMedia): void {
    const codecChanged = media.codec.name !== this.callMedia.codec.name || media.codec.payloadType !== this.callMedia.codec.payloadType;
    this.callMedia = media;
    this.source.update(media);
    if (codecChanged) this.setUpCodec();
    else if ((media.telephoneEvent === null) !== (this.inband === null))
      this.inband = media.telephoneEvent === null ? new GoertzelDtmfDetector({ sampleRate: this.audioRateHz }) : null;
  }

  /**
   * Everything that depends on the codec: payload type and clock of both directions (a new
   * paced stream: the timestamp step differs), decoder, detectors at the audio rate.
   */
  private setUpCodec(): void {
    const { codec, telephoneEvent } = this.callMedia;
    // Audio already encoded for the old codec is dropped; whoever waits for it to play is told.
    const dropped = this.outgoing ? this.outgoing.queued > 0 : false;
    if (this.outgoing) {
      this.outgoing.clear();
      this.pacer.remove(this.outgoing);
      this.reached(this.marks.drop());
    }
    this.outgoing = new PacedStream({
      samplesPerFrame: (codec.clockRate * 20) / 1000,
      onSend: (payload, timestamp, marker, payloadType) => this.send(payload, timestamp, marker, payloadType),
      onDrained: () => {
        if (this.prompt.ended) this.promptOver(true);
      },
    });
    this.pacer.add(this.outgoing);
    if (dropped && this.prompt.ended) queueMicrotask(() => this.promptOver(false));
    this.jitter = new JitterBuffer({ payloadType: codec.payloadType, clockRate: codec.clockRate });
    this.rtcp = new RtcpSession({ ssrc: this.ssrc, cname: `sprachrohr@${this.ports.port}`, clockRate: codec.clockRate });
    this.concealer = new LossConcealer({ sampleRate: this.audioRateHz, frameSamples: this.frameSamples });
    this.vad?.close();
    this.vad = WebRtcVad.create(this.audioRateHz, 2);
    this.inband = telephoneEvent === null ? new GoertzelDtmfDetector({ sampleRate: this.audioRateHz }) : null;
    this.voicedRun = 0;
    this.voiceOnArrival = codec.name !== 'opus';
    this.arrivalSsrc = -1;
    this.downsampler?.destroy();
    const isOpus = codec.name === 'opus';
    this.decoder = isOpus ? new opus.OpusEncoder(48000, 1) : null;
    this.downsampler = isOpus ? new Resampler(48000, 16000) : null;
    this.heardPending = new Int16Array(0);
  }

  /**
   * Prompt `prompt` starts: frames of earlier prompts are dropped from now on. With `bargeIn`,
   * the caller's speech start or a key stops it here at once, without waiting for the main thread.
   */
  startPrompt(prompt: number, bargeIn: boolean): void {
    this.stopPlayback();
    this.prompt = { id: prompt, bargeIn, ended: false, over: false, framesSent: 0, firstPacketAt: 0 };
  }

  /** Queues encoded frames of prompt `prompt` (dropped when that prompt is over, the codec changed since, or the call is bridged). */
  enqueue(prompt: number, payloadType: number, run: FrameRun): void {
    if (this.closed || this.forwarder || prompt !== this.prompt.id || this.prompt.over || payloadType !== this.callMedia.codec.payloadType) return;
    // After a pause, the reply goes out in the clock's next slot rather than this call's own.
    const pausing = this.outgoing.queued === 0 && this.outgoing.idle;
    this.outgoing.enqueueRun(run);
    this.marks.queue(run.ends.length);
    if (pausing) this.pacer.rephase(this.outgoing);
  }

  /** Prompt `prompt` has no more frames: it is over once its queue has played out. */
  endPrompt(prompt: number): void {
    if (prompt !== this.prompt.id || this.prompt.over) return;
    this.prompt.ended = true;
    if (this.outgoing.queued === 0) this.promptOver(true);
  }

  /** Drops everything queued (barge-in): nothing more of the prompt goes out from the next tick. */
  stopPlayback(): void {
    this.outgoing.clear();
    this.reached(this.marks.drop());
    if (!this.prompt.over) this.promptOver(false);
  }

  /** Reports `mark` once every frame of prompt `prompt` queued so far has been played; at once (unplayed) when that prompt is over. */
  addMark(prompt: number, mark: number): void {
    if (this.closed) return;
    if (prompt !== this.prompt.id || this.prompt.over) return void this.emit('mark', mark, false);
    const due = this.marks.add(mark);
    if (due) this.emit('mark', due.mark, due.played);
  }

  private reached(marks: readonly ReachedMark[] | null): void {
    if (marks) for (const { mark, played } of marks) this.emit('mark', mark, played);
  }

  /** The caller spoke or pressed a key: a prompt that allows barge-in stops here. */
  private bargeIn(): void {
    if (this.prompt.bargeIn && !this.prompt.over) this.stopPlayback();
  }

  /** The prompt is over: `complete` when it played to its end, not when it was stopped or its frames dropped. */
  private promptOver(complete: boolean): void {
    if (this.prompt.over) return;
    this.prompt.over = true;
    this.emit('played-out', this.prompt.id, {
      framesSent: this.prompt.framesSent,
      firstPacketAt: this.prompt.firstPacketAt,
      lastVoiceAt: this.lastVoiceAt,
      complete,
    });
  }

  /** Sends a key as RFC 4733 events (or nothing when the caller did not offer them, or while bridged: the other call's packets go out then). */
  sendDtmf(key: string): boolean {
    if (this.callMedia.telephoneEvent === null || this.forwarder) return false;
    for (const frame of dtmfEventFrames(key, { payloadType: this.callMedia.telephoneEvent, samplesPerFrame: (this.callMedia.codec.clockRate * 20) / 1000 }))
      this.outgoing.enqueue(frame);
    return true;
  }

  /** A frame of ours, from the pacer. An audio frame counts towards the marks even while the caller holds the call: it was due. */
  private send(payload: Uint8Array, timestamp: number, marker: boolean, payloadType: number | undefined): void {
    if (this.closed) return;
    if (flags(this.callMedia.direction).send) {
      if (payloadType === undefined) {
        this.prompt.framesSent += 1;
        if (this.prompt.firstPacketAt === 0) this.prompt.firstPacketAt = absoluteNow();
      }
      this.transmit(payload, payloadType ?? this.callMedia.codec.payloadType, timestamp, marker);
    }
    if (payloadType === undefined) this.reached(this.marks.take());
  }

  /** Sends one packet of our stream (our SSRC, the next sequence number) to where the caller's media comes from, unless its direction forbids. */
  transmit(payload: Uint8Array, payloadType: number, timestamp: number, marker: boolean): void {
    if (this.closed || !flags(this.callMedia.direction).send) return;
    this.sequence = (this.sequence + 1) & 0xffff;
    const packet = this.packet.write(payloadType, this.sequence, timestamp, this.ssrc, marker, payload);
    this.counters.packetsOut += 1;
    this.counters.octetsOut += payload.length;
    this.lastTimestamp = timestamp;
    const target = this.source.rtpTarget;
    this.ports.rtp.send(packet, target.port, target.address);
    this.packet.sent(this.ports.rtp);
  }

  /** Timestamp units of one 20 ms frame of our stream. */
  private get frameTimestampStep(): number {
    return (this.callMedia.codec.clockRate * 20) / 1000;
  }

  /**
   * The timestamp our stream's next packet carries: the pacer's clock, which runs on while
   * nothing is sent, or just after the last packet sent if that is ahead of it (forwarded
   * packets follow the other caller's clock, which may run a little fast).
   */
  get streamTimestamp(): number {
    const next = this.outgoing.nextTimestamp;
    if (this.counters.packetsOut === 0 || ((next - this.lastTimestamp) | 0) > 0) return next;
    return (this.lastTimestamp + this.frameTimestampStep) >>> 0;
  }

  /** Joins a bridge: the prompt stops, prompts and keys of ours are refused, and what the caller sends goes to `forwarder` as it arrives. */
  joinBridge(forwarder: RtpForwarder): void {
    if (this.closed) return;
    this.forwarder = forwarder;
    this.stopPlayback();
  }

  /** Leaves the bridge: prompts may play again, their timestamps after the last forwarded packet's. */
  leaveBridge(): void {
    this.forwarder = null;
    if (this.closed) return;
    const behind = (this.streamTimestamp - this.outgoing.nextTimestamp) | 0;
    if (behind > 0) this.outgoing.shift(behind / this.frameTimestampStep);
  }

  private receive(data: Buffer, from: dgram.RemoteInfo): void {
    if (this.closed) return;
    // Strict source: a packet from an address the call did not name is not read at all, so it
    // can neither latch the media nor reach the caller's audio.
    if (!this.source.expects(from.address)) {
      this.counters.strangersDropped += 1;
      return;
    }
    if (this.callMedia.rtcpMux && isRtcp(data)) return this.receiveRtcp(data, null);
    const packet = parseRtp(data);
    if (!packet || (packet.payloadType !== this.callMedia.codec.payloadType && packet.payloadType !== this.callMedia.telephoneEvent)) {
      this.counters.garbageIn += 1;
      return;
    }
    const now = performance.now();
    // Another stream than the latched one, even from an expected address, is a stranger.
    if (!this.source.accept(packet, from)) {
      this.counters.strangersDropped += 1;
      return;
    }
    this.counters.packetsIn += 1;
    // Bridged, the other caller hears this before anything else is done with it.
    this.forwarder?.forward(packet);
    if (packet.payloadType === this.callMedia.telephoneEvent) {
      const key = this.dtmfIn.push(packet);
      if (key) {
        this.bargeIn();
        this.emit('dtmf', key, 'rfc4733');
      }
      return;
    }
    // The payload is a view into the datagram: Node gives every datagram its own buffer, so the
    // view stays valid while the jitter buffer holds it (no copy per packet).
    this.jitter.push(packet, now);
    if (this.voiceOnArrival) this.checkArrival(packet);
  }

  /**
   * The caller's RTCP: its view of our stream for the call's quality. Our reports go back to
   * where its reports come from (symmetric RTCP, RFC 4961: behind NAT the SDP's port is not the
   * one that reaches it), once they come from the caller's own SSRC. With rtcp-mux (`from`
   * null) they go to the latched RTP address anyway.
   */
  private receiveRtcp(data: Buffer, from: dgram.RemoteInfo | null): void {
    if (this.closed) return;
    if (from && !this.source.expects(from.address)) {
      this.counters.strangersDropped += 1;
      return;
    }
    const report = this.rtcp.receive(data, Date.now());
    if (!report) return;
    this.peerReport = report;
    if (from) this.source.heardRtcp(from, report.ssrc);
  }

  /** One receive tick: the next frame out of the jitter buffer, decoded (or concealed). */
  private playIncoming(): boolean {
    if (this.closed) return false;
    if (++this.ticks % RTCP_EVERY_TICKS === 0) this.sendReport();
    const out = this.jitter.pop(performance.now());
    if (out === null) return false;
    if (out === 'lost') {
      this.hear(this.concealer.conceal());
      return true;
    }
    switch (this.callMedia.codec.name) {
      case 'PCMU':
        this.hear(this.concealer.process(decodeMulaw(out.payload, this.decoded)));
        break;
      case 'PCMA':
        this.hear(this.concealer.process(decodeAlaw(out.payload, this.decoded)));
        break;
      case 'opus':
        for (const frame of this.decodeOpus(out.payload)) this.hear(this.concealer.process(frame));
    }
    return true;
  }

  /** An Opus payload's audio as 20 ms frames at 16 kHz (none until a frame fills). */
  private decodeOpus(payload: Uint8Array): Int16Array[] {
    let wide: Int16Array;
    try {
      const decoded = this.decoder!.decode(Buffer.from(payload));
      wide = new Int16Array(decoded.buffer, decoded.byteOffset, decoded.byteLength / 2);
    } catch {
      // A corrupt Opus packet plays as silence of one frame.
      wide = new Int16Array(960);
    }
    const narrow = this.downsampler!.process(wide);
    const joined = new Int16Array(this.heardPending.length + narrow.length);
    joined.set(this.heardPending);
    joined.set(narrow, this.heardPending.length);
    const frames: Int16Array[] = [];
    let at = 0;
    for (; at + this.frameSamples <= joined.length; at += this.frameSamples) frames.push(joined.slice(at, at + this.frameSamples));
    this.heardPending = joined.slice(at);
    return frames;
  }

  private hear(pcm: Int16Array): void {
    if (pcm.length !== this.frameSamples) return;
    if (this.inband)
      for (const key of this.inband.process(pcm)) {
        this.bargeIn();
        this.emit('dtmf', key, 'inband');
      }
    if (!this.voiceOnArrival) this.detectVoice(pcm);
    this.emit('audio', pcm);
  }

  /**
   * G.711 audio is checked for voice as it arrives, in sequence, rather than when the jitter
   * buffer plays it out 20–60 ms later: the audio goes to a recogniser, which needs it in order,
   * but a barge-in should not wait for a playout delay. A late or duplicate packet (up to a
   * second behind) is left to the jitter buffer; a gap, or numbering that starts over, breaks a
   * run of voiced frames.
   */
  private checkArrival(packet: RtpPacket): void {
    if (packet.ssrc === this.arrivalSsrc) {
      const behind = (this.arrivalSequence - packet.sequenceNumber) & 0xffff;
      if (behind < LATE_PACKETS) return;
      if (((packet.sequenceNumber - this.arrivalSequence) & 0xffff) !== 1) this.voicedRun = 0;
    } else this.voicedRun = 0;
    this.arrivalSsrc = packet.ssrc;
    this.arrivalSequence = packet.sequenceNumber;
    if (packet.payload.length !== this.frameSamples) return;
    this.detectVoice(this.callMedia.codec.name === 'PCMA' ? decodeAlaw(packet.payload, this.arrived) : decodeMulaw(packet.payload, this.arrived));
  }

  /** One frame through the voice detector: when the caller last spoke, and whether speech starts (barge-in). */
  private detectVoice(pcm: Int16Array): void {
    if (this.vad!.isSpeech(pcm)) {
      this.lastVoiceAt = absoluteNow();
      this.voicedRun += 1;
      if (this.voicedRun === SPEECH_START_FRAMES) {
        this.bargeIn();
        this.emit('speech-start');
      }
    } else this.voicedRun = 0;
  }

  /**
   * A sender report while we send, a receiver report otherwise, so the far end can see the
   * call's quality too: on the RTP port with rtcp-mux, else to its RTCP port (a=rtcp, the RTP
   * port + 1 by default, or where its own RTCP comes from).
   */
  private sendReport(): void {
    if (this.callMedia.direction === 'inactive') return;
    const now = Date.now();
    const reception = this.jitter.reception();
    const report =
      this.counters.packetsOut > 0
        ? this.rtcp.senderReport(
            { rtpTimestamp: this.lastTimestamp, packetCount: this.counters.packetsOut, octetCount: this.counters.octetsOut },
            reception,
            now,
          )
        : this.rtcp.receiverReport(reception, now);
    const target = this.callMedia.rtcpMux ? this.source.rtpTarget : this.source.rtcpDestination;
    (this.callMedia.rtcpMux ? this.ports.rtp : this.ports.rtcp).send(report, target.port, target.address);
  }

  /** Call quality for the log at the end: what we received, and what the caller said it received. */
  quality(): CallQuality {
    const stats = this.jitter.stats();
    const peer = this.peerReport?.ourStream;
    return {
      packetsIn: this.counters.packetsIn,
      packetsOut: this.counters.packetsOut,
      strangersDropped: this.counters.strangersDropped,
      lost: stats.lost,
      late: stats.late,
      discarded: stats.discarded,
      gaps: stats.gaps,
      jitterMs: Math.round(stats.jitterMs * 10) / 10,
      peerFractionLost: peer?.fractionLost,
      peerJitterMs: peer ? Math.round(peer.jitterMs * 10) / 10 : undefined,
      roundTripMs: peer?.roundTripMs,
    };
  }

  /** Stops the media and frees the ports. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.pacer.remove(this.outgoing);
    this.pacer.remove(this.receiveTick);
    this.outgoing.clear();
    this.vad?.close();
    this.downsampler?.destroy();
    this.ports.release();
    this.removeAllListeners();
  }
}
