/**
 * Request limits of the interface (spec 8). Values a deployment may tune (budgets, ceilings)
 * live in the configuration; these are the contract's fixed bounds.
 */
export const LIMITS = {
  ttsMaxTextCharacters: 8000,
  ttsMaxStyleCharacters: 600,
  ttsMinSpeed: 0.5,
  ttsMaxSpeed: 2,
  /** Longest audio one synthesis request may make (not a figure of the spec: this deployment's bound). */
  ttsMaxAudioSeconds: 600,
  sttMaxUploadBytes: 25 * 1024 * 1024,
  sttMaxAudioSeconds: 300,
  sttMaxVocabularyTerms: 200,
  sttMaxVocabularyTermCharacters: 100,
  requestsPerMinute: 600,
  burstPerSecond: 25,
  errorDetailCharacters: 400,
} as const;

/** Synthesis models (spec 2.1). */
export const MODELS = ['studio', 'swift'] as const;
/** A synthesis model id. */
export type ModelId = (typeof MODELS)[number];
/** Model used when a request names none. */
export const DEFAULT_MODEL: ModelId = 'studio';

/** Ways a synthesis result is returned (spec 2.1). */
export const OUTPUTS = ['audio', 'json'] as const;
/** A synthesis output mode. */
export type OutputMode = (typeof OUTPUTS)[number];

/**
 * Speaking rate of the sandbox duration model, in characters per second at speed 1
 * (spec 5.8). 14 characters per second is a calm, clear announcement pace.
 */
export const SANDBOX_CHARACTERS_PER_SECOND = 14;

/** The rate of the PCM16 audio clients send to `/v1/stt/stream` (spec 6.2). */
export const STT_STREAM_RATE_HZ = 16000;
