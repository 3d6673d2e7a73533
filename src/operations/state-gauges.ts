/**
 * The gauges of what the process holds now: calls, realtime sessions and requests in flight,
 * the drain, the event loop's delay, the media thread's pacer lateness, engine queues. Each is
 * read by its collect callback when Prometheus scrapes, never on the paths it describes. Parts
 * that start after the app (the phone side) are attached when they run; until then their
 * gauges read zero.
 */
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { Counter, Gauge, type Registry } from 'prom-client';

/** The media thread's punctuality, as the telephony side reports it. */
export interface PacerLateness {
  readonly ticks: number;
  readonly p50LatenessMs: number;
  readonly p99LatenessMs: number;
  readonly maxLatenessMs: number;
}

/** A worker pool's occupation. */
export interface EngineQueue {
  readonly engine: string;
  readonly workers: number;
  readonly busy: number;
  readonly waiting: number;
  readonly busySeconds?: number;
}

/** Where the gauges read from; every field may be attached later. */
export interface StateSources {
  activeCalls?: () => number;
  realtimeSessions?: () => number;
  httpInFlight?: () => number;
  draining?: () => boolean;
  jobsRunning?: () => number;
  engineQueues?: () => readonly EngineQueue[];
  pacer?: () => Promise<PacerLateness>;
}

/** Resolution of the event-loop delay sampling: fine enough for the few-millisecond stalls that matter. */
const LOOP_RESOLUTION_MS = 10;

/** The state gauges of one registry. */
export class StateGauges {
  private readonly sources: StateSources = {};
  private readonly loop: IntervalHistogram;

  constructor(registry: Registry) {
    this.loop = monitorEventLoopDelay({ resolution: LOOP_RESOLUTION_MS });
    this.loop.enable();
    const sources = this.sources;
    const loop = this.loop;
    const simple = (name: string, help: string, read: () => number): void => {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    };
    simple('sprachrohr_calls_active', 'Calls in progress (answered or ringing), both directions', () => sources.activeCalls?.() ?? 0);
    simple('sprachrohr_realtime_sessions_active', 'Realtime WebSocket sessions open', () => sources.realtimeSessions?.() ?? 0);
    simple('sprachrohr_http_requests_in_flight', 'API requests being answered', () => sources.httpInFlight?.() ?? 0);
    simple('sprachrohr_draining', '1 while the instance drains before it stops, else 0', () => (sources.draining?.() ? 1 : 0));
    simple('sprachrohr_jobs_running', 'Asynchronous jobs running now', () => sources.jobsRunning?.() ?? 0);
    new Gauge({
      name: 'sprachrohr_event_loop_delay_seconds',
      help: 'Event-loop delay since the last scrape: p50, p99 and max',
      labelNames: ['stat'] as const,
      registers: [registry],
      collect() {
        // Nanoseconds; a histogram that saw nothing reports NaN percentiles and a huge min.
        const seconds = (ns: number): number => (Number.isFinite(ns) ? ns / 1e9 : 0);
        this.set({ stat: 'p50' }, seconds(loop.percentile(50)));
        this.set({ stat: 'p99' }, seconds(loop.percentile(99)));
        this.set({ stat: 'max' }, seconds(loop.max));
        loop.reset();
      },
    });
    new Gauge({
      name: 'sprachrohr_media_pacer_lateness_seconds',
      help: "The media thread's pacer: lateness of its wake-ups against their deadlines over its recent window (p50, p99, max)",
      labelNames: ['stat'] as const,
      registers: [registry],
      async collect() {
        const stats = await sources.pacer?.().catch(() => null);
        this.set({ stat: 'p50' }, (stats?.p50LatenessMs ?? 0) / 1000);
        this.set({ stat: 'p99' }, (stats?.p99LatenessMs ?? 0) / 1000);
        this.set({ stat: 'max' }, (stats?.maxLatenessMs ?? 0) / 1000);
      },
    });
    for (const [name, help, field] of [
      ['sprachrohr_engine_workers', 'Worker threads of an engine', 'workers'],
      ['sprachrohr_engine_busy_workers', "An engine's workers at work now", 'busy'],
      ['sprachrohr_engine_queue_depth', "Work waiting for one of an engine's workers", 'waiting'],
    ] as const) {
      new Gauge({
        name,
        help,
        labelNames: ['engine'] as const,
        registers: [registry],
        collect() {
          this.reset();
          for (const queue of sources.engineQueues?.() ?? []) this.set({ engine: queue.engine }, queue[field]);
        },
      });
    }
    new Counter({
      name: 'sprachrohr_engine_busy_seconds_total',
      help: 'Time the workers of an engine spent on work (engines that measure it: eSpeak)',
      labelNames: ['engine'] as const,
      registers: [registry],
      collect() {
        // The engine keeps the running total; the counter shows it as it stands.
        this.reset();
        for (const queue of sources.engineQueues?.() ?? []) if (queue.busySeconds !== undefined) this.inc({ engine: queue.engine }, queue.busySeconds);
      },
    });
  }

  /** Attaches sources (those given replace earlier ones). */
  attach(sources: StateSources): void {
    Object.assign(this.sources, sources);
  }

  /** Stops sampling the event loop. */
  close(): void {
    this.loop.disable();
  }
}
