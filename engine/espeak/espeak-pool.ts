import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../worker-thread.js';
import { AsyncQueue } from '../async-queue.js';
import type { EngineLoad } from '../types.js';
import type { SynthesisJob, WarmJob, WorkerMessage } from './espeak-protocol.js';

/** A job as the pool's caller describes it (the pool adds id and abort flag). */
export type JobRequest = Omit<SynthesisJob, 'type' | 'id' | 'abort'>;

/** What a running job yields: chunks, then one `done`. */
export type JobMessage = Extract<WorkerMessage, { type: 'chunk' } | { type: 'done' }>;

interface Slot {
  worker: Worker;
  /** Receives the messages of the job the worker runs now. */
  listener: ((message: WorkerMessage) => void) | null;
  fail: ((error: Error) => void) | null;
}

/** A synthesis whose audio is needed within this is foreground work (a request, a stream, a call). */
const FOREGROUND_HORIZON_MS = 10_000;
/** Nice value of the background worker: below every ordinary thread. */
const BACKGROUND_NICE = 10;

/**
 * A fixed pool of eSpeak worker threads. Jobs wait in order for a free worker; a job's audio
 * streams back chunk by chunk; aborting a job stops it between two chunks. Background work
 * (audio needed later than {@link FOREGROUND_HORIZON_MS}: a batch job) never takes one of these
 * workers: it runs on a worker of its own at a low priority, started when first needed, so the
 * last worker is never taken from live requests.
 */
export class EspeakPool {
  /** Foreground syntheses running or waiting. */
  private foreground = 0;
  private foregroundEndedAt = Number.NEGATIVE_INFINITY;
  private readonly slots: Slot[] = [];
  private readonly free: Slot[] = [];
  /** Jobs waiting for a worker, served earliest need first (arrival order on a tie). */
  private readonly waiters: Array<{ resolve: (slot: Slot) => void; neededAtMs: number; order: number }> = [];
  private waiterOrder = 0;
  private nextId = 1;
  private closed = false;
  /** Milliseconds workers have held jobs, finished ones only. */
  private busyMs = 0;
  /** The background worker's pool, once started. */
  private background: Promise<EspeakPool> | null = null;
  /** The same, once it runs: what {@link load} reads without waiting. */
  private backgroundPool: EspeakPool | null = null;

  private constructor(
    private readonly size: number,
    private readonly libraryPath: string,
    private readonly nice?: number,
  ) {}

  /**
   * Starts `size` workers and waits until each has loaded eSpeak.
   * @param libraryPath libespeak-ng's file (see {@link findEspeakLibrary}); each worker loads its own copy
   */
  static async start(size: number, libraryPath: string, nice?: number): Promise<EspeakPool> {
    const pool = new EspeakPool(size, libraryPath, nice);
    await Promise.all(Array.from({ length: size }, () => pool.spawn()));
    return pool;
  }

  /** Number of worker threads. */
  get workers(): number {
    return this.size;
  }

  private spawn(): Promise<void> {
    const worker = startWorkerThread(import.meta.url, 'espeak-worker', {
      libraryPath: this.libraryPath,
      ...(this.nice !== undefined ? { nice: this.nice } : {}),
    });
    const slot: Slot = { worker, listener: null, fail: null };
    return new Promise((resolve, reject) => {
      const onReady = (message: WorkerMessage) => {
        if (message.type !== 'ready') return;
        worker.off('message', onReady);
        worker.on('message', (m: WorkerMessage) => slot.listener?.(m));
        this.slots.push(slot);
        this.release(slot);
        resolve();
      };
      worker.on('message', onReady);
      worker.once('error', (error) => {
        slot.fail?.(error);
        reject(error);
      });
      worker.once('exit', (code) => {
        if (this.closed) return;
        // A worker that dies takes its job with it; a fresh one takes its place.
        slot.fail?.(new Error(`an eSpeak worker exited with code ${code}`));
        this.slots.splice(this.slots.indexOf(slot), 1);
        const index = this.free.indexOf(slot);
        if (index >= 0) this.free.splice(index, 1);
        void this.spawn().catch(() => undefined);
      });
    });
  }

  private acquire(neededAtMs: number): Promise<Slot> {
    if (this.closed) return Promise.reject(new Error('the eSpeak pool is closed'));
    const slot = this.free.pop();
    if (slot) return Promise.resolve(slot);
    return new Promise((resolve) => this.waiters.push({ resolve, neededAtMs, order: this.waiterOrder++ }));
  }

  private release(slot: Slot): void {
    slot.listener = null;
    slot.fail = null;
    if (this.waiters.length === 0) {
      this.free.push(slot);
      return;
    }
    let next = 0;
    for (let i = 1; i < this.waiters.length; i++) {
      const candidate = this.waiters[i]!;
      const best = this.waiters[next]!;
      if (candidate.neededAtMs < best.neededAtMs || (candidate.neededAtMs === best.neededAtMs && candidate.order < best.order)) next = i;
    }
    this.waiters.splice(next, 1)[0]!.resolve(slot);
  }

  /**
   * Runs one synthesis; iterate the result for its chunks. Aborting `signal` stops it. While
   * every worker is busy, the job with the earliest `neededAtMs` gets the next free one.
   */
  async *synthesize(request: JobRequest, signal: AbortSignal, neededAtMs = performance.now()): AsyncGenerator<JobMessage> {
    const foreground = neededAtMs < performance.now() + FOREGROUND_HORIZON_MS;
    if (!foreground && this.nice === undefined) {
      this.background ??= EspeakPool.start(1, this.libraryPath, BACKGROUND_NICE).then((pool) => (this.backgroundPool = pool));
      yield* (await this.background).synthesize(request, signal, performance.now());
      return;
    }
    const abort = new SharedArrayBuffer(4);
    if (foreground) this.foreground++;
    try {
      yield* this.run({ type: 'synthesize', id: this.nextId++, abort, ...request }, signal, abort, neededAtMs);
    } finally {
      if (foreground) {
        this.foreground--;
        this.foregroundEndedAt = performance.now();
      }
    }
  }

  /**
   * Milliseconds since the last synthesis needed soon (not a background job's) ended; 0 while
   * one runs or waits for a worker. Background work starts its next piece only after a quiet
   * stretch, so that it does not sit in a worker (or on the main thread) when a caller asks.
   */
  foregroundIdleMs(): number {
    return this.foreground > 0 ? 0 : performance.now() - this.foregroundEndedAt;
  }

  /** Workers at work, jobs waiting for one, and the time workers spent on jobs (the background worker's included). */
  load(): EngineLoad {
    const background = this.backgroundPool?.load();
    return {
      workers: this.slots.length + (background?.workers ?? 0),
      busy: this.slots.length - this.free.length + (background?.busy ?? 0),
      waiting: this.waiters.length + (background?.waiting ?? 0),
      busySeconds: (this.busyMs + (background?.busySeconds ?? 0) * 1000) / 1000,
    };
  }

  /** Loads the given voices in every worker. */
  async warm(voices: readonly string[]): Promise<void> {
    const never = new AbortController().signal;
    await Promise.all(
      this.slots.map(async () => {
        for await (const message of this.run({ type: 'warm', id: this.nextId++, voices }, never, null)) void message;
      }),
    );
  }

  private async *run(
    job: SynthesisJob | WarmJob,
    signal: AbortSignal,
    abort: SharedArrayBuffer | null,
    neededAtMs = performance.now(),
  ): AsyncGenerator<JobMessage> {
    signal.throwIfAborted();
    const slot = await this.acquire(neededAtMs);
    const heldSince = performance.now();
    const queue = new AsyncQueue<JobMessage>();
    slot.listener = (message) => {
      if (message.type === 'error') queue.fail(new Error(message.message));
      else if (message.type === 'chunk' || message.type === 'done') queue.push(message);
    };
    slot.fail = (error) => queue.fail(error);
    const stop = () => {
      if (abort) Atomics.store(new Int32Array(abort), 0, 1);
    };
    signal.addEventListener('abort', stop, { once: true });
    let finished = false;
    try {
      slot.worker.postMessage(job);
      for (;;) {
        const value = await queue.next();
        if (value.type === 'done') {
          finished = true;
          yield value;
          return;
        }
        yield value;
      }
    } finally {
      signal.removeEventListener('abort', stop);
      if (!finished) {
        // The consumer left early: stop the job and drain it before the worker takes another.
        stop();
        try {
          for (;;) {
            const value = await queue.next();
            if (value.type === 'done') break;
          }
        } catch {
          // The worker failed or was replaced; nothing left to drain.
        }
      }
      this.busyMs += performance.now() - heldSince;
      if (this.slots.includes(slot)) this.release(slot);
    }
  }

  /** Stops every worker. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.background) await (await this.background.catch(() => null))?.close();
    await Promise.all(this.slots.map((slot) => slot.worker.terminate()));
    this.slots.length = 0;
    this.free.length = 0;
  }
}
