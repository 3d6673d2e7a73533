/**
 * The main-thread side of a native recogniser: worker threads that each own decoders
 * (`worker-host.ts`), and the utterance decoders that streams drive through them.
 */
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../worker-thread.js';
import type { EngineLoad, Hypothesis, SttStreamOptions } from '../types.js';
import { RecognitionCapacityError } from './capacity.js';
import type { UtteranceDecoder } from './endpointed-stream.js';
import type { WorkerData, WorkerReply, WorkerRequest } from './worker-protocol.js';

/** A worker module: `name` (no extension) beside the module at `base` (its `import.meta.url`). */
export interface WorkerScript {
  readonly base: string;
  readonly name: string;
}

/** One worker thread and the streams it decodes. */
class DecoderWorker {
  readonly pending = new Map<number, { resolve: (hypothesis: Hypothesis | null) => void; reject: (error: Error) => void; stream: number }>();
  readonly streamFailures = new Map<number, (error: Error) => void>();
  openStreams = 0;
  private failure: Error | null = null;

  private constructor(readonly worker: Worker) {
    worker.on('message', (reply: WorkerReply) => this.receive(reply));
    worker.on('error', (error) => this.failAll(error));
    worker.on('exit', (code) => this.failAll(new Error(`the recogniser's worker stopped (exit ${code})`)));
  }

  /** @throws Error with the worker's reason when it cannot load its engine. */
  static start(script: WorkerScript, data: WorkerData<unknown>): Promise<DecoderWorker> {
    const worker = startWorkerThread(script.base, script.name, data);
    return new Promise((resolve, reject) => {
      const stop = (): void => {
        worker.off('message', onReply);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onReply = (reply: WorkerReply): void => {
        if (reply.type === 'ready') {
          stop();
          resolve(new DecoderWorker(worker));
        } else if (reply.type === 'failed') {
          stop();
          void worker.terminate();
          reject(new Error(reply.message));
        }
      };
      const onError = (error: Error): void => {
        stop();
        reject(error);
      };
      const onExit = (code: number): void => {
        stop();
        reject(new Error(`the recogniser's worker stopped while loading (exit ${code})`));
      };
      worker.on('message', onReply);
      worker.on('error', onError);
      worker.on('exit', onExit);
    });
  }

  get failed(): Error | null {
    return this.failure;
  }

  post(request: WorkerRequest, transfer: ArrayBuffer[] = []): void {
    if (!this.failure) this.worker.postMessage(request, transfer);
  }

  private receive(reply: WorkerReply): void {
    if (reply.type === 'result') {
      const waiting = this.pending.get(reply.request);
      this.pending.delete(reply.request);
      waiting?.resolve(reply.hypothesis);
    } else if (reply.type === 'error') {
      const error = new Error(`recognition failed: ${reply.message}`);
      for (const [request, waiting] of this.pending) {
        if (waiting.stream !== reply.stream) continue;
        this.pending.delete(request);
        waiting.reject(error);
      }
      this.streamFailures.get(reply.stream)?.(error);
    }
  }

  private failAll(error: Error): void {
    if (this.failure) return;
    this.failure = error;
    for (const waiting of this.pending.values()) waiting.reject(error);
    this.pending.clear();
    for (const fail of this.streamFailures.values()) fail(error);
  }
}

/** A stream's side of a worker: the utterance decoder the endpointed stream drives. */
class WorkerUtteranceDecoder implements UtteranceDecoder {
  private closed = false;
  private failure: Error | null = null;

  constructor(
    private readonly worker: DecoderWorker,
    private readonly stream: number,
    private readonly nextRequest: () => number,
  ) {
    worker.streamFailures.set(stream, (error) => (this.failure = error));
  }

  start(): void {
    this.worker.post({ type: 'start', stream: this.stream });
  }

  write(pcm: Int16Array): void {
    // A copy goes across, so the caller may reuse its buffer.
    const copy = pcm.slice();
    this.worker.post({ type: 'audio', stream: this.stream, pcm: copy }, [copy.buffer as ArrayBuffer]);
  }

  partial(): Promise<Hypothesis | null> {
    return this.ask('partial');
  }

  async finish(): Promise<Hypothesis> {
    return (await this.ask('finish')) ?? { text: '', words: [] };
  }

  private ask(type: 'partial' | 'finish'): Promise<Hypothesis | null> {
    const failure = this.failure ?? this.worker.failed;
    if (failure) return Promise.reject(failure);
    const request = this.nextRequest();
    return new Promise((resolve, reject) => {
      this.worker.pending.set(request, { resolve, reject, stream: this.stream });
      this.worker.post({ type, stream: this.stream, request });
    });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.worker.post({ type: 'close', stream: this.stream });
    this.worker.streamFailures.delete(this.stream);
    this.worker.openStreams -= 1;
    for (const [request, waiting] of this.worker.pending) {
      if (waiting.stream !== this.stream) continue;
      this.worker.pending.delete(request);
      waiting.reject(new DOMException('the recognition stream was closed', 'AbortError'));
    }
  }
}

/** How to start a pool. */
export interface DecoderPoolOptions<EngineSettings> {
  /** Engine id, for capacity errors. */
  readonly engineId: string;
  /** The worker module (one that calls `serveDecoders`). */
  readonly script: WorkerScript;
  readonly engine: EngineSettings;
  readonly workers: number;
  /** Streams one worker decodes at once before new ones are refused. */
  readonly maxStreamsPerWorker: number;
  /** Decoders a worker keeps loaded while no stream uses them. */
  readonly idleDecoders: number;
}

/** Worker threads running one native recogniser, with a ceiling on streams per worker. */
export class DecoderPool {
  private nextStream = 1;
  private nextRequestId = 1;

  private constructor(
    private readonly workers: DecoderWorker[],
    private readonly engineId: string,
    private readonly maxStreamsPerWorker: number,
  ) {}

  /**
   * Starts the workers; each has loaded its engine and one decoder before this resolves.
   * @throws Error with the engine's reason when a worker cannot load it (the others stop).
   */
  static async start<EngineSettings>(options: DecoderPoolOptions<EngineSettings>): Promise<DecoderPool> {
    const data: WorkerData<EngineSettings> = { idleDecoders: options.idleDecoders, engine: options.engine };
    const started = await Promise.allSettled(Array.from({ length: Math.max(1, options.workers) }, () => DecoderWorker.start(options.script, data)));
    const workers = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
    const failure = started.find((result) => result.status === 'rejected');
    if (failure) {
      await Promise.all(workers.map((worker) => worker.worker.terminate()));
      throw failure.reason as Error;
    }
    return new DecoderPool(workers, options.engineId, options.maxStreamsPerWorker);
  }

  /**
   * A decoder on the least busy healthy worker.
   * @throws RecognitionCapacityError when every worker decodes its most streams already.
   */
  decoderFor(options: SttStreamOptions): UtteranceDecoder {
    const healthy = this.workers.filter((worker) => !worker.failed);
    if (healthy.length === 0) throw new Error(`the ${this.engineId} recogniser has no running worker`);
    const worker = healthy.reduce((least, candidate) => (candidate.openStreams < least.openStreams ? candidate : least));
    if (worker.openStreams >= this.maxStreamsPerWorker) throw new RecognitionCapacityError(this.engineId, this.maxStreamsPerWorker * healthy.length);
    const stream = this.nextStream++;
    worker.openStreams += 1;
    worker.post({ type: 'open', stream, vocabulary: options.vocabulary });
    return new WorkerUtteranceDecoder(worker, stream, () => this.nextRequestId++);
  }

  /** Healthy workers and the streams they decode (streams beyond the ceiling are refused, so none wait). */
  load(): EngineLoad {
    const healthy = this.workers.filter((worker) => !worker.failed);
    return { workers: healthy.length, busy: healthy.reduce((sum, worker) => sum + worker.openStreams, 0), waiting: 0 };
  }

  /** Stops the workers; open streams fail. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.worker.terminate()));
  }
}
