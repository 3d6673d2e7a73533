/**
 * A worker thread that runs sherpa-onnx's spoken-language identification (a Whisper encoder
 * pass and one decoder step: hundreds of milliseconds of native code, kept off the event loop).
 */
import { parentPort, workerData } from 'node:worker_threads';
import sherpa, { type SpokenLanguageIdentification } from 'sherpa-onnx-node';
import type { LanguageIdReply, LanguageIdRequest, LanguageIdSettings } from './language-id-protocol.js';

const port = parentPort;
if (!port) throw new Error('language-id-worker must run in a worker thread');
const settings = workerData as LanguageIdSettings;
const post = (reply: LanguageIdReply): void => port.postMessage(reply);

let identifier: SpokenLanguageIdentification | null = null;
try {
  identifier = new sherpa.SpokenLanguageIdentification({ whisper: { encoder: settings.encoder, decoder: settings.decoder }, numThreads: 1, debug: 0 });
} catch (error) {
  post({ type: 'failed', message: error instanceof Error ? error.message : String(error) });
  port.close();
}

if (identifier) {
  const loaded = identifier;
  port.on('message', (request: LanguageIdRequest) => {
    try {
      const stream = loaded.createStream();
      stream.acceptWaveform({ samples: request.samples, sampleRate: 16000 });
      post({ type: 'language', id: request.id, language: loaded.compute(stream) });
    } catch (error) {
      post({ type: 'error', id: request.id, message: error instanceof Error ? error.message : String(error) });
    }
  });
  post({ type: 'ready' });
}
