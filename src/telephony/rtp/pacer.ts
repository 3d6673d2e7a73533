/**
 * The one clock that sends outgoing media: every registered stream gets one tick per frame,
 * all from a single timer, each tick at its absolute deadline `start + n × frameMs`. The timer
 * is re-armed with the time left to the next deadline, so lateness never adds up (a chained
 * `setInterval(20)` was measured drifting 14 ms per second).
 */
/**
 * What the clock ticks: a {@link PacedStream} (outgoing media), or anything else that must run
 * once per frame on the same deadlines (a call's receive side pulls its jitter buffer).
 */
export interface Tickable {
  tick(): boolean;
  /** Ticks given up after a stall (timestamps move on); optional. */
  skip?(ticks: number): void;
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
  /** Tick period (default 20 ms). */
  readonly frameMs?: number;
  /** Ticks run at most in one wake-up after a stall; older ones are skipped (default 3). */
  readonly maxBurst?: number;
  readonly scheduler?: PacerScheduler;
  /** Gets what a stream's `onSend` threw; without it the error is thrown from the timer once every stream has had its tick. */
  readonly onError?: (error: unknown, stream: Tickable) => void;
  /** Tick lateness samples kept for the percentiles (default 3000: the last minute). */
  readonly latencyWindow?: number;
}

/** How punctual the clock has been (lateness = time a tick ran after its deadline). */
export interface PacingStats {
  readonly ticks: number;
  /** Ticks dropped after stalls longer than `maxBurst` frames. */
  readonly skippedTicks: number;
  readonly p50LatenessMs: number;
  readonly p99LatenessMs: number;
  readonly maxLatenessMs: number;
}

/** Ticks many streams ({@link Tickable}, usually `PacedStream`s) from one deadline-scheduled timer; armed only while it has streams. */
export class PacerClock {
  private readonly frameMs: number;
  private readonly maxBurst: number;
  private readonly scheduler: PacerScheduler;
  private readonly streams = new Set<Tickable>();
  private readonly lateness: Float64Array;
  private timer: unknown = null;
  private start = 0;
  /** Ticks run or skipped since `start`. */
  private done = 0;
  private ticks = 0;
  private skippedTicks = 0;
  private samples = 0;
  private maxLatenessMs = 0;

  constructor(private readonly options: PacerClockOptions = {}) {
    this.frameMs = options.frameMs ?? 20;
    this.maxBurst = Math.max(1, options.maxBurst ?? 3);
    this.scheduler = options.scheduler ?? systemScheduler;
    this.lateness = new Float64Array(Math.max(1, options.latencyWindow ?? 3000));
  }

  /** Starts ticking `stream` from the next deadline; the first stream starts the clock (its first tick is one frame later). */
  add(stream: Tickable): void {
    this.streams.add(stream);
    if (this.timer !== null) return;
    this.start = this.scheduler.now();
    this.done = 0;
    this.arm();
  }

  /** Stops ticking `stream`; without streams the timer stops too. */
  remove(stream: Tickable): void {
    this.streams.delete(stream);
    if (this.streams.size === 0) this.disarm();
  }

  /** Streams being ticked. */
  get size(): number {
    return this.streams.size;
  }

  /** Deadline of tick `n` (1-based) of the current run, on the scheduler's clock; NaN while stopped. */
  deadline(n: number): number {
    return this.timer === null ? Number.NaN : this.start + n * this.frameMs;
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
    this.streams.clear();
    this.disarm();
  }

  private arm(): void {
    const next = this.start + (this.done + 1) * this.frameMs;
    this.timer = this.scheduler.setTimer(() => this.wake(), Math.max(0, next - this.scheduler.now()));
  }

  private disarm(): void {
    if (this.timer !== null) this.scheduler.clearTimer(this.timer);
    this.timer = null;
  }

  private wake(): void {
    const fired = this.timer;
    const now = this.scheduler.now();
    let due = Math.floor((now - this.start) / this.frameMs) - this.done;
    if (due > this.maxBurst) {
      // Bursting a long backlog would flood the peers' jitter buffers: the oldest ticks are
      // given up (timestamps move on; queued audio waits and goes out late instead).
      const skipped = due - this.maxBurst;
      this.done += skipped;
      this.skippedTicks += skipped;
      for (const stream of this.streams) stream.skip?.(skipped);
      due = this.maxBurst;
    }
    const errors: Array<[unknown, Tickable]> = [];
    for (let i = 0; i < due; i++) {
      this.done++;
      this.record(now - (this.start + this.done * this.frameMs));
      // A snapshot: a stream's callback may remove streams (its own call hanging up). Every
      // send goes out before any `afterSends` work, so how long one call's receive side takes
      // never shifts another call's packet within the tick.
      const snapshot = [...this.streams];
      for (const late of [false, true]) {
        for (const stream of snapshot) {
          if ((stream.afterSends ?? false) !== late) continue;
          try {
            stream.tick();
          } catch (error) {
            errors.push([error, stream]);
          }
        }
      }
    }
    // A callback may have closed the clock, or closed and restarted it: that left its own timer.
    if (this.timer === fired) {
      if (this.streams.size > 0) this.arm();
      else this.timer = null;
    }
    for (const [error, stream] of errors) {
      if (!this.options.onError) throw error;
      this.options.onError(error, stream);
    }
  }

  private record(latenessMs: number): void {
    this.lateness[this.samples % this.lateness.length] = latenessMs;
    this.samples++;
    this.ticks++;
    if (latenessMs > this.maxLatenessMs) this.maxLatenessMs = latenessMs;
  }
}
