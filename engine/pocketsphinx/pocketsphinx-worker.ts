/**
 * A worker thread that owns pocketsphinx decoders. Decoding is synchronous native code, so it
 * runs here, never on the event loop. Each open stream has its own decoder; a closed stream's
 * decoder is kept for the next one (loading the language model takes about a second).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadPocketsphinxNative, PocketsphinxDecoder } from './pocketsphinx-native.js';
import type { WorkerReply, WorkerRequest, WorkerSettings } from './pocketsphinx-protocol.js';
import { vocabularyGrammar } from './vocabulary-grammar.js';

const port = parentPort;
if (!port) throw new Error('pocketsphinx-worker must run in a worker thread');
const settings = workerData as WorkerSettings;

loadPocketsphinxNative();
const idle: PocketsphinxDecoder[] = [new PocketsphinxDecoder(settings.decoderArguments)];
const streams = new Map<number, PocketsphinxDecoder>();
/** Streams that failed: their later messages are dropped. */
const failed = new Set<number>();

const post = (reply: WorkerReply): void => port.postMessage(reply);

function decoderOf(stream: number): PocketsphinxDecoder {
  const decoder = streams.get(stream);
  if (!decoder) throw new Error(`stream ${stream} is not open`);
  return decoder;
}

function handle(request: WorkerRequest): void {
  switch (request.type) {
    case 'open': {
      const decoder = idle.pop() ?? new PocketsphinxDecoder(settings.decoderArguments);
      streams.set(request.stream, decoder);
      decoder.useGrammar(request.vocabulary.length > 0 ? vocabularyGrammar(request.vocabulary, (word) => decoder.knows(word)).grammar : null);
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
    case 'close': {
      const healthy = !failed.delete(request.stream);
      const decoder = streams.get(request.stream);
      if (!decoder) return;
      streams.delete(request.stream);
      // A decoder that failed is not trusted with another stream.
      if (healthy && idle.length < settings.idleDecoders) {
        try {
          decoder.finish();
          idle.push(decoder);
          return;
        } catch {
          // Not reusable: freed below.
        }
      }
      decoder.free();
      return;
    }
  }
}

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
