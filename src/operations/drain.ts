/**
 * The drain of an instance that is about to stop: from its start, new work (API requests,
 * realtime sessions, calls placed or received, SIP OPTIONS) is refused with 503 so that load
 * balancers and SIP proxies send it elsewhere, while the work already running finishes, up to
 * a deadline. One drain per process; it is never taken back (a drained instance exits).
 */
import { ApiError, type ErrorFamily } from '../api/errors.js';

/** Seconds a refused client or SIP peer is asked to wait: long enough to try another instance first. */
export const DRAIN_RETRY_AFTER_S = 5;

/** How often the wait for running work looks again: cheap counters, so a short pause costs nothing. */
const POLL_MS = 100;

/** Work still running, by kind (calls, realtime sessions, API requests). */
export type RunningWork = Readonly<Record<string, number>>;

/** Why and when the drain began. */
export interface DrainStart {
  /** `SIGTERM`, `SIGINT` or `operator` (`POST /v1/admin/drain`). */
  readonly reason: string;
  /** `Date.now()` at the start. */
  readonly atMs: number;
}

/** The drain state of one process, shared by the HTTP, realtime and SIP sides. */
export class Drain {
  private begun: DrainStart | null = null;
  private readonly listeners: Array<(start: DrainStart) => void> = [];
  private stopWaiting: (() => void) | null = null;
  private cutShort = false;
  private requests = 0;

  /** Whether new work is refused. */
  get active(): boolean {
    return this.begun !== null;
  }

  /** The start, or null before. */
  get started(): DrainStart | null {
    return this.begun;
  }

  /**
   * Starts the drain (once; later calls change nothing).
   * @returns whether this call started it
   */
  start(reason: string): boolean {
    if (this.begun) return false;
    const begun: DrainStart = { reason, atMs: Date.now() };
    this.begun = begun;
    for (const listener of this.listeners.splice(0)) listener(begun);
    return true;
  }

  /** Calls `listener` when the drain starts (at once when it has). */
  onStart(listener: (start: DrainStart) => void): void {
    if (this.begun) listener(this.begun);
    else this.listeners.push(listener);
  }

  /**
   * The refusal of new API work while draining.
   * @throws ApiError `*.unavailable` (503, `Retry-After`) when draining
   */
  refuse(family: ErrorFamily, what: string): void {
    if (!this.begun) return;
    throw ApiError.of(family, 'unavailable', `this instance is shutting down and takes no new ${what}; retry on another instance or in a few seconds`, {
      retryAfterSeconds: DRAIN_RETRY_AFTER_S,
    });
  }

  /** API requests being answered (those {@link admitRequest} let in). */
  get requestsInFlight(): number {
    return this.requests;
  }

  /**
   * Lets an API request in and counts it until the returned function is called (once).
   * @throws ApiError `*.unavailable` (503, `Retry-After`) when draining
   */
  admitRequest(family: ErrorFamily): () => void {
    this.refuse(family, 'requests');
    this.requests++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.requests--;
    };
  }

  /**
   * Waits until `running()` reports nothing left, or `deadlineMs` has passed since the start,
   * or {@link endWait} is called.
   * @returns what was still running when the wait ended (empty when everything finished)
   */
  async waitForIdle(running: () => RunningWork, deadlineMs: number, onProgress?: (left: RunningWork) => void): Promise<RunningWork> {
    const endAt = (this.begun?.atMs ?? Date.now()) + deadlineMs;
    let lastReport = Date.now();
    for (;;) {
      const left = stillRunning(running());
      if (Object.keys(left).length === 0 || Date.now() >= endAt || this.cutShort) return left;
      if (onProgress && Date.now() - lastReport >= 5000) {
        lastReport = Date.now();
        onProgress(left);
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, Math.min(POLL_MS, Math.max(0, endAt - Date.now())));
        this.stopWaiting = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      this.stopWaiting = null;
    }
  }

  /** Ends a {@link waitForIdle} now (a second signal: the operator does not want to wait). */
  endWait(): void {
    this.cutShort = true;
    this.stopWaiting?.();
  }
}

function stillRunning(work: RunningWork): RunningWork {
  return Object.fromEntries(Object.entries(work).filter(([, count]) => count > 0));
}
