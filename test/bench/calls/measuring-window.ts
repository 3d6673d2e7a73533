/**
 * The measured part of a load run: it opens when every call's audio has reached its receiver
 * and lasts `seconds`. At its start the gateway's pacer statistics start afresh (SIGUSR2), the
 * measuring process's event-loop delay is watched and the usage sampled; at its end the usage
 * is sampled again and the pacer's statistics read.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { PacingStats } from '../../../src/telephony/rtp/pacer.js';
import { sleep } from './common.js';
import { pacerStats, type Gateway } from './gateway-process.js';
import type { CallReceivers, CallTrace } from './rtp-receiver.js';
import type { UsageSampler } from './usage.js';

/** One run's window, armed on the receivers before the calls are placed. */
export class MeasuringWindow {
  private readonly loopDelay = monitorEventLoopDelay({ resolution: 1 });
  private startedAt = Number.NaN;
  private endedAt = Number.NaN;
  private done: Promise<void> = Promise.resolve();
  /** The gateway's pacer statistics over the window, once it has ended. */
  pacer: PacingStats | null = null;

  constructor(
    gateway: Gateway,
    receivers: CallReceivers,
    usage: UsageSampler,
    private readonly seconds: number,
  ) {
    receivers.onAllStarted = () => {
      this.startedAt = performance.now();
      this.loopDelay.enable();
      gateway.server.child.kill('SIGUSR2'); // starts the pacer's statistics afresh
      void usage.sample();
      this.done = sleep(this.seconds * 1000).then(async () => {
        this.endedAt = performance.now();
        this.loopDelay.disable();
        await usage.sample();
        this.pacer = await pacerStats(gateway);
      });
    };
  }

  /** Resolves once the window has ended (at once when it never opened). */
  async ended(): Promise<void> {
    await this.done;
  }

  /**
   * The window's bounds against the traces of the calls that had audio: all calls up, at most
   * `seconds` long, ended before the first call's last packet. When not every call's audio
   * arrived, it opens at the latest first packet.
   */
  bounds(withAudio: readonly CallTrace[]): { start: number; end: number } {
    const start = Number.isNaN(this.startedAt) ? Math.max(...withAudio.map((trace) => trace.firstAt)) : this.startedAt;
    const end = Math.min(Number.isNaN(this.endedAt) ? start + this.seconds * 1000 : this.endedAt, ...withAudio.map((trace) => trace.lastAt));
    return { start, end };
  }

  /** The measuring process's event-loop delay over the window (NaN when it never opened). */
  receiverLoopDelayMs(): { p99: number; max: number } {
    const seen = this.loopDelay.count > 0;
    return { p99: seen ? this.loopDelay.percentile(99) / 1e6 : Number.NaN, max: seen ? this.loopDelay.max / 1e6 : Number.NaN };
  }
}
