/**
 * JSON schemas of the HTTP API. Fastify validates requests with them and the OpenAPI
 * document is generated from them, so the two cannot disagree. Enumerations come from the
 * catalog.
 */
import { Type, type Static, type TUnsafe } from '@sinclair/typebox';
import { FORMATS } from '../catalog/formats.js';
import { LIMITS, MODELS, OUTPUTS } from '../catalog/limits.js';
import { VOICES } from '../catalog/voices.js';
import { ERROR_TABLE, type ErrorCode } from './errors.js';

/** A string enumeration as plain JSON Schema `enum`, so a failure names every allowed value. */
export function StringEnum<const T extends readonly string[]>(values: T, options: { default?: T[number]; description?: string } = {}): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ type: 'string', enum: [...values], ...options });
}

/**
 * The fields of a synthesis (spec 2.1) that other requests share: the prewarm request (spec
 * 4.4) takes the same schemas, so the two cannot drift apart.
 */
const SynthesisFields = {
  model: Type.Optional(StringEnum(MODELS, { default: 'studio', description: 'studio: highest fidelity; swift: lowest latency.' })),
  voice: Type.Optional(
    StringEnum(
      VOICES.map((v) => v.id),
      { default: 'anna' },
    ),
  ),
  language: Type.Optional(
    Type.String({ minLength: 1, maxLength: 64, default: 'de-CH', description: 'Language code, or the compact <language>-<dialect> form.' }),
  ),
  dialect: Type.Optional(Type.String({ minLength: 1, maxLength: 64, default: 'standard' })),
  speed: Type.Optional(Type.Number({ minimum: LIMITS.ttsMinSpeed, maximum: LIMITS.ttsMaxSpeed, default: 1 })),
  style: Type.Optional(Type.String({ maxLength: LIMITS.ttsMaxStyleCharacters, description: 'Delivery prompt; never changes the words.' })),
  dialect_text: Type.Optional(
    Type.Boolean({
      default: false,
      description:
        "The text is already written in the Swiss German dialect: it is not rendered from Standard German, only spoken with the dialect's pronunciation (numbers written out in the dialect). language de-CH only, not with dialect hochdeutsch.",
    }),
  ),
};

/** A text to speak (spec 2.1 `text`). */
const SynthesisTextSchema = Type.String({
  minLength: 1,
  maxLength: LIMITS.ttsMaxTextCharacters,
  description: 'Plain text, or a markup document starting with <speak>.',
});

/** Body of `POST /v1/tts` (spec 2.1). */
export const SynthesisRequestSchema = Type.Object(
  {
    model: SynthesisFields.model,
    text: SynthesisTextSchema,
    voice: SynthesisFields.voice,
    language: SynthesisFields.language,
    dialect: SynthesisFields.dialect,
    speed: SynthesisFields.speed,
    style: SynthesisFields.style,
    dialect_text: SynthesisFields.dialect_text,
    format: Type.Optional(
      StringEnum(
        FORMATS.map((f) => f.id),
        { default: 'mp3' },
      ),
    ),
    sample_rate_hz: Type.Optional(Type.Integer({ description: 'Permitted values depend on format; see GET /v1/capabilities.' })),
    output: Type.Optional(StringEnum(OUTPUTS, { default: 'audio' })),
  },
  { additionalProperties: false, $id: 'SynthesisRequest' },
);
/** A synthesis request as validated by the schema. */
export type SynthesisRequestBody = Static<typeof SynthesisRequestSchema>;

/**
 * Error code per request field and failed schema keyword; `*` is the field's default.
 * Keys are JSON pointers of the field (`/speed`), `''` for the body itself; `*` in place of
 * an index stands for every item of a list (`/phrases/*`). Inner keys are a schema keyword
 * (`maxLength`), `required:<field>` for one missing field, or `*`.
 */
export type FieldErrorCodes = Readonly<Record<string, Readonly<Record<string, ErrorCode>>>>;

/** How schema failures of the shared synthesis fields map to error codes (spec 7). */
const SYNTHESIS_FIELD_CODES: FieldErrorCodes = {
  '/voice': { '*': 'tts.unknown_voice' },
  '/language': { '*': 'tts.unknown_language' },
  '/dialect': { '*': 'tts.unknown_language' },
  '/speed': { '*': 'tts.invalid_speed' },
  '/style': { '*': 'tts.invalid_request', maxLength: 'tts.style_too_long' },
};

/** How schema failures of a text to speak map to error codes (spec 7). */
const TEXT_CODES: FieldErrorCodes[string] = { '*': 'tts.invalid_request', minLength: 'tts.text_required', maxLength: 'tts.text_too_long' };

/** How schema failures of a synthesis request map to error codes (spec 7). */
export const SYNTHESIS_FIELD_ERRORS: FieldErrorCodes = {
  '': { '*': 'tts.invalid_request', 'required:text': 'tts.text_required' },
  '/text': TEXT_CODES,
  ...SYNTHESIS_FIELD_CODES,
  '/format': { '*': 'tts.unsupported_format' },
  '/sample_rate_hz': { '*': 'tts.unsupported_format' },
};

/** Most phrases one prewarm request may name (spec 4.4, 8). */
export const PREWARM_MAX_PHRASES = 200;

/**
 * Body of `POST /v1/tts/prewarm` (spec 4.4): the phrases, each following the rules of a
 * synthesis `text`, and the synthesis fields they would be spoken with.
 */
export const PrewarmRequestSchema = Type.Object(
  {
    phrases: Type.Array(SynthesisTextSchema, {
      minItems: 1,
      maxItems: PREWARM_MAX_PHRASES,
      description: `1 to ${PREWARM_MAX_PHRASES} texts, each as a synthesis text: plain, or a markup document starting with <speak>.`,
    }),
    ...SynthesisFields,
  },
  { additionalProperties: false, $id: 'PrewarmRequest' },
);
/** A prewarm request as validated by the schema. */
export type PrewarmRequestBody = Static<typeof PrewarmRequestSchema>;

/**
 * How schema failures of a prewarm request map to error codes (spec 7): the phrases as a
 * list are the request's, each phrase fails like a synthesis `text`, the other fields as in
 * synthesis.
 */
export const PREWARM_FIELD_ERRORS: FieldErrorCodes = {
  '': { '*': 'tts.invalid_request' },
  '/phrases': { '*': 'tts.invalid_request' },
  '/phrases/*': TEXT_CODES,
  ...SYNTHESIS_FIELD_CODES,
};

/** What became of one phrase of a prewarm (spec 2.10). */
const PrewarmPhraseSchema = Type.Object({
  index: Type.Integer({ minimum: 0, description: 'Position of the phrase in the request, from 0.' }),
  // Literals rather than an enum, so that TypeBox itself can check an answer (a client, the tests).
  status: Type.Union([Type.Literal('warmed'), Type.Literal('already_warm'), Type.Literal('failed'), Type.Literal('skipped')], {
    description: 'Always skipped on this deployment: it keeps no synthesis cache.',
  }),
  audio_seconds: Type.Number({ minimum: 0, description: 'Audio synthesised for the phrase; 0 when skipped.' }),
});

/** The answer of `POST /v1/tts/prewarm` (spec 2.10). */
export const PrewarmResultSchema = Type.Object(
  {
    request_id: Type.String(),
    warmed: Type.Integer({ minimum: 0, description: 'Always 0.' }),
    already_warm: Type.Integer({ minimum: 0, description: 'Always 0.' }),
    failed: Type.Integer({ minimum: 0 }),
    skipped: Type.Integer({ minimum: 0 }),
    billed_seconds: Type.Number({ minimum: 0 }),
    free_seconds: Type.Number({ minimum: 0 }),
    phrases: Type.Array(PrewarmPhraseSchema),
  },
  { $id: 'PrewarmResult' },
);
/** A prewarm answer. */
export type PrewarmResult = Static<typeof PrewarmResultSchema>;

/** The error body of every failure (spec 7). */
export const ErrorBodySchema = Type.Object(
  {
    error: Type.Object({
      code: StringEnum(Object.keys(ERROR_TABLE) as ErrorCode[]),
      message: Type.String(),
      request_id: Type.Union([Type.String(), Type.Null()]),
      detail: Type.Union([Type.String({ maxLength: LIMITS.errorDetailCharacters }), Type.Null()]),
    }),
  },
  { $id: 'ErrorBody' },
);

const AudioInfoSchema = Type.Object({
  encoding: Type.String(),
  media_type: Type.String(),
  sample_rate_hz: Type.Integer(),
  channels: Type.Integer(),
  duration_seconds: Type.Number(),
  byte_length: Type.Integer(),
  data: Type.Optional(Type.String({ contentEncoding: 'base64' })),
});

/** The JSON envelope of a synthesis (spec 2.2). */
export const SynthesisResultSchema = Type.Object(
  {
    request_id: Type.String(),
    voice: Type.String(),
    language: Type.String(),
    dialect: Type.Union([Type.String(), Type.Null()]),
    speed: Type.Number(),
    characters: Type.Integer(),
    passages: Type.Integer(),
    cache: Type.Literal('miss'),
    marks: Type.Optional(Type.Array(Type.Object({ name: Type.String(), offset_seconds: Type.Number() }))),
    audio: AudioInfoSchema,
  },
  { $id: 'SynthesisResult' },
);

const WordSchema = Type.Object({ w: Type.String(), start: Type.Number(), end: Type.Number(), conf: Type.Number({ minimum: 0, maximum: 1 }) });

/** The transcript of a recognition (spec 2.3). */
export const TranscriptSchema = Type.Object(
  { text: Type.String(), lang: Type.String(), words: Type.Array(WordSchema), duration_s: Type.Number() },
  { $id: 'Transcript' },
);

/** The multipart form of `POST /v1/stt` (spec 4.5), for documentation: the route reads the parts itself. */
export const RecognitionFormSchema = Type.Object({
  audio: Type.String({ format: 'binary', description: 'WAV (PCM, float, µ-law, A-law), Ogg Opus or FLAC; at most 25 MB and 5 minutes.' }),
  lang: Type.Optional(Type.String({ default: 'de-CH', description: 'One code, comma-separated candidates, or auto (de-CH,fr-CH,it,en).' })),
  vocabulary: Type.Optional(Type.String({ description: 'JSON array of strings or a comma-separated list; at most 200 terms of 100 characters.' })),
});
