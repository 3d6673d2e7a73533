/**
 * One call's outgoing media as the pacer sees it: a queue of encoded frames, one sent per tick,
 * with the RTP timestamp running on with the clock whether or not there is something to send.
 * A prompt's frames arrive as runs (one buffer for many frames) and are copied into the
 * stream's own {@link FrameQueue}, so seconds of queued speech for hundreds of calls leave no
 * objects behind for the garbage collector.
 */
import { FrameQueue, type FrameRun } from './frame-queue.js';

export type { FrameRun } from './frame-queue.js';

/** One queued frame with what sets it apart from plain audio. */
export interface PacedFrame {
  readonly payload: Uint8Array;
  /** Payload type when it is not the stream's audio type (RFC 4733 events); passed to `onSend`. */
  readonly payloadType?: number;
  /** Overrides the talkspurt marker (RFC 4733: set on an event's first packet only). */
  readonly marker?: boolean;
  /** Carries the timestamp of the frame sent before it instead of the tick's own (RFC 4733: one timestamp per event). */
  readonly repeatsTimestamp?: boolean;
}

/** How a {@link PacedStream} is set up. */
export interface PacedStreamOptions {
  /** Timestamp units per frame: 160 for 20 ms at 8000 Hz, 960 for 20 ms of Opus at 48 kHz. */
  readonly samplesPerFrame: number;
  /** Sends one packet; `payloadType` is set only for frames that named one. `payload` is a view into the queue's buffer, valid during the call only: copy what you keep. */
  readonly onSend: (payload: Uint8Array, timestamp: number, marker: boolean, payloadType: number | undefined) => void;
  /** Timestamp of the first tick (default random, as RFC 3550 5.1 asks). */
  readonly initialTimestamp?: number;
  /** Called after the tick that sent the last queued frame (a turn's audio has been played out). */
  readonly onDrained?: () => void;
}

/** The outgoing queue of one RTP stream; a {@link PacerClock} ticks it. */
export class PacedStream {
  private readonly queue = new FrameQueue();
  private timestamp: number;
  private lastTimestamp: number;
  private talking = false;

  constructor(private readonly options: PacedStreamOptions) {
    this.timestamp = (options.initialTimestamp ?? Math.floor(Math.random() * 2 ** 32)) >>> 0;
    this.lastTimestamp = this.timestamp;
  }

  /** Queues a frame for the tick after those already queued. */
  enqueue(frame: Uint8Array | PacedFrame): void {
    if (frame instanceof Uint8Array) this.queue.push(frame);
    else this.queue.push(frame.payload, frame.payloadType, frame.marker, frame.repeatsTimestamp);
  }

  /** Queues a run of audio frames, one per tick after those already queued. */
  enqueueRun(run: FrameRun): void {
    this.queue.pushRun(run);
  }

  /** Drops every queued frame: nothing more goes out from the next tick on (barge-in). */
  clear(): void {
    this.queue.clear();
  }

  /** Frames waiting. */
  get queued(): number {
    return this.queue.length;
  }

  /** The timestamp the next tick will carry. */
  get nextTimestamp(): number {
    return this.timestamp;
  }

  /**
   * One tick: sends the next frame if there is one. The timestamp advances either way, so a
   * pause shows as a timestamp gap and the next audio frame carries the marker bit.
   * @returns whether a frame was sent
   */
  tick(): boolean {
    const timestamp = this.timestamp;
    this.timestamp = (timestamp + this.options.samplesPerFrame) >>> 0;
    const frame = this.queue.shift();
    if (!frame) {
      this.talking = false;
      return false;
    }
    const sentTimestamp = frame.repeatsTimestamp ? this.lastTimestamp : timestamp;
    const marker = frame.marker ?? !this.talking;
    this.talking = true;
    this.lastTimestamp = sentTimestamp;
    this.options.onSend(frame.payload, sentTimestamp, marker, frame.payloadType);
    if (this.queued === 0) this.options.onDrained?.();
    return true;
  }

  /** Ticks that passed without a chance to send (the event loop stalled): time moves on, the queue waits. */
  skip(ticks: number): void {
    this.timestamp = (this.timestamp + ticks * this.options.samplesPerFrame) >>> 0;
  }

  /** The next tick comes `frames` of a frame sooner (negative) or later: its timestamp follows the clock. */
  shift(frames: number): void {
    this.timestamp = (this.timestamp + Math.round(frames * this.options.samplesPerFrame)) >>> 0;
  }

  /** Whether the last tick sent nothing (a pause: the next frame starts a talkspurt). */
  get idle(): boolean {
    return !this.talking;
  }
}
