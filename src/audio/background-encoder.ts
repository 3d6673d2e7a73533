import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../../engine/worker-thread.js';
import type { FormatId } from '../catalog/formats.js';
import type { EncodeResult, EncoderCommand, PcmRun } from './encoder-protocol.js';

export type { PcmRun } from './encoder-protocol.js';

/** A whole synthesis, encoded. */
export interface EncodedAudio {
  readonly audio: Buffer;
  /** Samples at the output rate (the audio's exact length). */
  readonly samples: number;
}

interface Pending {
  readonly worker: Worker;
  resolve(result: EncodedAudio): void;
  reject(error: Error): void;
}

/** One stream on the background encoder's thread: audio goes in as it comes, bytes come out at the end. */
export interface BackgroundStream {
  /** Adds audio (in order). The runs' buffers are handed to the thread: do not use them afterwards. */
  write(runs: readonly PcmRun[]): void;
  /** Ends the stream: all its bytes and its exact length. */
  finish(): Promise<EncodedAudio>;
  /** Drops a stream that will not finish (the synthesis failed or was stopped). */
  abandon(): void;
}

/**
 * Resamples and encodes syntheses on a worker thread of low priority (nice 10), for work that
 * runs behind interactive requests (jobs): encoding a minute of MP3 costs about half a second
 * of CPU, which on the event loop would delay every request meanwhile. The thread starts with
 * the first stream and again after a failure; it never keeps the process alive.
 */
export class BackgroundEncoder {
  private worker: Promise<Worker> | null = null;
  /** The thread that runs now (streams opened on an earlier one are lost). */
  private live: Worker | null = null;
  private readonly pending = new Map<number, Pending>();
  private nextId = 1;

  /** Opens a stream of `format` at `sampleRateHz` (`serial`: the Ogg stream serial). */
  async open(format: FormatId, sampleRateHz: number, serial: number): Promise<BackgroundStream> {
    const worker = await (this.worker ??= this.start());
    const id = this.nextId++;
    const post = (command: EncoderCommand, transfer: ArrayBuffer[] = []): void => worker.postMessage(command, transfer);
    post({ type: 'open', id, format, sampleRateHz, serial });
    return {
      write: (runs) => post({ type: 'write', id, runs }, [...new Set(runs.map((run) => run.pcm.buffer as ArrayBuffer))]),
      finish: () =>
        new Promise((resolve, reject) => {
          if (this.live !== worker) return reject(new Error('the background encoder stopped'));
          this.pending.set(id, { worker, resolve, reject });
          post({ type: 'finish', id });
        }),
      abandon: () => post({ type: 'abandon', id }),
    };
  }

  /** Stops the thread; streams under way fail. */
  async close(): Promise<void> {
    const worker = await this.worker?.catch(() => null);
    this.worker = null;
    this.live = null;
    if (!worker) return;
    await worker.terminate();
    this.failAll(worker, new Error('the background encoder was closed'));
  }

  private start(): Promise<Worker> {
    const worker = startWorkerThread(import.meta.url, 'encoder-worker');
    // Background work never keeps the process alive.
    worker.unref();
    const ended = (error: Error): void => {
      if (this.worker === started) this.worker = null;
      if (this.live === worker) this.live = null;
      this.failAll(worker, error);
    };
    const started = new Promise<Worker>((resolve, reject) => {
      worker.once('message', () => {
        worker.on('message', (result: EncodeResult) => this.settle(result));
        this.live = worker;
        resolve(worker);
      });
      worker.on('error', (error) => {
        reject(error);
        ended(error);
      });
      worker.on('exit', (code) => {
        const error = new Error(`the background encoder stopped (exit code ${code})`);
        reject(error);
        ended(error);
      });
    });
    // A thread that could not start is reported to the stream that waits for it.
    started.catch(() => undefined);
    return started;
  }

  private settle(result: EncodeResult): void {
    const pending = this.pending.get(result.id);
    if (!pending) return;
    this.pending.delete(result.id);
    if (result.ok) pending.resolve({ audio: Buffer.from(result.audio.buffer, result.audio.byteOffset, result.audio.byteLength), samples: result.samples });
    else pending.reject(new Error(result.message));
  }

  /** Fails the streams that were finishing on `worker`. */
  private failAll(worker: Worker, error: Error): void {
    for (const [id, pending] of this.pending) {
      if (pending.worker !== worker) continue;
      this.pending.delete(id);
      pending.reject(error);
    }
  }
}
