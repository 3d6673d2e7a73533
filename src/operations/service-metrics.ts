/**
 * The process's Prometheus metrics, every name prefixed `sprachrohr_`, in a registry of its own
 * (not prom-client's global one), so that several apps in one process keep apart. What happens
 * (a request answered, a call ended, a turn spoken) is counted where it happens: counters and
 * histograms cost a few additions, nothing on a hot path waits. What is (calls running, queues,
 * the pacer's punctuality) is read only when scraped, through the gauges' collect callbacks in
 * `state-gauges.ts`.
 */
import { Counter, Histogram, Registry } from 'prom-client';
import { StateGauges } from './state-gauges.js';

/** Outcomes a job is counted in. */
export type JobState = 'queued' | 'running' | 'succeeded' | 'failed';

/** Bounds (seconds) of the latencies of a call's turn: targets are tens of milliseconds. */
const TURN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];
/** Bounds (seconds) of time to first audio: the interface expects about half a second. */
const FIRST_AUDIO_BUCKETS = [0.05, 0.1, 0.25, 0.4, 0.5, 0.6, 0.75, 1, 1.5, 2.5, 5];
/** Bounds (seconds) of recognition lag: the interface expects 0.07–0.15 s. */
const RECOGNITION_BUCKETS = [0.025, 0.05, 0.075, 0.1, 0.15, 0.25, 0.5, 1, 2.5];

/** A counter in `registry`. */
function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: readonly L[] = []): Counter<L> {
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/** A histogram of seconds in `registry`. */
function seconds<L extends string>(registry: Registry, name: string, help: string, buckets: number[], labelNames: readonly L[] = []): Histogram<L> {
  return new Histogram({ name, help, labelNames, buckets, registers: [registry] });
}

/** The metrics that are counted as things happen. */
export class ServiceMetrics {
  readonly registry = new Registry();
  /** The gauges read when scraped; their sources are attached as the parts start. */
  readonly state = new StateGauges(this.registry);
  /** Answered HTTP requests by method, route pattern (not the raw path: bounded) and status. */
  readonly httpRequests = counter(this.registry, 'sprachrohr_http_requests_total', 'HTTP requests answered, by method, route pattern and status', [
    'method',
    'route',
    'status',
  ]);
  /** 429 answers, by the reason a client can act on. */
  readonly tooManyRequests = counter(
    this.registry,
    'sprachrohr_http_too_many_requests_total',
    '429 answers by reason: rate_limited, key_capacity, service_capacity, host_load, plan_limit_reached, entitlement_exhausted',
    ['reason'],
  );
  readonly calls = counter(
    this.registry,
    'sprachrohr_calls_total',
    'Calls ended, by direction (inbound, outbound) and outcome (bye: the other side hung up; hangup: we did; cancel, rejected, shutdown, ack-timeout)',
    ['direction', 'outcome'],
  );
  readonly turns = counter(this.registry, 'sprachrohr_call_turns_total', "Turns of calls: replies spoken after the caller's speech");
  readonly turnLatency = seconds(
    this.registry,
    'sprachrohr_call_turn_latency_seconds',
    "End of the caller's speech to the first packet of the reply",
    TURN_BUCKETS,
  );
  readonly firstAudio = seconds(
    this.registry,
    'sprachrohr_tts_first_audio_seconds',
    'Realtime synthesis: first sentence of a session handed to synthesis to its first audio frame sent',
    FIRST_AUDIO_BUCKETS,
    ['transport'],
  );
  readonly recognitionLatency = seconds(
    this.registry,
    'sprachrohr_stt_recognition_latency_seconds',
    'Realtime recognition: arrival of the audio a transcript covers (a final: the end of its utterance) to the transcript sent, by result (partial, final)',
    RECOGNITION_BUCKETS,
    ['result'],
  );
  readonly jobs = counter(this.registry, 'sprachrohr_jobs_total', 'Asynchronous jobs by state reached: queued, running, succeeded, failed', ['state']);

  /** Counts a call that ended. */
  callEnded(direction: 'inbound' | 'outbound', outcome: string): void {
    this.calls.inc({ direction, outcome });
  }

  /** Counts a call's turn and its latency. */
  turn(latencyMs: number): void {
    this.turns.inc();
    this.turnLatency.observe(latencyMs / 1000);
  }

  /** Counts a job reaching a state. */
  jobState(state: JobState): void {
    this.jobs.inc({ state });
  }

  /** Stops what samples in the background (the event-loop monitor). */
  close(): void {
    this.state.close();
  }

  /** The text exposition of every metric. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  /** The exposition's content type (Prometheus text format 0.0.4). */
  get contentType(): string {
    return this.registry.contentType;
  }
}
