/**
 * A {@link PacerScheduler} that fires within a fraction of a millisecond of its deadline.
 * Node's timers count whole milliseconds and fire up to a millisecond or two after their time;
 * this one sets its timer a little early and sleeps the rest in `Atomics.wait`, which blocks
 * the thread (no busy loop) and wakes with microsecond resolution. Only for a thread that does
 * nothing else that cannot wait that long (or that lets its I/O in between slices of the wait):
 * the media thread, never the main thread.
 */
import type { PacerScheduler } from './pacer.js';

/**
 * How early the Node timer is set: enough to cover its own lateness on a busy host (calls bench,
 * 200 calls, 15 s runs: pacing p99 on the wire 3.4 ms with 1 ms, 3.3 ms with 2 ms (5.1 ms in a
 * 30 s run), 2.2–2.5 ms with 3 ms, 3.4 ms with 4 ms, where the thread sleeps through so much
 * that datagrams pile up).
 */
const EARLY_MS = 3;

/** Waits on a word nobody ever notifies: `Atomics.wait` as a precise sleep. */
const sleeper = new Int32Array(new SharedArrayBuffer(4));

/**
 * Work another thread can wake the wait for: it adds to `word` and notifies it, and {@link answer}
 * runs while the wait goes on (the media thread takes a prompt's first frames this way, so they
 * catch the deadline being waited for instead of the one after it).
 */
export interface Doorbell {
  /** Rung (changed and notified) by the other thread; shared memory. */
  readonly word: Int32Array;
  /**
   * Does the work that rang, in pieces, and stops once no more than {@link DOORBELL_MARGIN_MS}
   * are left before `deadline` (performance.now() milliseconds); what is left waits for the
   * thread's event loop after the timer, as it would without the bell.
   */
  answer(deadline: number): void;
}

/**
 * The time before a deadline below which a ring is not answered (it waits until after the
 * tick): the deadline comes first.
 */
export const DOORBELL_MARGIN_MS = 0.3;

/** Blocks the thread until `performance.now()` reaches `deadline`, answering `bell` meanwhile; a cancelled wait ends at once. */
function sleepUntil(deadline: number, bell: BellState | null, cancelled: () => boolean): void {
  for (let left = deadline - performance.now(); left > 0 && !cancelled(); left = deadline - performance.now()) {
    if (!bell) {
      Atomics.wait(sleeper, 0, 0, left);
      continue;
    }
    const rung = Atomics.load(bell.doorbell.word, 0);
    if (rung === bell.seen) {
      Atomics.wait(bell.doorbell.word, 0, rung, left);
      continue;
    }
    // A ring since the last look (also one that came before this wait began).
    bell.seen = rung;
    if (left > DOORBELL_MARGIN_MS) bell.doorbell.answer(deadline);
  }
}

/** A doorbell and the last ring seen. */
interface BellState {
  readonly doorbell: Doorbell;
  seen: number;
}

/**
 * How long one slice of the wait is while I/O is let in ({@link PreciseScheduler.letIoIn}): the
 * most a datagram waits to be read, against a turn of the event loop per slice
 * (docs/performance.md, "Bridged calls").
 */
const SLICE_MS = 0.25;

/** A {@link PacerScheduler} that can let the thread's I/O in while it waits for a deadline. */
export interface PreciseScheduler extends PacerScheduler {
  /**
   * Off, the last `EARLY_MS` before a deadline are one blocking sleep: nothing else runs on the
   * thread then. On, that wait is cut into slices of `SLICE_MS` with a turn of the event loop
   * before each, so datagrams that arrive meanwhile are read at once (packets bridged to another
   * call, which must not wait for the pacer), at the cost of a wake-up per slice and of the
   * deadline moving by as long as their handling takes. The last slice stays one sleep.
   */
  letIoIn: boolean;
}

interface PreciseTimer {
  timeout: NodeJS.Timeout | null;
  immediate: NodeJS.Immediate | null;
  /** Cleared, possibly by work answered during its own wait. */
  cancelled: boolean;
}

/**
 * A scheduler of timers set `EARLY_MS` early and finished with a precise sleep; each thread
 * makes its own. With `doorbell`, the precise sleep answers its rings.
 */
export function createPreciseScheduler(doorbell?: Doorbell): PreciseScheduler {
  const bell: BellState | null = doorbell ? { doorbell, seen: Atomics.load(doorbell.word, 0) } : null;
  const scheduler: PreciseScheduler = {
    letIoIn: false,
    now: () => performance.now(),
    setTimer: (callback, delayMs) => {
      const deadline = performance.now() + delayMs;
      const timer: PreciseTimer = { timeout: null, immediate: null, cancelled: false };
      // The last slice before the deadline is one precise sleep, and so is a timer that fired
      // late: a backlog of datagrams (after a stall) is read after the tick, not before it.
      const slicing = (): boolean => scheduler.letIoIn && deadline - performance.now() > SLICE_MS;
      const finish = (): void => {
        sleepUntil(deadline, bell, () => timer.cancelled);
        if (!timer.cancelled) callback();
      };
      const slice = (): void => {
        timer.immediate = null;
        if (!slicing()) return finish();
        Atomics.wait(sleeper, 0, 0, SLICE_MS);
        // The check phase of the next turn, after its poll has read what arrived.
        timer.immediate = setImmediate(slice);
      };
      timer.timeout = setTimeout(
        () => {
          timer.timeout = null;
          // What arrived since the timer was set is read first, in this turn's poll.
          if (slicing()) timer.immediate = setImmediate(slice);
          else finish();
        },
        Math.max(0, delayMs - EARLY_MS),
      );
      return timer;
    },
    clearTimer: (handle) => {
      const timer = handle as PreciseTimer;
      timer.cancelled = true;
      if (timer.timeout) clearTimeout(timer.timeout);
      if (timer.immediate) clearImmediate(timer.immediate);
    },
  };
  return scheduler;
}

/** A shared scheduler with I/O held back during its waits. */
export const preciseScheduler: PacerScheduler = createPreciseScheduler();
