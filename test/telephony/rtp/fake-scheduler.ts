/** A hand-driven clock for the pacer: time moves only when the test says so. */
import type { PacerScheduler } from '../../../src/telephony/rtp/pacer.js';

interface Timer {
  readonly at: number;
  readonly callback: () => void;
}

/** Timers fire in order as the test advances time; `lateByMs` makes each one fire that much after its time. */
export class FakeScheduler implements PacerScheduler {
  time = 0;
  lateByMs = 0;
  /** Delays the pacer asked for, in order. */
  readonly delays: number[] = [];
  private readonly timers = new Map<number, Timer>();
  private nextId = 1;

  now(): number {
    return this.time;
  }

  setTimer(callback: () => void, delayMs: number): unknown {
    const id = this.nextId++;
    this.delays.push(delayMs);
    this.timers.set(id, { at: this.time + delayMs + this.lateByMs, callback });
    return id;
  }

  clearTimer(handle: unknown): void {
    this.timers.delete(handle as number);
  }

  /** Timers armed and not yet fired. */
  get pending(): number {
    return this.timers.size;
  }

  /** Runs every timer due up to `until`, each at its own time, then sets the time to `until`. */
  advanceTo(until: number): void {
    for (;;) {
      let next: [number, Timer] | null = null;
      for (const entry of this.timers) if (entry[1].at <= until && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.timers.delete(next[0]);
      this.time = Math.max(this.time, next[1].at);
      next[1].callback();
    }
    this.time = until;
  }

  /** The event loop is blocked: time passes and no timer runs. */
  stall(ms: number): void {
    this.time += ms;
  }
}
