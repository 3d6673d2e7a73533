/**
 * The main thread's side of the media thread (`media-worker.ts`): starts it, opens a
 * {@link MediaChannel} per call (ports bound there), routes the thread's batched events to the
 * channels, and reads the pacer's punctuality. Should the thread die, its calls lose their media
 * (they end) and the next call starts a fresh thread.
 */
import type { Worker } from 'node:worker_threads';
import type { Logger } from 'pino';
import { startWorkerThread } from '../../../engine/worker-thread.js';
import type { PacingStats } from '../rtp/pacer.js';
import { framesOf } from './audio-batch.js';
import { MediaChannel } from './media-channel.js';
import type { MediaCommand, MediaEvent } from './media-protocol.js';
import type { MediaWorkerData } from './media-worker.js';
import { MessageBatch } from './message-batch.js';
import { RtpPortsExhausted } from './rtp-port-pool.js';

/**
 * The media thread's young generation, smaller than V8's default. Every received datagram is a
 * buffer of its own (10,000 a second at 200 calls), and each scavenge frees all that died since
 * the one before, in one pause under `--single-threaded-gc`: smaller and more frequent pauses
 * keep the pacer on time (calls bench, 10 s runs with a GC observer added to this thread for the
 * purpose: its latest tick 9.3 ms late with the default size, 1.6 ms with 8 MB). Smaller is
 * worse: with 4 MB, objects that live a few hundred milliseconds outlast two scavenges again and
 * the major collections come back (15 s runs: 8 of them, ticks up to 14–17 ms late).
 */
const YOUNG_GENERATION_MB = 8;

/** A started media thread and what waits on it. */
interface Running {
  readonly worker: Worker;
  readonly out: MessageBatch<MediaCommand>;
  readonly ready: Promise<void>;
  readonly channels: Map<number, MediaChannel>;
  readonly opening: Map<number, { resolve: (channel: MediaChannel) => void; reject: (error: Error) => void }>;
  readonly pacing: Map<number, (stats: PacingStats) => void>;
  /** Called when the last open channel has been closed in the thread (`close` waits for it). */
  whenEmpty: (() => void) | null;
}

/** Owns the media thread of one telephony service. */
export class MediaThread {
  private running: Running | null = null;
  private nextId = 1;
  private closing = false;

  /** `rtpPorts`: the range calls' RTP/RTCP pairs are bound in, on `host`. */
  constructor(private readonly options: Omit<MediaWorkerData, 'doorbell'> & { readonly logger: Logger }) {}

  /** Starts the thread (codecs and detectors loaded there) unless it runs already. */
  async start(): Promise<void> {
    await this.thread().ready;
  }

  /**
   * Binds an RTP/RTCP port pair for a call in the media thread.
   * @throws RtpPortsExhausted when every pair of the range is taken
   */
  async open(): Promise<MediaChannel> {
    const running = this.thread();
    await running.ready;
    const id = this.nextId++;
    return new Promise<MediaChannel>((resolve, reject) => {
      running.opening.set(id, { resolve, reject });
      running.out.send({ op: 'open', id });
    });
  }

  /** The pacer's punctuality since the last reset; `reset` starts it afresh (a benchmark's window begins). */
  async pacingStats(reset = false): Promise<PacingStats> {
    const running = this.thread();
    await running.ready;
    const request = this.nextId++;
    return new Promise<PacingStats>((resolve) => {
      running.pacing.set(request, resolve);
      running.out.send({ op: 'pacing', request, reset });
    });
  }

  /** Stops the thread once the channels closed before have been closed there (their quality reported), or after a second. */
  async close(): Promise<void> {
    this.closing = true;
    const running = this.running;
    this.running = null;
    if (!running) return;
    running.out.flush();
    if (running.channels.size > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        running.whenEmpty = resolve;
        timer = setTimeout(resolve, 1000);
      });
      clearTimeout(timer);
    }
    await running.worker.terminate();
  }

  private thread(): Running {
    if (this.running) return this.running;
    this.closing = false;
    const { host, rtpPorts } = this.options;
    const doorbell = new Int32Array(new SharedArrayBuffer(4));
    const worker = startWorkerThread(import.meta.url, 'media-worker', { host, rtpPorts, doorbell } satisfies MediaWorkerData, {
      maxYoungGenerationSizeMb: YOUNG_GENERATION_MB,
    });
    let ready!: () => void;
    let failed!: (error: Error) => void;
    const running: Running = {
      worker,
      out: new MessageBatch<MediaCommand>(worker, () => {
        Atomics.add(doorbell, 0, 1);
        Atomics.notify(doorbell, 0);
      }),
      ready: new Promise<void>((resolve, reject) => {
        ready = resolve;
        failed = reject;
      }),
      channels: new Map(),
      opening: new Map(),
      pacing: new Map(),
      whenEmpty: null,
    };
    // Whoever waits for the thread hears of a failed start; nobody waiting is no crash.
    running.ready.catch(() => undefined);
    worker.on('message', (batch: MediaEvent[]) => {
      for (const event of batch) {
        if (event.ev === 'ready') {
          if (event.priorityRefused)
            this.options.logger.warn(
              { reason: event.priorityRefused },
              'the media thread runs at the ordinary priority (raising it needs root or CAP_SYS_NICE; docker: cap_add SYS_NICE): under load its packets may leave late',
            );
          else this.options.logger.info({ nice: event.nice }, 'media thread started');
          ready();
        } else this.dispatch(running, event);
      }
    });
    const lost = (error: Error): void => {
      failed(error);
      if (this.running === running) this.running = null;
      if (!this.closing) this.options.logger.error({ err: error }, 'the media thread stopped; its calls lose their media');
      for (const pending of running.opening.values()) pending.reject(error);
      running.opening.clear();
      for (const channel of running.channels.values()) channel.lost(error);
      running.channels.clear();
    };
    worker.on('error', lost);
    worker.on('exit', (code) => lost(new Error(`the media thread exited with code ${code}`)));
    this.running = running;
    return running;
  }

  private dispatch(running: Running, event: Exclude<MediaEvent, { ev: 'ready' }>): void {
    switch (event.ev) {
      case 'opened': {
        const pending = running.opening.get(event.id);
        running.opening.delete(event.id);
        const channel = new MediaChannel(event.id, event.port, running.out, () => {
          running.channels.delete(event.id);
          if (running.channels.size === 0) running.whenEmpty?.();
        });
        running.channels.set(event.id, channel);
        pending?.resolve(channel);
        return;
      }
      case 'open-failed': {
        const pending = running.opening.get(event.id);
        running.opening.delete(event.id);
        pending?.reject(event.exhausted ? new RtpPortsExhausted(this.options.rtpPorts) : new Error(event.message));
        return;
      }
      case 'pacing':
        running.pacing.get(event.request)?.(event.stats);
        running.pacing.delete(event.request);
        return;
      case 'audio':
        for (const [id, pcm] of framesOf(event.frames)) running.channels.get(id)?.receive({ ev: 'audio', pcm });
        return;
      case 'error':
        this.options.logger.error({ callMedia: event.id, err: { message: event.message, stack: event.stack } }, 'media thread error');
        return;
      default:
        running.channels.get(event.id)?.receive(event);
    }
  }
}
