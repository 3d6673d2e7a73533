/**
 * Adaptive playout buffer for one call's incoming audio: fixed-duration frames of one payload
 * type, reordered by sequence number and played one per tick after a delay that follows the
 * measured jitter. Time is passed in, so the same packets and times always give the same frames.
 */
import type { RtpPacket } from './rtp-packet.js';
import { type ReceptionStats, SEQ_DUPLICATE, SEQ_INVALID, SequenceTracker } from './sequence-tracker.js';

/** How the buffer is set up. */
export interface JitterBufferOptions {
  /** The audio payload type; packets of other types (RFC 4733 events, comfort noise) only count for statistics. */
  readonly payloadType: number;
  /** RTP clock rate in Hz (default 8000). */
  readonly clockRate?: number;
  /** Duration of one frame and of the tick that pops it (default 20 ms). */
  readonly frameMs?: number;
  /** Smallest playout delay (default 20 ms). */
  readonly minDelayMs?: number;
  /** Largest playout delay however high the jitter (default 60 ms). */
  readonly maxDelayMs?: number;
  /** Frames held at most before the oldest is discarded (default 50: one second). */
  readonly capacity?: number;
}

/** Counters for RTCP and logs. */
export interface JitterBufferStats {
  /** Distinct packets of the current source, all payload types. */
  readonly received: number;
  /** Packets never received (RFC 3550: expected − received) from the current source. */
  readonly lost: number;
  /** Audio packets that arrived after their playout time and were dropped. */
  readonly late: number;
  readonly duplicate: number;
  /** Packets thrown away: overflow, stray sequence numbers, frames dropped to shorten the delay. */
  readonly discarded: number;
  /** Ticks answered with `'lost'`: losses, but also pauses in the sender's stream. */
  readonly concealed: number;
  /** Times a frame played after one or more concealed ticks: the gaps a listener hears in the middle of the audio. */
  readonly gaps: number;
  /** How often the SSRC changed. */
  readonly sourceChanges: number;
  /** How long the last played frame waited in the buffer. */
  readonly delayMs: number;
  /** The delay the buffer aims for now. */
  readonly targetDelayMs: number;
  /** RFC 3550 interarrival jitter in milliseconds. */
  readonly jitterMs: number;
}

/** What a tick plays: a frame, `'lost'` when one is due but missing (conceal it), or `null` before the first frame. */
export type JitterBufferOutput = RtpPacket | 'lost' | null;

interface Entry {
  readonly packet: RtpPacket;
  readonly arrivalMs: number;
}

/** Ticks in a row the delay must stay a frame above target before a frame is dropped to shorten it. */
const SHRINK_AFTER_TICKS = 25;
/** Jitter multiple added to the smallest delay: about 99 % of arrivals for jitter of normal shape. */
const JITTER_MARGIN = 3;

/** Reorders, times and counts the frames of one incoming RTP stream; `pop` once per tick. */
export class JitterBuffer {
  private readonly payloadType: number;
  private readonly frameMs: number;
  private readonly minDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly capacity: number;
  private readonly tracker: SequenceTracker;
  private readonly entries = new Map<number, Entry>();
  private ssrc: number | null = null;
  private pending: Entry | null = null;
  /** idle: nothing to keep time with; playing: `playhead` is due at this tick; underrun: ran dry at `playhead`, `missed` ticks ago. */
  private state: 'idle' | 'playing' | 'underrun' = 'idle';
  private playhead = 0;
  private missed = 0;
  private hasPlayed = false;
  private overDelayTicks = 0;
  private counts = { late: 0, duplicate: 0, discarded: 0, concealed: 0, gaps: 0, sourceChanges: 0 };
  /** The last tick was concealed: the next frame played closes a gap. */
  private inGap = false;
  private delayMs = 0;

  constructor(options: JitterBufferOptions) {
    this.payloadType = options.payloadType;
    this.frameMs = options.frameMs ?? 20;
    this.minDelayMs = options.minDelayMs ?? 20;
    this.maxDelayMs = Math.max(this.minDelayMs, options.maxDelayMs ?? 60);
    this.capacity = options.capacity ?? 50;
    this.tracker = new SequenceTracker(options.clockRate ?? 8000);
  }

  /** Takes one packet as it arrives. Packets from a new SSRC replace the old source once two arrive in sequence. */
  push(packet: RtpPacket, arrivalMs: number): void {
    if (this.ssrc === null) this.ssrc = packet.ssrc;
    else if (packet.ssrc !== this.ssrc) {
      // One stray packet must not flush a call's audio: the new source needs a successor first.
      const held = this.pending;
      if (!held || held.packet.ssrc !== packet.ssrc || packet.sequenceNumber !== ((held.packet.sequenceNumber + 1) & 0xffff)) {
        this.pending = { packet, arrivalMs };
        return;
      }
      this.switchSource(packet.ssrc);
      this.insert(held.packet, held.arrivalMs);
    }
    this.pending = null;
    this.insert(packet, arrivalMs);
  }

  /** The frame to play at this tick; call once per `frameMs`. */
  pop(nowMs: number): JitterBufferOutput {
    const target = this.targetDelayMs;
    const firstExt = this.earliestExt();
    const first = this.entries.get(firstExt);
    if (this.state === 'idle') {
      if (!first || nowMs - first.arrivalMs < target) return this.gap();
      return this.play(firstExt, first, nowMs, firstExt);
    }
    const due = this.state === 'playing' ? this.playhead : this.playhead + this.missed;
    const frame = this.entries.get(due);
    if (frame) return this.play(due, frame, nowMs, firstExt);
    if (first) {
      const age = nowMs - first.arrivalMs;
      // A frame ahead of the schedule that has already waited the whole delay: the frames before it are gone.
      if (firstExt > due && (firstExt - due) * this.frameMs + age > target + this.frameMs) return this.play(firstExt, first, nowMs, firstExt);
      // Behind the schedule (after a pause, or a delay spike): start over once it has waited the delay.
      if (firstExt < due && age >= target) return this.play(firstExt, first, nowMs, firstExt);
    }
    if (this.state === 'playing' && first) this.playhead++;
    else if (this.state === 'playing') {
      this.state = 'underrun';
      this.missed = 1;
    } else this.missed++;
    return this.gap();
  }

  /** The delay aimed for now: the smallest delay plus a margin for the measured jitter. */
  get targetDelayMs(): number {
    const wanted = this.minDelayMs + JITTER_MARGIN * this.tracker.jitterMs;
    return Math.min(this.maxDelayMs, Math.ceil(wanted));
  }

  /** Counters for logs and RTCP. */
  stats(): JitterBufferStats {
    const reception = this.tracker.stats(this.ssrc ?? 0);
    return {
      ...this.counts,
      received: reception.received,
      lost: reception.cumulativeLost,
      delayMs: this.delayMs,
      targetDelayMs: this.targetDelayMs,
      jitterMs: this.tracker.jitterMs,
    };
  }

  /** RTCP reception statistics of the current source, or `null` before the first packet. */
  reception(): ReceptionStats | null {
    return this.ssrc === null ? null : this.tracker.stats(this.ssrc);
  }

  /** Hands out the frames still held, in order, and empties the buffer (at the end of a call). */
  flush(): RtpPacket[] {
    const frames = [...this.entries.entries()].sort((a, b) => a[0] - b[0]).map(([, entry]) => entry.packet);
    this.entries.clear();
    this.state = 'idle';
    return frames;
  }

  /** Forgets everything, counters included. */
  reset(): void {
    this.entries.clear();
    this.tracker.reset();
    this.ssrc = null;
    this.pending = null;
    this.state = 'idle';
    this.hasPlayed = false;
    this.overDelayTicks = 0;
    this.delayMs = 0;
    this.counts = { late: 0, duplicate: 0, discarded: 0, concealed: 0, gaps: 0, sourceChanges: 0 };
    this.inGap = false;
  }

  private insert(packet: RtpPacket, arrivalMs: number): void {
    const audio = packet.payloadType === this.payloadType;
    const ext = this.tracker.track(packet.sequenceNumber, packet.timestamp, arrivalMs, audio);
    if (this.tracker.restarted) this.restartSchedule();
    if (ext === SEQ_DUPLICATE) this.counts.duplicate++;
    else if (ext === SEQ_INVALID) this.counts.discarded++;
    else if (!audio) return;
    else if (this.state !== 'idle' && ext < this.playhead) this.counts.late++;
    else {
      this.entries.set(ext, { packet, arrivalMs });
      if (this.entries.size > this.capacity) {
        this.entries.delete(this.earliestExt());
        this.counts.discarded++;
      }
    }
  }

  /** Plays frame `ext`; `earliest` is the lowest frame held, so that frames left behind are seen without another search. */
  private play(ext: number, entry: Entry, nowMs: number, earliest: number): RtpPacket {
    let next = entry;
    this.delayMs = nowMs - entry.arrivalMs;
    this.overDelayTicks = this.delayMs >= this.targetDelayMs + this.frameMs ? this.overDelayTicks + 1 : 0;
    const following = this.entries.get(ext + 1);
    // The delay stayed a frame too long for half a second (the sender's clock runs fast, or a
    // spike has passed): one frame less brings it back to target.
    if (this.overDelayTicks >= SHRINK_AFTER_TICKS && following) {
      this.entries.delete(ext);
      this.counts.discarded++;
      this.overDelayTicks = 0;
      ext++;
      next = following;
    }
    this.entries.delete(ext);
    // Frames before the one played (a sender that stalled and then sent what it owed at once)
    // are late now, as if they had arrived after it: left in, they would play at the next gap,
    // seconds later, as stale audio.
    if (earliest < ext)
      for (const key of this.entries.keys())
        if (key < ext) {
          this.entries.delete(key);
          this.counts.late++;
        }
    if (this.inGap) this.counts.gaps++;
    this.inGap = false;
    this.state = 'playing';
    this.playhead = ext + 1;
    this.missed = 0;
    this.hasPlayed = true;
    return next.packet;
  }

  private gap(): 'lost' | null {
    if (!this.hasPlayed) return null;
    this.counts.concealed++;
    this.inGap = true;
    return 'lost';
  }

  /** The lowest extended sequence number held (NaN when empty, which no entry has); no object per call, as it runs every tick of every call. */
  private earliestExt(): number {
    let best = Number.NaN;
    // Written so that the first key replaces NaN (every comparison with NaN is false).
    for (const ext of this.entries.keys()) if (!(ext >= best)) best = ext;
    return best;
  }

  private switchSource(ssrc: number): void {
    this.ssrc = ssrc;
    this.tracker.reset();
    this.counts.sourceChanges++;
    this.restartSchedule();
  }

  private restartSchedule(): void {
    this.entries.clear();
    this.state = 'idle';
    this.overDelayTicks = 0;
  }
}
