import type { BatchSttEngine, RecognitionResult } from '../../engine/types.js';
import { AudioDecodeError, decodeAudio, inspectAudio, wavDurationSeconds, type DecodedAudio } from '../audio/decode.js';
import { LIMITS } from '../catalog/limits.js';
import { ApiError } from '../api/errors.js';

/** What a batch recognition needs besides the audio. */
export interface RecognitionPlan {
  readonly candidates: readonly string[];
  readonly vocabulary: readonly string[];
}

function tooLong(seconds: number): ApiError {
  return new ApiError(
    'stt.audio_too_large',
    `the audio lasts ${seconds.toFixed(1)} s; recognition accepts at most ${LIMITS.sttMaxAudioSeconds} s per request — split the recording or use the realtime endpoint`,
  );
}

/**
 * Decodes an uploaded recording to mono float samples. A WAVE file longer than the limit is
 * refused from its header, before decoding.
 * @throws ApiError `stt.unsupported_format` (415), `stt.invalid_audio` (400) or
 *   `stt.audio_too_large` (413, over five minutes).
 */
export async function decodeRecording(bytes: Uint8Array): Promise<DecodedAudio> {
  let decoded: DecodedAudio;
  try {
    const { wav } = inspectAudio(bytes);
    if (wav && wavDurationSeconds(wav) > LIMITS.sttMaxAudioSeconds) throw tooLong(wavDurationSeconds(wav));
    decoded = await decodeAudio(bytes);
  } catch (error) {
    if (error instanceof AudioDecodeError) {
      throw new ApiError(error.reason === 'unsupported' ? 'stt.unsupported_format' : 'stt.invalid_audio', error.message);
    }
    throw error;
  }
  if (decoded.durationSeconds > LIMITS.sttMaxAudioSeconds) throw tooLong(decoded.durationSeconds);
  return decoded;
}

/** Transcribes a decoded recording with a batch engine (the sandbox). */
export async function recognizeBatch(engine: BatchSttEngine, decoded: DecodedAudio, plan: RecognitionPlan, signal: AbortSignal): Promise<RecognitionResult> {
  const result = await engine.transcribe(
    decoded.samples,
    { candidates: plan.candidates, vocabulary: plan.vocabulary, sampleRateHz: decoded.sampleRateHz },
    signal,
  );
  return { ...result, durationSeconds: Math.round(decoded.durationSeconds * 1000) / 1000 };
}
