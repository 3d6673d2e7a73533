/**
 * The timers of one transaction or call (retransmissions, timeouts), cleared together. None
 * keeps the process alive: shutdown ends them through their owner.
 */
export class TimerSet {
  private readonly timers: NodeJS.Timeout[] = [];

  /** Runs `run` after `ms`. */
  after(ms: number, run: () => void): void {
    const timer = setTimeout(run, ms);
    timer.unref();
    this.timers.push(timer);
  }

  /** Clears every timer set so far. */
  clear(): void {
    for (const timer of this.timers.splice(0)) clearTimeout(timer);
  }
}
