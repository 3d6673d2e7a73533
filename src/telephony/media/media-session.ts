/**
 * One call's media (ARCHITECTURE.md's "one way through"): caller RTP → jitter buffer → decode
 * → loss concealment → voice activity and in-band DTMF → decoded audio out; RFC 4733 events →
 * keys out; our PCM → 20 ms frames → encode → the pacer → RTP to where the caller's packets
 * really come from (symmetric RTP, for callers behind NAT).
 */
import { EventEmitter } from 'node:events';
import type dgram from 'node:dgram';
import opus from '@discordjs/opus';
import { WebRtcVad } from '../../../engine/vad/webrtc-vad.js';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from '../../audio/g711.js';
import { Resampler } from '../../audio/resampler.js';
import type { Direction } from '../sdp/direction.js';
import type { MediaCodec } from '../sdp/media-codec.js';
import { DtmfReceiver, dtmfEventFrames } from '../rtp/dtmf.js';
import { GoertzelDtmfDetector } from '../rtp/goertzel-dtmf.js';
import { JitterBuffer } from '../rtp/jitter-buffer.js';
import { LossConcealer } from '../rtp/loss-concealment.js';
import { PacedStream } from '../rtp/paced-stream.js';
import type { PacerClock, Tickable } from '../rtp/pacer.js';
import { RtcpSession, type PeerReport } from '../rtp/rtcp.js';
import { parseRtp, serializeRtp } from '../rtp/rtp-packet.js';
import type { RtpPorts } from './rtp-port-pool.js';

/** What the call agreed on for its media (from the SDP offer/answer). */
export interface CallMedia {
  readonly codec: MediaCodec;
  readonly telephoneEvent: number | null;
  readonly address: string;
  readonly port: number;
  /** Our direction: `sendonly`/`inactive` while the caller holds us, `recvonly` never sends. */
  readonly direction: Direction;
}

export interface MediaSessionEvents {
  /** A key: from RFC 4733 events, SIP INFO, or (without events) heard in the audio. */
  dtmf: [key: string, via: 'rfc4733' | 'info' | 'inband'];
  /** 20 ms of the caller's decoded audio at {@link MediaSession.audioRateHz}. */
  audio: [pcm: Int16Array];
  /** The caller started speaking (three voiced frames in a row). */
  'speech-start': [];
  /** Nothing is queued for playback any more: all of it was sent, or it was stopped. */
  drained: [];
}

/** Receive ticks between two RTCP reports (RFC 3550's 5 s minimum interval). */
const RTCP_EVERY_TICKS = 250;
/** Frames of voiced audio in a row that count as speech starting (60 ms, as the endpointer). */
const SPEECH_START_FRAMES = 3;

/** The media of one call. */
export class MediaSession extends EventEmitter<MediaSessionEvents> {
  private media: CallMedia;
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
  private decoder: InstanceType<typeof opus.OpusEncoder> | null = null;
  private opusEncoder: InstanceType<typeof opus.OpusEncoder> | null = null;
  private downsampler: Resampler | null = null;
  /** Downsampled Opus audio waiting to fill a 20 ms frame. */
  private heardPending = new Int16Array(0);
  private remote: { address: string; port: number; latched: boolean; ssrc: number };
  private readonly ssrc = Math.floor(Math.random() * 2 ** 32) >>> 0;
  private sequence = Math.floor(Math.random() * 65536);
  private pending = new Int16Array(0);
  private closed = false;
  /** Audio frames sent since the last {@link markPlayback}. */
  private framesSent = 0;
  /** When the caller's voice was last heard (performance.now()), for turn latency. */
  lastVoiceAtMs = 0;
  /** When the first packet after {@link markPlayback} went out. */
  firstPacketAtMs = 0;
  readonly counters = { packetsIn: 0, packetsOut: 0, garbageIn: 0, octetsOut: 0 };
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
    this.media = media;
    this.remote = { address: media.address, port: media.port, latched: false, ssrc: 0 };
    this.setUpCodec();
    ports.rtp.on('message', (data, from) => this.receive(data, from));
    ports.rtcp.on('message', (data) => {
      const report = this.rtcp.receive(data, Date.now());
      if (report) this.peerReport = report;
    });
    pacer.add(this.receiveTick);
  }

  /** The rate of the caller's audio this session gives out: 8000 for G.711, 16000 for Opus. */
  get audioRateHz(): number {
    return this.media.codec.name === 'opus' ? 16000 : 8000;
  }

  /** Samples of one 20 ms frame of the caller's audio. */
  get frameSamples(): number {
    return this.audioRateHz / 50;
  }

  /** The rate {@link play} takes: the codec's own (8000 for G.711, 48000 for Opus), so nothing is resampled twice. */
  get playbackRateHz(): number {
    return this.media.codec.clockRate;
  }

  get codec(): MediaCodec {
    return this.media.codec;
  }

  /** The local RTP port (for the SDP). */
  get port(): number {
    return this.ports.port;
  }

  /** Takes a re-negotiated media description (hold, resume, codec change, new address). */
  update(media: CallMedia): void {
    const codecChanged = media.codec.name !== this.media.codec.name || media.codec.payloadType !== this.media.codec.payloadType;
    this.media = media;
    if (!this.remote.latched || media.address !== this.remote.address) this.remote = { address: media.address, port: media.port, latched: false, ssrc: 0 };
    if (codecChanged) this.setUpCodec();
    else if ((media.telephoneEvent === null) !== (this.inband === null)) this.inband = media.telephoneEvent === null ? new GoertzelDtmfDetector({ sampleRate: this.audioRateHz }) : null;
  }

  /**
   * Everything that depends on the codec: payload type and clock of both directions (a new
   * paced stream: the timestamp step differs), decoder, detectors at the audio rate.
   */
  private setUpCodec(): void {
    const { codec, telephoneEvent } = this.media;
    // Audio already encoded for the old codec is dropped; whoever waits for it to play is told.
    const dropped = this.outgoing ? this.outgoing.queued > 0 : false;
    if (this.outgoing) {
      this.outgoing.clear();
      this.pacer.remove(this.outgoing);
    }
    this.pending = new Int16Array(0);
    this.outgoing = new PacedStream({
      samplesPerFrame: (codec.clockRate * 20) / 1000,
      onSend: (payload, timestamp, marker, payloadType) => this.send(payload, timestamp, marker, payloadType),
      onDrained: () => this.emit('drained'),
    });
    this.pacer.add(this.outgoing);
    if (dropped) queueMicrotask(() => this.emit('drained'));
    this.jitter = new JitterBuffer({ payloadType: codec.payloadType, clockRate: codec.clockRate });
    this.rtcp = new RtcpSession({ ssrc: this.ssrc, cname: `sprachrohr@${this.ports.port}`, clockRate: codec.clockRate });
    this.concealer = new LossConcealer({ sampleRate: this.audioRateHz, frameSamples: this.frameSamples });
    this.vad?.close();
    this.vad = WebRtcVad.create(this.audioRateHz, 2);
    this.inband = telephoneEvent === null ? new GoertzelDtmfDetector({ sampleRate: this.audioRateHz }) : null;
    this.voicedRun = 0;
    this.downsampler?.destroy();
    const isOpus = codec.name === 'opus';
    this.decoder = isOpus ? new opus.OpusEncoder(48000, 1) : null;
    this.opusEncoder = null;
    this.downsampler = isOpus ? new Resampler(48000, 16000) : null;
    this.heardPending = new Int16Array(0);
  }

  /**
   * Queues our audio (PCM16 at {@link playbackRateHz}) for playback in 20 ms frames. The last
   * partial frame waits for more, or for {@link endPlayback}.
   */
  play(pcm: Int16Array): void {
    if (this.closed || pcm.length === 0) return;
    let audio = pcm;
    if (this.pending.length > 0) {
      audio = new Int16Array(this.pending.length + pcm.length);
      audio.set(this.pending);
      audio.set(pcm, this.pending.length);
    }
    const frame = this.playbackRateHz / 50;
    let at = 0;
    for (; at + frame <= audio.length; at += frame) this.outgoing.enqueue(this.encode(audio.subarray(at, at + frame)));
    this.pending = audio.slice(at);
  }

  /** Sends the last partial frame (padded with silence). */
  endPlayback(): void {
    if (this.pending.length === 0) return;
    const frame = new Int16Array(this.playbackRateHz / 50);
    frame.set(this.pending);
    this.pending = new Int16Array(0);
    this.outgoing.enqueue(this.encode(frame));
  }

  /** Drops everything queued (barge-in): nothing more of it goes out from the next tick. */
  stopPlayback(): void {
    const had = this.outgoing.queued > 0;
    this.outgoing.clear();
    this.pending = new Int16Array(0);
    if (had) this.emit('drained');
  }

  /** Frames still queued. */
  get queuedFrames(): number {
    return this.outgoing.queued;
  }

  /** Starts counting sent frames afresh (a prompt starts); returns the count before. */
  markPlayback(): number {
    const before = this.framesSent;
    this.framesSent = 0;
    this.firstPacketAtMs = 0;
    return before;
  }

  /** Seconds of audio sent since {@link markPlayback}: what the caller has heard of a prompt. */
  get playedSeconds(): number {
    return this.framesSent * 0.02;
  }

  /** Sends a key as RFC 4733 events (or nothing when the caller did not offer them). */
  sendDtmf(key: string): boolean {
    if (this.media.telephoneEvent === null) return false;
    for (const frame of dtmfEventFrames(key, { payloadType: this.media.telephoneEvent, samplesPerFrame: (this.media.codec.clockRate * 20) / 1000 })) this.outgoing.enqueue(frame);
    return true;
  }

  private encode(frame: Int16Array): Uint8Array {
    switch (this.media.codec.name) {
      case 'PCMU':
        return encodeMulaw(frame);
      case 'PCMA':
        return encodeAlaw(frame);
      case 'opus':
        this.opusEncoder ??= new opus.OpusEncoder(48000, 1);
        return this.opusEncoder.encode(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
    }
  }

  private send(payload: Uint8Array, timestamp: number, marker: boolean, payloadType: number | undefined): void {
    if (this.closed || this.media.direction === 'recvonly' || this.media.direction === 'inactive') return;
    if (payloadType === undefined) {
      this.framesSent += 1;
      if (this.firstPacketAtMs === 0) this.firstPacketAtMs = performance.now();
    }
    this.sequence = (this.sequence + 1) & 0xffff;
    const packet = serializeRtp({ payloadType: payloadType ?? this.media.codec.payloadType, sequenceNumber: this.sequence, timestamp, ssrc: this.ssrc, marker, payload });
    this.counters.packetsOut += 1;
    this.counters.octetsOut += payload.length;
    this.lastTimestamp = timestamp;
    this.ports.rtp.send(packet, this.remote.port, this.remote.address);
  }

  private receive(data: Buffer, from: dgram.RemoteInfo): void {
    if (this.closed) return;
    const packet = parseRtp(data);
    if (!packet || (packet.payloadType !== this.media.codec.payloadType && packet.payloadType !== this.media.telephoneEvent)) {
      this.counters.garbageIn += 1;
      return;
    }
    const now = performance.now();
    if (from.address !== this.remote.address || from.port !== this.remote.port) {
      // Symmetric RTP: answer where the caller's packets come from, not where its SDP said.
      // The first packet latches; afterwards only the same source (SSRC) may move (a NAT
      // rebinding), so a stranger spraying the port cannot take the call's audio.
      if (this.remote.latched && packet.ssrc !== this.remote.ssrc) {
        this.counters.garbageIn += 1;
        return;
      }
      this.remote = { address: from.address, port: from.port, latched: true, ssrc: packet.ssrc };
    }
    if (!this.remote.latched) this.remote = { ...this.remote, latched: true, ssrc: packet.ssrc };
    this.counters.packetsIn += 1;
    if (packet.payloadType === this.media.telephoneEvent) {
      const key = this.dtmfIn.push(packet);
      if (key) this.emit('dtmf', key, 'rfc4733');
      return;
    }
    // The payload is a view into the datagram: Node gives every datagram its own buffer, so the
    // view stays valid while the jitter buffer holds it (no copy per packet).
    this.jitter.push(packet, now);
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
    for (const frame of this.decode(out.payload)) this.hear(this.concealer.process(frame));
    return true;
  }

  /** A payload's audio as 20 ms frames at {@link audioRateHz} (Opus: none until a frame fills). */
  private decode(payload: Uint8Array): Int16Array[] {
    switch (this.media.codec.name) {
      case 'PCMU':
        return [decodeMulaw(payload)];
      case 'PCMA':
        return [decodeAlaw(payload)];
      case 'opus': {
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
    }
  }

  private hear(pcm: Int16Array): void {
    if (pcm.length !== this.frameSamples) return;
    if (this.inband) for (const key of this.inband.process(pcm)) this.emit('dtmf', key, 'inband');
    if (this.vad!.isSpeech(pcm)) {
      this.lastVoiceAtMs = performance.now();
      this.voicedRun += 1;
      if (this.voicedRun === SPEECH_START_FRAMES) this.emit('speech-start');
    } else this.voicedRun = 0;
    this.emit('audio', pcm);
  }

  /**
   * A sender report while we send, a receiver report otherwise, to the port above the caller's
   * RTP port (RFC 3550 section 11), so the far end can see the call's quality too.
   */
  private sendReport(): void {
    if (this.media.direction === 'inactive') return;
    const now = Date.now();
    const reception = this.jitter.reception();
    const report =
      this.counters.packetsOut > 0
        ? this.rtcp.senderReport({ rtpTimestamp: this.lastTimestamp, packetCount: this.counters.packetsOut, octetCount: this.counters.octetsOut }, reception, now)
        : this.rtcp.receiverReport(reception, now);
    this.ports.rtcp.send(report, this.remote.port + 1, this.remote.address);
  }

  /** Call quality for the log at the end: what we received, and what the caller said it received. */
  quality(): Record<string, number | undefined> {
    const stats = this.jitter.stats();
    const peer = this.peerReport?.ourStream;
    return {
      packetsIn: this.counters.packetsIn,
      packetsOut: this.counters.packetsOut,
      lost: stats.lost,
      late: stats.late,
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
