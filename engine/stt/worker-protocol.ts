/** Messages between a recogniser's worker threads and the main thread (any native engine). */
import type { Hypothesis } from '../types.js';

/** What a worker is told; `stream` numbers are unique per worker. */
export type WorkerRequest =
  /** A stream begins: take a decoder, listen for the vocabulary (empty: open vocabulary). */
  | { readonly type: 'open'; readonly stream: number; readonly vocabulary: readonly string[] }
  | { readonly type: 'start'; readonly stream: number }
  | { readonly type: 'audio'; readonly stream: number; readonly pcm: Int16Array }
  | { readonly type: 'partial'; readonly stream: number; readonly request: number }
  | { readonly type: 'finish'; readonly stream: number; readonly request: number }
  /** The stream is over: its decoder goes back to the idle ones. */
  | { readonly type: 'close'; readonly stream: number };

/** What a worker answers. */
export type WorkerReply =
  | { readonly type: 'ready' }
  /** The worker could not load its engine; it exits after this. */
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'result'; readonly request: number; readonly hypothesis: Hypothesis | null }
  /** A stream failed (its pending requests fail with it). */
  | { readonly type: 'error'; readonly stream: number; readonly message: string };

/** What every worker gets at start: the pool's part and its engine's own settings. */
export interface WorkerData<EngineSettings> {
  /** Decoders kept loaded while no stream uses them. */
  readonly idleDecoders: number;
  readonly engine: EngineSettings;
}
