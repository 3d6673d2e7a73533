/**
 * One call's media as the call session sees it, on the main thread: the caller's decoded audio,
 * keys and speech start come in as events; our speech goes out as prompts, encoded here
 * ({@link FrameEncoder}) and paced by the media thread. Every prompt has a number, and the media
 * thread reports when it has played out or was stopped, with how much of it went out.
 */
import { EventEmitter } from 'node:events';
import type { FrameRun } from '../rtp/paced-stream.js';
import type { MediaCodec } from '../sdp/media-codec.js';
import { FrameEncoder } from './frame-encoder.js';
import { toLocalTime, type CallMedia, type CallQuality, type MediaCommand, type MediaEvent } from './media-protocol.js';
import type { MessageBatch } from './message-batch.js';

export interface MediaChannelEvents {
  /** A key: from RFC 4733 events, SIP INFO, or (without events) heard in the audio. */
  dtmf: [key: string, via: 'rfc4733' | 'info' | 'inband'];
  /** 20 ms of the caller's decoded audio at {@link MediaChannel.audioRateHz}. */
  audio: [pcm: Int16Array];
  /** The caller started speaking (three voiced frames in a row). */
  'speech-start': [];
  /** The media thread stopped: the call has no media any more. */
  lost: [error: Error];
}

/** What became of a prompt, on this thread's `performance.now()` clock. */
export interface PromptPlayout {
  /** Seconds of the prompt that were sent: what the caller heard of it. */
  readonly playedSeconds: number;
  /** When its first packet went out (0: none did). */
  readonly firstPacketAtMs: number;
  /** When the caller's voice was last heard before the report (0: never). */
  readonly lastVoiceAtMs: number;
  /** It played to its end; false when it was stopped (barge-in, {@link MediaChannel.stopPlayback}, a new prompt) or its frames were dropped. */
  readonly complete: boolean;
}

/** What the media thread says about one call (its audio comes as a frame of the tick's batch). */
type ChannelEvent =
  Exclude<MediaEvent, { ev: 'ready' | 'opened' | 'open-failed' | 'pacing' | 'error' | 'audio' }> | { readonly ev: 'audio'; readonly pcm: Int16Array };

/** The main thread's handle on one call's media in the media thread. */
export class MediaChannel extends EventEmitter<MediaChannelEvents> {
  private media: CallMedia | null = null;
  private encoder: FrameEncoder | null = null;
  private prompt = 0;
  /** The current prompt has sent no frames yet: its first run is urgent (see `MediaWorkerData.doorbell`). */
  private promptUnheard = false;
  /** The report of the latest prompt that is over (nobody asks after an older one). */
  private latest: { readonly prompt: number; readonly playout: PromptPlayout } | null = null;
  private readonly waiting = new Map<number, Array<(playout: PromptPlayout | null) => void>>();
  private marks = 0;
  private readonly markWaiting = new Map<number, (played: boolean | null) => void>();
  private closed = false;
  /** The media thread stopped under this call. */
  private gone = false;
  private quality: Promise<CallQuality> | null = null;
  /** The call this one is bridged to. */
  private partner: MediaChannel | null = null;
  private resolveQuality: (quality: CallQuality) => void = () => undefined;

  /** Made by `MediaThread.open` once the ports are bound. */
  constructor(
    readonly id: number,
    /** The local RTP port (RTCP is on the one above), for the SDP. */
    readonly port: number,
    private readonly out: MessageBatch<MediaCommand>,
    private readonly onClosed: () => void,
  ) {
    super();
  }

  /** The negotiated media: starts sending and receiving, or takes a re-negotiation (hold, resume, codec change). */
  negotiated(media: CallMedia): void {
    if (this.closed) return;
    const first = this.media === null;
    if (!this.encoder || this.encoder.codec.name !== media.codec.name || this.encoder.codec.payloadType !== media.codec.payloadType)
      this.encoder = new FrameEncoder(media.codec);
    this.media = media;
    this.out.send({ op: first ? 'start' : 'update', id: this.id, media });
  }

  private get current(): CallMedia {
    if (!this.media) throw new Error('the call has no negotiated media yet');
    return this.media;
  }

  get codec(): MediaCodec {
    return this.current.codec;
  }

  /** The rate of the caller's audio: 8000 for G.711, 16000 for Opus. */
  get audioRateHz(): number {
    return this.current.codec.name === 'opus' ? 16000 : 8000;
  }

  /** Samples of one 20 ms frame of the caller's audio. */
  get frameSamples(): number {
    return this.audioRateHz / 50;
  }

  /** The rate {@link play} takes: the codec's own (8000 for G.711, 48000 for Opus), so nothing is resampled twice. */
  get playbackRateHz(): number {
    return this.current.codec.clockRate;
  }

  /**
   * A new prompt starts (what is left of the one before is dropped). With `bargeIn`, the media
   * thread stops it itself the moment the caller starts speaking or presses a key.
   */
  startPrompt(bargeIn: boolean): void {
    this.prompt += 1;
    this.promptUnheard = true;
    this.encoder?.reset();
    this.out.send({ op: 'prompt', id: this.id, prompt: this.prompt, bargeIn });
  }

  /** Queues our audio (PCM16 at {@link playbackRateHz}) for the prompt, in 20 ms frames; a partial frame waits for more. Bridged, it is dropped. */
  play(pcm: Int16Array): void {
    if (this.closed || this.partner || pcm.length === 0 || !this.encoder) return;
    this.send(this.encoder.encode(pcm));
  }

  /** The prompt's audio is complete: its last partial frame goes out padded with silence. */
  endPrompt(): void {
    if (this.closed || !this.encoder) return;
    this.send(this.encoder.flush());
    this.out.send({ op: 'end', id: this.id, prompt: this.prompt });
  }

  /** Stops the prompt (barge-in): nothing more of it goes out. */
  stopPlayback(): void {
    if (this.closed) return;
    this.encoder?.reset();
    this.out.send({ op: 'stop', id: this.id });
  }

  /** Resolves when the current prompt has played out or was stopped; null when the call's media ended first. */
  playedOut(): Promise<PromptPlayout | null> {
    const prompt = this.prompt;
    if (this.latest?.prompt === prompt) return Promise.resolve(this.latest.playout);
    if (this.closed) return Promise.resolve(null);
    return new Promise((resolve) => {
      const list = this.waiting.get(prompt) ?? [];
      list.push(resolve);
      this.waiting.set(prompt, list);
    });
  }

  /**
   * Resolves once every frame of the current prompt queued before now has been played: true,
   * or false when it was dropped first (stopped, a new prompt, a codec change, a bridge); null
   * when the call's media ended. With `flush`, a partial frame waiting for more audio goes out
   * first, padded with silence, so the mark covers all audio given so far; without, the mark
   * sits before it (for counting what has played, where padding would put a gap in the audio).
   */
  markPlayout(flush: boolean): Promise<boolean | null> {
    if (this.closed) return Promise.resolve(null);
    if (flush && this.encoder) this.send(this.encoder.flush());
    const mark = ++this.marks;
    this.out.send({ op: 'mark', id: this.id, prompt: this.prompt, mark });
    return new Promise((resolve) => this.markWaiting.set(mark, resolve));
  }

  /** Sends a key as RFC 4733 events (false when the caller did not offer them, or while bridged). */
  sendDtmf(key: string): boolean {
    if (this.closed || this.partner || this.media?.telephoneEvent == null) return false;
    this.out.send({ op: 'dtmf', id: this.id, key });
    return true;
  }

  /**
   * Joins this call's media to another's: each side's incoming audio (and RFC 4733 keys, where
   * the other side takes them) goes out to the other at once, in the media thread, converted
   * where the codecs differ. Prompts stop while bridged; each call still reports its caller's
   * audio, keys and speech. A call already bridged elsewhere leaves that bridge first. The
   * bridge runs once both calls have negotiated media, and ends when either is closed.
   * @throws Error when `other` is this call or belongs to another media thread
   */
  bridge(other: MediaChannel): void {
    if (other === this) throw new Error('a call cannot be bridged to itself');
    if (other.out !== this.out) throw new Error('only calls of one media thread can be bridged');
    if (this.closed || other.closed || this.partner === other) return;
    this.unbridge();
    other.unbridge();
    this.partner = other;
    other.partner = this;
    this.encoder?.reset();
    other.encoder?.reset();
    this.out.send({ op: 'bridge', id: this.id, other: other.id });
  }

  /** Ends the bridge (both sides go back to prompts and listening). */
  unbridge(): void {
    const partner = this.partner;
    if (!partner) return;
    this.partner = null;
    partner.partner = null;
    if (!this.closed) this.out.send({ op: 'unbridge', id: this.id });
  }

  /** The call this one is bridged to, or null. */
  get bridgedTo(): MediaChannel | null {
    return this.partner;
  }

  /** A key that came by SIP INFO, reported like the others. */
  keyFromSignalling(key: string): void {
    if (!this.closed) this.emit('dtmf', key, 'info');
  }

  /** Stops the media and frees the ports; resolves with the call's quality figures. */
  close(): Promise<CallQuality> {
    if (this.quality) return this.quality;
    if (this.gone) this.quality = Promise.resolve({});
    else {
      this.quality = new Promise((resolve) => (this.resolveQuality = resolve));
      this.out.send({ op: 'close', id: this.id });
    }
    this.finish();
    return this.quality;
  }

  /** An event of this call from the media thread. */
  receive(event: ChannelEvent): void {
    switch (event.ev) {
      case 'audio':
        if (!this.closed) this.emit('audio', event.pcm);
        return;
      case 'dtmf':
        if (!this.closed) this.emit('dtmf', event.key, event.via);
        return;
      case 'speech-start':
        if (!this.closed) this.emit('speech-start');
        return;
      case 'played-out': {
        const playout: PromptPlayout = {
          playedSeconds: event.report.framesSent * 0.02,
          firstPacketAtMs: toLocalTime(event.report.firstPacketAt),
          lastVoiceAtMs: toLocalTime(event.report.lastVoiceAt),
          complete: event.report.complete,
        };
        this.latest = { prompt: event.prompt, playout };
        for (const resolve of this.waiting.get(event.prompt) ?? []) resolve(playout);
        this.waiting.delete(event.prompt);
        return;
      }
      case 'mark':
        this.markWaiting.get(event.mark)?.(event.played);
        this.markWaiting.delete(event.mark);
        return;
      case 'closed':
        this.onClosed();
        this.resolveQuality(event.quality);
        return;
    }
  }

  /** The media thread stopped. */
  lost(error: Error): void {
    this.gone = true;
    this.resolveQuality({});
    if (this.closed) return;
    this.finish();
    this.emit('lost', error);
  }

  private finish(): void {
    this.closed = true;
    // The media thread ends the bridge with the call; the other call is free of it at once.
    if (this.partner) this.partner.partner = null;
    this.partner = null;
    for (const list of this.waiting.values()) for (const resolve of list) resolve(null);
    this.waiting.clear();
    for (const resolve of this.markWaiting.values()) resolve(null);
    this.markWaiting.clear();
  }

  private send(run: FrameRun | null): void {
    if (!run) return;
    this.out.send({ op: 'frames', id: this.id, prompt: this.prompt, payloadType: this.current.codec.payloadType, run }, this.promptUnheard);
    this.promptUnheard = false;
  }
}
