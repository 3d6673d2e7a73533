/** Messages between the language identifier's worker thread and the main thread. */

/** The Whisper model's files. */
export interface LanguageIdSettings {
  readonly encoder: string;
  readonly decoder: string;
}

/** A request: 16 kHz mono samples in [-1, 1]. */
export interface LanguageIdRequest {
  readonly id: number;
  readonly samples: Float32Array;
}

export type LanguageIdReply =
  | { readonly type: 'ready' }
  | { readonly type: 'failed'; readonly message: string }
  | { readonly type: 'language'; readonly id: number; readonly language: string }
  | { readonly type: 'error'; readonly id: number; readonly message: string };
