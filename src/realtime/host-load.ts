import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** How often the window turns over. */
const WINDOW_MS = 2000;

/**
 * Whether the host is too loaded to take another realtime session (`host_load`): measured as
 * the event loop's delay, which is what every open session's frames suffer from first.
 */
export class HostLoad {
  private readonly histogram: IntervalHistogram;
  private readonly timer: NodeJS.Timeout;
  private lastP99Ms = 0;

  /** @param overloadedP99Ms event-loop delay (p99 over the last window) above which new sessions are refused */
  constructor(private readonly overloadedP99Ms: number) {
    this.histogram = monitorEventLoopDelay({ resolution: 10 });
    this.histogram.enable();
    this.timer = setInterval(() => {
      this.lastP99Ms = this.histogram.percentile(99) / 1e6;
      this.histogram.reset();
    }, WINDOW_MS);
    this.timer.unref();
  }

  get overloaded(): boolean {
    return this.lastP99Ms > this.overloadedP99Ms;
  }

  close(): void {
    clearInterval(this.timer);
    this.histogram.disable();
  }
}
