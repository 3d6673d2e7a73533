/** Messages between the eSpeak worker threads and the pool. */

/** One synthesis: an eSpeak SSML document in one voice. */
export interface SynthesisJob {
  readonly type: 'synthesize';
  readonly id: number;
  readonly ssml: string;
  /** eSpeak voice name with variant, for example `gmw/de+f3`. */
  readonly voice: string;
  readonly wordsPerMinute: number;
  readonly pitch: number;
  readonly range: number;
  /** Int32 flag set to 1 by the pool to stop the job between two audio chunks. */
  readonly abort: SharedArrayBuffer;
}

/** Warms the listed voices (loads their dictionaries) so first requests are fast. */
export interface WarmJob {
  readonly type: 'warm';
  readonly id: number;
  readonly voices: readonly string[];
}

/** An event of eSpeak's synthesis callback that the engine uses. */
export interface EspeakEvent {
  readonly type: 'word' | 'sentence' | 'mark' | 'end';
  /** 1-based character position in the SSML text. */
  readonly textPosition: number;
  readonly length: number;
  /** Milliseconds from the start of this job's audio. */
  readonly audioPositionMs: number;
  readonly name?: string;
}

/** Worker answers, tagged with the job id. */
export type WorkerMessage =
  | { readonly type: 'ready' }
  | { readonly type: 'chunk'; readonly id: number; readonly pcm: Int16Array; readonly events: readonly EspeakEvent[] }
  | { readonly type: 'done'; readonly id: number; readonly aborted: boolean; readonly sampleRateHz: number }
  | { readonly type: 'error'; readonly id: number; readonly message: string };
