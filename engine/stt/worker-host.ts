/**
 * The worker-thread side of a native recogniser: it owns the decoders and answers the pool's
 * messages. Decoding is synchronous native code, so it runs here, never on the event loop.
 * Each open stream has its own decoder; a closed stream's decoder is kept for the next one
 * (loading a model can take a second).
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { Hypothesis } from '../types.js';
import type { WorkerData, WorkerReply, WorkerRequest } from './worker-protocol.js';

/** One native decoder: one utterance at a time. */
export interface NativeUtteranceDecoder {
  /** Listens for these phrases from the next utterance on (empty: open vocabulary). */
  useVocabulary(phrases: readonly string[]): void;
  start(): void;
  process(pcm: Int16Array): void;
  partial(): Hypothesis | null;
  /** Ends the utterance; times are seconds from its start. */
  finish(): Hypothesis;
  free(): void;
}

/** Makes the decoders of one worker (the engine's model is loaded once, by `load`). */
export type DecoderFactory = () => NativeUtteranceDecoder;

/**
 * Serves the pool from this worker thread. `load` runs first (loading libraries and models);
 * when it throws, the pool hears why and the worker ends.
 */
export function serveDecoders<EngineSettings>(load: (settings: EngineSettings) => DecoderFactory): void {
  const port = parentPort;
  if (!port) throw new Error('a recogniser worker must run in a worker thread');
  const data = workerData as WorkerData<EngineSettings>;
  const post = (reply: WorkerReply): void => port.postMessage(reply);
  let create: DecoderFactory;
  let idle: NativeUtteranceDecoder[];
  try {
    create = load(data.engine);
    idle = [create()];
  } catch (error) {
    post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
    port.close();
    return;
  }
  const streams = new Map<number, NativeUtteranceDecoder>();
  /** Streams that failed: their later messages are dropped. */
  const failed = new Set<number>();

  const decoderOf = (stream: number): NativeUtteranceDecoder => {
    const decoder = streams.get(stream);
    if (!decoder) throw new Error(`stream ${stream} is not open`);
    return decoder;
  };

  const close = (stream: number): void => {
    const healthy = !failed.delete(stream);
    const decoder = streams.get(stream);
    if (!decoder) return;
    streams.delete(stream);
    // A decoder that failed is not trusted with another stream.
    if (healthy && idle.length < data.idleDecoders) {
      try {
        decoder.finish();
        idle.push(decoder);
        return;
      } catch {
        // Not reusable: freed below.
      }
    }
    decoder.free();
  };

  const handle = (request: WorkerRequest): void => {
    switch (request.type) {
      case 'open': {
        const decoder = idle.pop() ?? create();
        streams.set(request.stream, decoder);
        decoder.useVocabulary(request.vocabulary);
        return;
      }
      case 'start':
        decoderOf(request.stream).start();
        return;
      case 'audio':
        decoderOf(request.stream).process(request.pcm);
        return;
      case 'partial':
        post({ type: 'result', request: request.request, hypothesis: decoderOf(request.stream).partial() });
        return;
      case 'finish':
        post({ type: 'result', request: request.request, hypothesis: decoderOf(request.stream).finish() });
        return;
      case 'close':
        close(request.stream);
        return;
    }
  };

  port.on('message', (request: WorkerRequest) => {
    if (failed.has(request.stream) && request.type !== 'close') return;
    try {
      handle(request);
    } catch (error) {
      failed.add(request.stream);
      post({ type: 'error', stream: request.stream, message: error instanceof Error ? error.message : String(error) });
    }
  });
  post({ type: 'ready' });
}
