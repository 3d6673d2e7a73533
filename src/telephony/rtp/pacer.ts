/**
 * The one clock that sends outgoing media: every registered stream gets one tick per frame,
 * all from a single timer, each tick at its absolute deadline. The timer is re-armed with the
 * time left to the next deadline, so lateness never adds up (a chained `setInterval(20)`
 * drifts: docs/performance.md, "Measurements behind the code's choices").
 *
 * A frame can be split into slots (`phases`): the timer then wakes once per slot, and each
 * stream ticks in its own slot, once per frame. Streams are spread over the slots, so each
 * wake-up sends a share of the calls, and a stream that starts talking after a pause sends its
 * first frame at once or moves to the next slot, instead of waiting up to a whole frame for its
 * own ({@link PacerClock.rephase}).
 */
/**
 * What the clock ticks: a {@link PacedStream} (outgoing media), or anything else that must run
 * once per frame on the same deadlines (a call's receive side pulls its jitter buffer).
 */
export interface Tickable {
  /** @returns whether the tick sent something */
  tick(): boolean;
  /** Ticks given up after a stall (timestamps move on); optional. */
  skip?(ticks: number): void;
  /** The next tick comes `frames` (a fraction) of a frame earlier (negative) or later than one frame after the last; see {@link PacerClock.rephase}. */
  shift?(frames: number): void;
  /** Ticked after every stream that sends (work that must not delay a packet, such as receiving). */
  readonly afterSends?: boolean;
}

/** The time and timers the clock runs on; tests pass a fake one. */
export interface PacerScheduler {
  /** Monotonic milliseconds. */
  now(): number;
  setTimer(callback: () => void, delayMs: number): unknown;
  clearTimer(handle: unknown): void;
}

/** `performance.now()` and Node's timers. */
export const systemScheduler: PacerScheduler = {
  now: () => performance.now(),
  setTimer: (callback, delayMs) => setTimeout(callback, delayMs),
  clearTimer: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/** How a {@link PacerClock} is set up. */
export interface PacerClockOptions {
  /** Tick period of every stream (default 20 ms). */
  readonly frameMs?: number;
  /** Slots a frame is split into, each with its own wake-up and its own streams (default 1). */
  readonly phases?: number;
  /** Frames each stream ticks at most in one wake-up after a stall; older ones are skipped (default 3). */
  readonly maxBurst?: number;
  readonly scheduler?: PacerScheduler;
  /** Gets what a stream's `onSend` threw; without it the error is thrown from the timer once every stream has had its tick. */
  readonly onError?: (error: unknown, stream: Tickable) => void;
  /** Lateness samples (one per wake-up) kept for the percentiles (default 3000 × phases: the last minute). */
  readonly latencyWindow?: number;
}

/** How punctual the clock has been (lateness = time a wake-up ran after its deadline). */
export interface PacingStats {
  /** Wake-ups (slots) run: one per frame and slot. */
  readonly ticks: number;
  /** Slots dropped after stalls longer than `maxBurst` frames. */
  readonly skippedTicks: number;
  readonly p50LatenessMs: number;
  readonly p99LatenessMs: number;
  readonly maxLatenessMs: number;
}

/**
 * Frames a stream must have been silent before its first frame may go out at once
 * ({@link PacerClock.rephase}): after that long it starts a new utterance (a reply), whose first
 * packet a receiver plays from. A stream that missed a tick or two (a bot's audio arriving just
 * late) stays on its slot instead: its next packet, sent off its grid, would look late against
 * those before it (media-stream bench: wire p99 0.34–0.38 ms on its slots, 0.52–0.57 ms with
 * every gap sent at once).
 */
const AT_ONCE_AFTER_FRAMES = 5;

/** Where a stream ticks, and when it last sent. */
interface Placement {
  slot: number;
  /** Index of the slot run in which it last sent, or -Infinity. */
  lastSent: number;
}

/** Ticks many streams ({@link Tickable}, usually `PacedStream`s) from one deadline-scheduled timer; armed only while it has streams. */
export class PacerClock {
  private readonly frameMs: number;
  private readonly phases: number;
  private readonly slotMs: number;
  private readonly maxBurst: number;
  private readonly scheduler: PacerScheduler;
  /** The streams of each slot, in the order they joined. */
  private readonly slots: Array<Set<Tickable>>;
  private readonly placement = new Map<Tickable, Placement>();
  /** Sending streams per slot. */
  private readonly senders: number[];
  /** `afterSends` streams per slot. */
  private readonly followers: number[];
  private readonly lateness: Float64Array;
  private timer: unknown = null;
  private start = 0;
  /** Slots run or skipped since `start`. */
  private done = 0;
  private ticks = 0;
  private skippedTicks = 0;
  private samples = 0;
  private maxLatenessMs = 0;
  /** A wake-up's ticks are running (a stream's callback may rephase another stream). */
  private waking = false;

  constructor(private readonly options: PacerClockOptions = {}) {
    this.frameMs = options.frameMs ?? 20;
    this.phases = Math.max(1, Math.floor(options.phases ?? 1));
    this.slotMs = this.frameMs / this.phases;
    this.maxBurst = Math.max(1, options.maxBurst ?? 3);
    this.scheduler = options.scheduler ?? systemScheduler;
    this.slots = Array.from({ length: this.phases }, () => new Set<Tickable>());
    this.senders = new Array<number>(this.phases).fill(0);
    this.followers = new Array<number>(this.phases).fill(0);
    this.lateness = new Float64Array(Math.max(1, options.latencyWindow ?? 3000 * this.phases));
  }

  /**
   * Starts ticking `stream` from its next deadline; the first stream starts the clock (the first
   * slot runs one slot's time later). A sending stream goes to the slot with the fewest sending
   * streams (a packet's place in its slot's sends is its lateness); an `afterSends` stream to the
   * slot with the fewest streams of both kinds (so a call's receive side, added after its
   * sending side, ticks in another slot than its own sends where there is one: a barge-in
   * detected there comes between two of the call's packets, not right after one).
   */
  add(stream: Tickable): void {
    if (this.placement.has(stream)) return;
    const load = stream.afterSends ? this.senders.map((senders, slot) => senders + this.followers[slot]!) : this.senders;
    let slot = 0;
    for (let candidate = 1; candidate < this.phases; candidate++) if (load[candidate]! < load[slot]!) slot = candidate;
    this.place(stream, slot);
    this.placement.set(stream, { slot, lastSent: Number.NEGATIVE_INFINITY });
    if (this.timer !== null) return;
    this.start = this.scheduler.now();
    this.done = 0;
    this.arm();
  }

  /** Stops ticking `stream`; without streams the timer stops too. */
  remove(stream: Tickable): void {
    const placed = this.placement.get(stream);
    if (!placed) return;
    this.placement.delete(stream);
    this.unplace(stream, placed.slot);
    if (this.placement.size === 0) this.disarm();
  }

  /**
   * A stream that starts to talk after a pause (at least {@link AT_ONCE_AFTER_FRAMES} frames
   * since its last send) goes out at once when it can: its first frame is sent now, as the last
   * slot run's tick (with that run's timestamp), and the stream moves to that slot, so the next
   * frame follows a frame after that run. The first frame is then up to a slot late against its timestamp, the rest on time: a
   * receiver that plays from the talkspurt's first packet (it carries the marker) holds the
   * others a little longer and never runs short. Without that chance (the clock's wake-up is
   * overdue, the pause was shorter, the slot is full, or a tick is running), it
   * moves to the earliest coming slot that is at least a frame after its last send and has room,
   * instead of waiting up to a frame for its own. A slot has room while it holds no more than a
   * tenth over an even share of the streams of its kind: replies that start together (every call
   * of a menu after the same prompt) are spread over the slots instead of piling into one, whose
   * sends would then take milliseconds one after the other. The stream's {@link Tickable.shift}
   * hears how much earlier its next tick comes.
   */
  rephase(stream: Tickable): void {
    const placed = this.placement.get(stream);
    if (!placed || this.timer === null || this.phases === 1) return;
    const next = this.done + 1;
    const own = next + ((placed.slot - (next % this.phases) + this.phases) % this.phases);
    const load = this.loadOf(stream);
    const share = Math.ceil((1.1 * load.reduce((sum, streams) => sum + streams, 0)) / this.phases);
    const hasRoom = (slot: number): boolean => slot === placed.slot || load[slot]! + 1 <= share;
    const onTime = Math.floor((this.scheduler.now() - this.start) / this.slotMs) === this.done;
    if (!this.waking && onTime && this.done > 0 && placed.lastSent + AT_ONCE_AFTER_FRAMES * this.phases <= this.done && hasRoom(this.done % this.phases)) {
      this.move(stream, placed, this.done % this.phases, own - this.done);
      const errors: Array<[unknown, Tickable]> = [];
      this.tickOne(stream, this.done, errors);
      this.report(errors);
      return;
    }
    for (let run = Math.max(next, placed.lastSent + this.phases); run < own; run++) {
      if (!hasRoom(run % this.phases)) continue;
      this.move(stream, placed, run % this.phases, own - run);
      return;
    }
  }

  /** Puts `stream` into `slot`, its next tick `earlier` slot runs sooner than it would have come. */
  private move(stream: Tickable, placed: Placement, slot: number, earlier: number): void {
    this.unplace(stream, placed.slot);
    this.place(stream, slot);
    placed.slot = slot;
    stream.shift?.(-earlier / this.phases);
  }

  /** Streams being ticked. */
  get size(): number {
    return this.placement.size;
  }

  /** Deadline of slot run `n` (1-based; with one slot, of tick `n`) of the current run, on the scheduler's clock; NaN while stopped. */
  deadline(n: number): number {
    return this.timer === null ? Number.NaN : this.start + n * this.slotMs;
  }

  /** Punctuality since the start or the last {@link resetStats}. */
  stats(): PacingStats {
    const count = Math.min(this.samples, this.lateness.length);
    const sorted = this.lateness.slice(0, count).sort();
    const rank = (p: number): number => (count === 0 ? 0 : sorted[Math.max(0, Math.ceil(p * count) - 1)]!);
    return { ticks: this.ticks, skippedTicks: this.skippedTicks, p50LatenessMs: rank(0.5), p99LatenessMs: rank(0.99), maxLatenessMs: this.maxLatenessMs };
  }

  /** Starts the punctuality statistics afresh (a benchmark's warm-up is over). */
  resetStats(): void {
    this.ticks = 0;
    this.skippedTicks = 0;
    this.samples = 0;
    this.maxLatenessMs = 0;
  }

  /** Forgets every stream and stops the timer. */
  close(): void {
    for (const slot of this.slots) slot.clear();
    this.senders.fill(0);
    this.followers.fill(0);
    this.placement.clear();
    this.disarm();
  }

  /** Streams of `stream`'s kind in each slot. */
  private loadOf(stream: Tickable): number[] {
    return stream.afterSends ? this.followers : this.senders;
  }

  private place(stream: Tickable, slot: number): void {
    this.slots[slot]!.add(stream);
    this.loadOf(stream)[slot]! += 1;
  }

  private unplace(stream: Tickable, slot: number): void {
    this.slots[slot]!.delete(stream);
    this.loadOf(stream)[slot]! -= 1;
  }

  private arm(): void {
    const next = this.start + (this.done + 1) * this.slotMs;
    this.timer = this.scheduler.setTimer(() => this.wake(), Math.max(0, next - this.scheduler.now()));
  }

  private disarm(): void {
    if (this.timer !== null) this.scheduler.clearTimer(this.timer);
    this.timer = null;
  }

  private wake(): void {
    const fired = this.timer;
    const now = this.scheduler.now();
    let due = Math.floor((now - this.start) / this.slotMs) - this.done;
    const burst = this.maxBurst * this.phases;
    if (due > burst) {
      // Bursting a long backlog would flood the peers' jitter buffers: the oldest ticks are
      // given up (timestamps move on; queued audio waits and goes out late instead).
      this.skip(due - burst);
      due = burst;
    }
    const errors: Array<[unknown, Tickable]> = [];
    this.waking = true;
    for (let i = 0; i < due; i++) {
      this.done++;
      this.record(now - (this.start + this.done * this.slotMs));
      // A snapshot: a stream's callback may remove streams (its own call hanging up). Every
      // send goes out before any `afterSends` work, so how long one call's receive side takes
      // never shifts another call's packet within the slot.
      const snapshot = [...this.slots[this.done % this.phases]!];
      for (const late of [false, true]) {
        for (const stream of snapshot) {
          if ((stream.afterSends ?? false) === late) this.tickOne(stream, this.done, errors);
        }
      }
    }
    this.waking = false;
    // A callback may have closed the clock, or closed and restarted it: that left its own timer.
    if (this.timer === fired) {
      if (this.placement.size > 0) this.arm();
      else this.timer = null;
    }
    this.report(errors);
  }

  /** Ticks `stream` as part of slot run `run`; what it throws goes to `errors`. */
  private tickOne(stream: Tickable, run: number, errors: Array<[unknown, Tickable]>): void {
    try {
      if (stream.tick()) {
        const placed = this.placement.get(stream);
        if (placed) placed.lastSent = run;
      }
    } catch (error) {
      errors.push([error, stream]);
    }
  }

  /** Hands what ticks threw to `onError`, or throws the first. */
  private report(errors: ReadonlyArray<[unknown, Tickable]>): void {
    for (const [error, stream] of errors) {
      if (!this.options.onError) throw error;
      this.options.onError(error, stream);
    }
  }

  /** Gives up `slots` slot runs after a stall; each stream hears how many of its own ticks went. */
  private skip(slots: number): void {
    const first = this.done + 1;
    this.done += slots;
    this.skippedTicks += slots;
    for (let slot = 0; slot < this.phases; slot++) {
      // Slot runs in first…first+slots-1 that belong to `slot`.
      const offset = (slot - (first % this.phases) + this.phases) % this.phases;
      const ticks = offset >= slots ? 0 : Math.floor((slots - 1 - offset) / this.phases) + 1;
      if (ticks > 0) for (const stream of this.slots[slot]!) stream.skip?.(ticks);
    }
  }

  private record(latenessMs: number): void {
    this.lateness[this.samples % this.lateness.length] = latenessMs;
    this.samples++;
    this.ticks++;
    if (latenessMs > this.maxLatenessMs) this.maxLatenessMs = latenessMs;
  }
}
