/**
 * The transcript of a stored recording, made with the live recognisers the way `POST /v1/stt`
 * makes one: the WAV is decoded, resampled to the recogniser's rate and streamed through it
 * (the recognisers run in their worker threads; the event loop breathes between pieces).
 */
import type { LiveRecognisers } from '../../engine/registry.js';
import { decodeAudio } from '../audio/decode.js';
import { WAV_HEADER_BYTES } from '../audio/wav.js';
import { recognizeLive } from '../speech/live-recognition.js';
import { confidenceOf } from '../speech/recognition-session.js';
import type { RecordingTranscript } from '../store/store.js';

/** Whether a recording in `language` can be transcribed here at all. */
export function canTranscribe(recognisers: LiveRecognisers, language: string): boolean {
  return recognisers.engineFor(language) !== null;
}

/**
 * Transcribes a recording's WAV `bytes` in `language`: `done` with the text and the
 * duration-weighted word confidence (null when no word was heard), `unavailable` when no
 * recogniser for the language is installed. Failures throw; the caller records them as `failed`.
 */
export async function transcribeWav(recognisers: LiveRecognisers, bytes: Buffer, language: string, signal: AbortSignal): Promise<RecordingTranscript> {
  if (!canTranscribe(recognisers, language)) return { status: 'unavailable', text: null, confidence: null };
  signal.throwIfAborted();
  // A message without a single sample has nothing to hear (and the decoder refuses an empty file).
  if (bytes.length <= WAV_HEADER_BYTES) return { status: 'done', text: '', confidence: null };
  const audio = await decodeAudio(bytes);
  const result = await recognizeLive(recognisers, audio, { candidates: [language], vocabulary: [] }, signal);
  const confidence = result.words.length > 0 ? Math.round(confidenceOf(result.words) * 1000) / 1000 : null;
  return { status: 'done', text: result.text, confidence };
}
