/**
 * The embedded English recogniser: Debian's pocketsphinx with its US English model, in worker
 * threads, behind WebRTC voice activity detection. A stream's audio goes to one worker in
 * 20 ms frames; partial results every 250 ms of speech; a final at each end of speech.
 */
import { access } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { RecognitionCapacityError } from '../stt/capacity.js';
import { EndpointedSttEngine } from '../stt/endpointed-engine.js';
import type { UtteranceDecoder } from '../stt/endpointed-stream.js';
import type { Hypothesis, SttEngine, SttStream, SttStreamOptions } from '../types.js';
import { loadWebRtcVad } from '../vad/webrtc-vad.js';
import { loadPocketsphinxNative } from './pocketsphinx-native.js';
import type { WorkerReply, WorkerRequest, WorkerSettings } from './pocketsphinx-protocol.js';

/** Where Debian's `pocketsphinx-en-us` puts the model. */
export const DEBIAN_ENGLISH_MODEL = '/usr/share/pocketsphinx/model/en-us';

/** The model decodes 16 kHz audio; callers resample (telephone audio included). */
export const POCKETSPHINX_RATE_HZ = 16000;

/**
 * A search narrower than pocketsphinx's defaults, for a real-time factor near 0.1 (measured by
 * test/bench/stt.bench.ts). Silence frames are kept so word times match the audio (our own
 * detector has already cut the utterance).
 */
const SEARCH_TUNING: Readonly<Record<string, string | number>> = {
  '-topn': 2,
  '-maxhmmpf': 2000,
  '-maxwpf': 5,
  '-pl_window': 10,
  '-fwdflat': 'no',
  '-bestpath': 'yes',
  '-remove_silence': 'no',
};

/** Where the model's parts are, or why it cannot be used. */
export type PocketsphinxAvailability = { readonly available: true; readonly modelDir: string } | { readonly available: false; readonly reason: string };

/**
 * Checks that the libraries load and the model files exist, without loading the model. The
 * service starts either way; English recognition is offered only when this succeeds.
 */
export async function findPocketsphinx(modelDir = DEBIAN_ENGLISH_MODEL): Promise<PocketsphinxAvailability> {
  try {
    loadPocketsphinxNative();
  } catch (error) {
    return { available: false, reason: (error as Error).message };
  }
  for (const part of ['en-us/mdef', 'en-us.lm.bin', 'cmudict-en-us.dict']) {
    try {
      await access(`${modelDir}/${part}`);
    } catch {
      return { available: false, reason: `the English model is incomplete (${modelDir}/${part} is missing): apt-get install pocketsphinx-en-us` };
    }
  }
  return { available: true, modelDir };
}

function startWorker(settings: WorkerSettings): Worker {
  if (import.meta.url.endsWith('.js')) return new Worker(new URL('./pocketsphinx-worker.js', import.meta.url), { workerData: settings });
  const source = new URL('./pocketsphinx-worker.ts', import.meta.url).href;
  return new Worker(`import('tsx/esm/api').then(({ register }) => { register(); return import(${JSON.stringify(source)}); });`, { eval: true, workerData: settings });
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

  static start(settings: WorkerSettings): Promise<DecoderWorker> {
    const worker = startWorker(settings);
    return new Promise((resolve, reject) => {
      const onReady = (reply: WorkerReply): void => {
        if (reply.type !== 'ready') return;
        worker.off('message', onReady);
        worker.off('error', reject);
        resolve(new DecoderWorker(worker));
      };
      worker.on('message', onReady);
      worker.once('error', reject);
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

/** Options of the embedded English recogniser. */
export interface PocketsphinxEngineOptions {
  readonly modelDir: string;
  /** Language codes it serves (the catalog's English codes). */
  readonly languages: readonly string[];
  /** Worker threads; each decodes its streams one frame at a time. */
  readonly workers: number;
  /**
   * Streams one worker decodes at once before new ones are refused (default 8: one worker kept
   * up with about ten in real time, measured; each stream's decoder holds about 64 MB).
   */
  readonly maxStreamsPerWorker?: number;
}

/** The pocketsphinx engine: a pool of workers behind the streaming contract. */
export class PocketsphinxEngine implements SttEngine {
  readonly id = 'pocketsphinx';
  readonly capabilities;
  private readonly inner: EndpointedSttEngine;
  private nextStream = 1;
  private nextRequestId = 1;

  private constructor(
    private readonly workers: DecoderWorker[],
    languages: readonly string[],
    private readonly maxStreamsPerWorker: number,
  ) {
    this.capabilities = { languages, sampleRatesHz: [POCKETSPHINX_RATE_HZ], partials: true, vocabulary: 'grammar' as const };
    this.inner = new EndpointedSttEngine(this.id, this.capabilities, (options) => this.decoderFor(options));
  }

  /** Starts the workers; each loads one decoder before this resolves. */
  static async start(options: PocketsphinxEngineOptions): Promise<PocketsphinxEngine> {
    await loadWebRtcVad();
    const m = options.modelDir;
    const settings: WorkerSettings = {
      decoderArguments: { '-hmm': `${m}/en-us`, '-lm': `${m}/en-us.lm.bin`, '-dict': `${m}/cmudict-en-us.dict`, ...SEARCH_TUNING },
      idleDecoders: 4,
    };
    const workers = await Promise.all(Array.from({ length: Math.max(1, options.workers) }, () => DecoderWorker.start(settings)));
    return new PocketsphinxEngine(workers, options.languages, options.maxStreamsPerWorker ?? 8);
  }

  open(options: SttStreamOptions, signal: AbortSignal): SttStream {
    return this.inner.open(options, signal);
  }

  /**
   * @throws RecognitionCapacityError when every worker decodes its most streams already.
   */
  private decoderFor(options: SttStreamOptions): UtteranceDecoder {
    const healthy = this.workers.filter((worker) => !worker.failed);
    if (healthy.length === 0) throw new Error('the recogniser has no running worker');
    const worker = healthy.reduce((least, candidate) => (candidate.openStreams < least.openStreams ? candidate : least));
    if (worker.openStreams >= this.maxStreamsPerWorker) throw new RecognitionCapacityError(this.id, this.maxStreamsPerWorker * healthy.length);
    const stream = this.nextStream++;
    worker.openStreams += 1;
    worker.post({ type: 'open', stream, vocabulary: options.vocabulary });
    return new WorkerUtteranceDecoder(worker, stream, () => this.nextRequestId++);
  }

  /** Stops the workers; open streams fail. */
  async close(): Promise<void> {
    await Promise.all(this.workers.map((worker) => worker.worker.terminate()));
  }
}
