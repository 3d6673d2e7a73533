/**
 * Contracts between the service and its speech engines. Engine code imports nothing from
 * `src/`; the service reaches engines only through the registry.
 */

/** Emphasis levels of markup (spec 2.8). */
export type EmphasisLevel = 'strong' | 'moderate' | 'reduced' | 'none';

/** Delivery of a stretch of text, relative to the voice's own. */
export interface Prosody {
  /** Speaking-rate multiplier (1 = the voice's rate at the requested speed). */
  readonly rate: number;
  /** Pitch multiplier (1 = the voice's pitch). */
  readonly pitch: number;
  /** Gain in decibels (0 = unchanged; -Infinity = silent). */
  readonly volumeDb: number;
  readonly emphasis: EmphasisLevel | null;
}

/** Delivery that changes nothing. */
export const NEUTRAL_PROSODY: Prosody = { rate: 1, pitch: 1, volumeDb: 0, emphasis: null };

/**
 * A stretch of a text item and how it is said: `ipa` is a pronunciation over the phones of
 * `engine/dialect/swiss-phones.ts` (stress marked with ˈ), or `null` where the engine reads the
 * letters its own way.
 */
export interface PronouncedSpan {
  readonly text: string;
  readonly ipa: string | null;
}

/** One piece of a passage: words to speak, an exact silence, or a named point. */
export type SpeechItem =
  | {
      readonly type: 'text';
      readonly text: string;
      readonly prosody?: Prosody;
      /**
       * How the text is pronounced, span by span (the spans' texts joined are `text`). Set for
       * Swiss German dialects; engines that take phoneme input use it, others read `text`.
       */
      readonly pronunciation?: readonly PronouncedSpan[];
    }
  | { readonly type: 'break'; readonly milliseconds: number }
  | { readonly type: 'mark'; readonly name: string };

/** A stretch of speech in one language and dialect, rendered on its own. */
export interface Passage {
  readonly language: string;
  readonly dialect: string | null;
  readonly items: readonly SpeechItem[];
}

/** What to say: plain text becomes one passage; a markup document may hold several. */
export interface SpeechDocument {
  readonly passages: readonly Passage[];
}

/** How to say it. */
export interface TtsOptions {
  readonly voice: string;
  readonly speed: number;
  /** Free-text delivery prompt; never changes the words. */
  readonly style: string | null;
  /** Rate the caller wants; engines that render at any rate use it, others use their own. */
  readonly sampleRateHz: number;
  /**
   * When the caller needs this synthesis's first audio (`performance.now()` time): engines
   * with a queue serve earlier needs first. Default: now. A realtime stream that synthesises
   * its next sentence ahead passes a later time, so it does not hold up a stream that has no
   * audio yet.
   */
  readonly neededAtMs?: number;
}

/** Events of a synthesis stream, in order; offsets are seconds from the start of the audio. */
export type TtsEvent =
  | { readonly type: 'audio'; readonly pcm: Int16Array; readonly sampleRateHz: number }
  | { readonly type: 'word'; readonly text: string; readonly offsetSeconds: number }
  | { readonly type: 'mark'; readonly name: string; readonly offsetSeconds: number }
  | { readonly type: 'end'; readonly durationSeconds: number };

/** What a synthesis engine can do. */
export interface TtsCapabilities {
  readonly languages: readonly string[];
  readonly streaming: boolean;
  /** The rate the engine renders at, or `'any'` when it renders at the requested rate. */
  readonly sampleRateHz: number | 'any';
}

/** A synthesis engine: a stream of PCM chunks and timing events; stops when `signal` aborts. */
/** How occupied an engine's workers are, for the operator's metrics. */
export interface EngineLoad {
  /** Worker threads running. */
  readonly workers: number;
  /** Work running now: syntheses, or open recognition streams. */
  readonly busy: number;
  /** Work waiting for a worker (recognition streams are refused, never queued: 0). */
  readonly waiting: number;
  /** Seconds workers have spent on work since the start, where the engine measures it. */
  readonly busySeconds?: number;
}

export interface TtsEngine {
  readonly id: string;
  readonly capabilities: TtsCapabilities;
  synthesize(document: SpeechDocument, options: TtsOptions, signal: AbortSignal): AsyncIterable<TtsEvent>;
  /** How occupied the engine is now; absent where it has no pool to tell of. */
  load?(): EngineLoad;
  /**
   * Milliseconds since the engine last did foreground work (a synthesis needed within seconds),
   * 0 while it does; absent where the engine does not tell (background work then does not wait).
   */
  foregroundIdleMs?(): number;
}

/** A recognised word with its timing (seconds) and confidence (0 to 1). */
export interface RecognisedWord {
  readonly w: string;
  readonly start: number;
  readonly end: number;
  readonly conf: number;
}

/** A transcript of one stretch of audio. */
export interface RecognitionResult {
  readonly text: string;
  readonly words: readonly RecognisedWord[];
  /** Language code, one of the candidates exactly as the caller gave it. */
  readonly lang: string;
  readonly durationSeconds: number;
}

/** How to recognise. */
export interface SttOptions {
  /** Candidate language codes; more than one means the language is detected. */
  readonly candidates: readonly string[];
  readonly vocabulary: readonly string[];
  readonly sampleRateHz: number;
}

/** What a recognition engine can do. */
export interface SttCapabilities {
  readonly languages: readonly string[];
  readonly streaming: boolean;
}

/** Words recognised in a stretch of audio. */
export interface Hypothesis {
  readonly text: string;
  readonly words: readonly RecognisedWord[];
}

/**
 * Events of a recognition stream, in order. Times are seconds from the first sample written to
 * the stream. A `partial` is the current guess for the utterance in progress and may change;
 * a `final` closes an utterance (at the end of speech, or when the stream ends).
 */
export type SttEvent =
  /** `audioSeconds`: how much of the stream's audio the guess had heard. */
  | ({ readonly type: 'partial'; readonly audioSeconds: number } & Hypothesis)
  | ({ readonly type: 'final'; readonly startSeconds: number; readonly endSeconds: number } & Hypothesis);

/** How to open a recognition stream. */
export interface SttStreamOptions {
  /** One language code of the engine's capabilities. */
  readonly language: string;
  /** Words and phrases to expect (an IVR menu); empty for open vocabulary. */
  readonly vocabulary: readonly string[];
  /** Rate of the PCM16 mono audio written; one of the engine's `sampleRatesHz`. */
  readonly sampleRateHz: number;
  /**
   * Silence that ends an utterance, for engines that endpoint by voice activity (default their
   * own, 500 ms): a phone menu may decide sooner that the caller has finished.
   */
  readonly endSilenceMs?: number;
}

/** A live recognition: PCM16 mono in, events out; `end()` yields the last final. */
export interface SttStream extends AsyncIterable<SttEvent> {
  /** Adds audio; throws after `end()`. */
  write(pcm: Int16Array): void;
  /** No more audio: the utterance in progress is finished and the events end. */
  end(): void;
}

/** What a streaming recognition engine can do. */
export interface StreamingSttCapabilities {
  readonly languages: readonly string[];
  /** Rates the engine decodes; callers resample to one of them. */
  readonly sampleRatesHz: readonly number[];
  /** Whether partial results arrive while audio is still coming. */
  readonly partials: boolean;
  /** How `vocabulary` is used: a grammar the result must fit, a boost, or not at all. */
  readonly vocabulary: 'grammar' | 'boost' | 'none';
}

/** A streaming recognition engine; a stream stops (its iteration throws) when `signal` aborts. */
export interface SttEngine {
  readonly id: string;
  readonly capabilities: StreamingSttCapabilities;
  open(options: SttStreamOptions, signal: AbortSignal): SttStream;
  /** How occupied the engine is now; absent where it has no pool to tell of. */
  load?(): EngineLoad;
}

/** A recognition engine for whole recordings (mono samples in [-1, 1]). */
export interface BatchSttEngine {
  readonly id: string;
  readonly capabilities: SttCapabilities;
  transcribe(samples: Float32Array, options: SttOptions, signal: AbortSignal): Promise<RecognitionResult>;
}
