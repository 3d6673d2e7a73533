import { DEFAULT_FORMAT, findFormat, type AudioFormat } from '../catalog/formats.js';
import { DEFAULT_LANGUAGE } from '../catalog/languages.js';
import { DEFAULT_MODEL, LIMITS, type ModelId, type OutputMode } from '../catalog/limits.js';
import { resolveLanguageCode } from '../catalog/resolve-language.js';
import { DEFAULT_VOICE, findVoice } from '../catalog/voices.js';
import { ApiError } from '../api/errors.js';
import type { SynthesisRequestBody } from '../api/schemas.js';
import { shortestSpeechSeconds } from './speech-length.js';
import { isMarkup, MarkupError, parseMarkup, plainTextDocument, type ParsedSpeech } from './markup-parser.js';

/** A synthesis request checked against the catalog, with defaults filled and markup parsed. */
export interface SynthesisPlan {
  readonly model: ModelId;
  readonly voice: string;
  readonly language: string;
  readonly dialect: string | null;
  readonly speed: number;
  readonly style: string | null;
  readonly format: AudioFormat;
  readonly sampleRateHz: number;
  readonly output: OutputMode;
  readonly speech: ParsedSpeech;
  /** `dialect_text`: the text is written in the dialect already; it is pronounced, not rendered. */
  readonly dialectText: boolean;
}

/**
 * Checks the combinations the schema cannot (language and dialect, voice and language, rate
 * and format) and parses markup.
 * @throws ApiError with the code of the field at fault.
 */
export function planSynthesis(body: SynthesisRequestBody, preferJson: boolean): SynthesisPlan {
  const languageCode = body.language ?? DEFAULT_LANGUAGE;
  const resolved = resolveLanguageCode(languageCode);
  if (!resolved) {
    throw new ApiError('tts.unknown_language', `language "${languageCode}" is not supported; see languages in GET /v1/capabilities`);
  }
  const { language } = resolved;
  if (resolved.dialect && body.dialect && body.dialect !== resolved.dialect) {
    throw new ApiError(
      'tts.invalid_request',
      `language "${languageCode}" names dialect "${resolved.dialect}" but dialect is "${body.dialect}"; send one of them`,
    );
  }
  const dialect = resolved.dialect ?? body.dialect ?? language.default_dialect;
  if (dialect !== null && !language.dialects.some((d) => d.id === dialect)) {
    throw new ApiError(
      'tts.unknown_language',
      `dialect "${dialect}" is not available for ${language.code}; available: ${language.dialects.map((d) => d.id).join(', ')}`,
    );
  }
  const dialectText = body.dialect_text ?? false;
  if (dialectText && (language.code !== 'de-CH' || dialect === 'hochdeutsch')) {
    throw new ApiError(
      'tts.invalid_request',
      language.code !== 'de-CH'
        ? `dialect_text is for text written in a Swiss German dialect (language de-CH), not ${language.code}: other languages keep their words anyway`
        : 'dialect_text is for text written in a Swiss German dialect; hochdeutsch is read as written: send it without dialect_text',
    );
  }
  const voiceId = body.voice ?? DEFAULT_VOICE;
  const voice = findVoice(voiceId);
  if (!voice) throw new ApiError('tts.unknown_voice', `voice "${voiceId}" does not exist; see GET /v1/tts/voices`);
  if (!voice.languages.includes(language.code)) {
    throw new ApiError('tts.unknown_voice', `voice "${voiceId}" does not speak ${language.code}`);
  }
  const format = findFormat(body.format ?? DEFAULT_FORMAT)!;
  const sampleRateHz = body.sample_rate_hz ?? format.default_sample_rate_hz;
  if (!format.sample_rates_hz.includes(sampleRateHz)) {
    throw new ApiError('tts.unsupported_format', `${format.id} is available at ${format.sample_rates_hz.join(', ')} Hz, not ${sampleRateHz}`);
  }
  const defaults = { language: language.code, dialect };
  let speech: ParsedSpeech;
  if (isMarkup(body.text)) {
    try {
      speech = parseMarkup(body.text, defaults);
    } catch (error) {
      if (error instanceof MarkupError) throw new ApiError('tts.invalid_ssml', error.message);
      throw error;
    }
  } else {
    speech = plainTextDocument(body.text, defaults);
  }
  if (speech.characters === 0) throw new ApiError('tts.text_required', 'the text holds nothing to speak');
  const speed = body.speed ?? 1;
  const shortest = shortestSpeechSeconds(speech.document, speed);
  if (shortest > LIMITS.ttsMaxAudioSeconds) throw audioTooLong(`at least ${Math.ceil(shortest)} s`);
  return {
    model: body.model ?? DEFAULT_MODEL,
    voice: voice.id,
    language: language.code,
    dialect,
    speed,
    style: body.style ?? null,
    format,
    sampleRateHz,
    output: body.output ?? (preferJson ? 'json' : 'audio'),
    speech,
    dialectText,
  };
}

/**
 * The refusal of a synthesis whose audio would be longer than one request may make
 * (`limits.tts_max_audio_seconds` in capabilities). `length` says how long it would be.
 */
export function audioTooLong(length: string): ApiError {
  return new ApiError(
    'tts.invalid_request',
    `the audio would last ${length}; one request makes at most ${LIMITS.ttsMaxAudioSeconds} s (limits.tts_max_audio_seconds): split the text, shorten its breaks or raise its speed`,
  );
}
