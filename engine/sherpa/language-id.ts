/**
 * Spoken-language identification for candidate detection: a multilingual Whisper model
 * through sherpa-onnx, in one worker thread. It names the language of up to the first 30
 * seconds of a recording (Whisper's window) as a base code such as `de`.
 */
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../worker-thread.js';
import { checkSherpaModel } from './sherpa-model-check.js';
import type { LanguageIdReply, LanguageIdRequest, LanguageIdSettings } from './language-id-protocol.js';

/** The rate the identifier hears. */
export const LANGUAGE_ID_RATE_HZ = 16000;
/** Audio Whisper looks at once: just under its 30-second window (sherpa-onnx warns at 30). */
const WINDOW_SECONDS = 29.5;

/** Names the language spoken in a recording. */
export interface LanguageIdentifier {
  readonly id: string;
  /** The base language code (`de`, `fr`) of 16 kHz mono samples in [-1, 1]. */
  identify(samples: Float32Array, signal: AbortSignal): Promise<string>;
  close(): Promise<void>;
}

/** sherpa-onnx's Whisper language identification in a worker thread. */
export class WhisperLanguageIdentifier implements LanguageIdentifier {
  private readonly pending = new Map<number, { resolve: (language: string) => void; reject: (error: Error) => void }>();
  private nextId = 1;
  private failure: Error | null = null;

  private constructor(
    readonly id: string,
    private readonly worker: Worker,
  ) {
    worker.on('message', (reply: LanguageIdReply) => {
      if (reply.type !== 'language' && reply.type !== 'error') return;
      const waiting = this.pending.get(reply.id);
      this.pending.delete(reply.id);
      if (reply.type === 'language') waiting?.resolve(reply.language);
      else waiting?.reject(new Error(`language identification failed: ${reply.message}`));
    });
    const fail = (error: Error): void => {
      this.failure ??= error;
      for (const waiting of this.pending.values()) waiting.reject(error);
      this.pending.clear();
    };
    worker.on('error', fail);
    worker.on('exit', (code) => fail(new Error(`the language identifier's worker stopped (exit ${code})`)));
  }

  /**
   * Checks the model (multilingual, complete metadata), then loads it in a worker.
   * @throws SherpaModelError for files sherpa-onnx could not run; Error when it refuses them.
   */
  static async start(id: string, files: LanguageIdSettings): Promise<WhisperLanguageIdentifier> {
    await checkSherpaModel('language-id', { encoder: files.encoder, decoder: files.decoder });
    const worker = startWorkerThread(import.meta.url, 'language-id-worker', files);
    await new Promise<void>((resolve, reject) => {
      const onReply = (reply: LanguageIdReply): void => {
        if (reply.type === 'ready') {
          worker.off('message', onReply);
          resolve();
        } else if (reply.type === 'failed') {
          worker.off('message', onReply);
          void worker.terminate();
          reject(new Error(reply.message));
        }
      };
      worker.on('message', onReply);
      worker.once('error', reject);
    });
    return new WhisperLanguageIdentifier(id, worker);
  }

  identify(samples: Float32Array, signal: AbortSignal): Promise<string> {
    if (this.failure) return Promise.reject(this.failure);
    if (signal.aborted) return Promise.reject(signal.reason as Error);
    const request: LanguageIdRequest = { id: this.nextId++, samples: samples.slice(0, WINDOW_SECONDS * LANGUAGE_ID_RATE_HZ) };
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.pending.delete(request.id);
        reject(signal.reason as Error);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.pending.set(request.id, {
        resolve: (language) => {
          signal.removeEventListener('abort', onAbort);
          resolve(language);
        },
        reject: (error) => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      });
      this.worker.postMessage(request, [request.samples.buffer as ArrayBuffer]);
    });
  }

  close(): Promise<void> {
    return this.worker.terminate().then(() => undefined);
  }
}
