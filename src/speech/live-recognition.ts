import { BUILT_IN_CATALOG } from '../../engine/models/model-catalog.js';
import type { LiveRecognisers } from '../../engine/registry.js';
import { LANGUAGE_ID_RATE_HZ } from '../../engine/sherpa/language-id.js';
import { RecognitionCapacityError } from '../../engine/stt/capacity.js';
import type { RecognisedWord, RecognitionResult, SttEngine } from '../../engine/types.js';
import type { DecodedAudio } from '../audio/decode.js';
import { Resampler } from '../audio/resampler.js';
import { ApiError } from '../api/errors.js';
import { breathe } from './event-loop-budget.js';
import type { RecognitionPlan } from './recognition-service.js';
import { confidenceOf, RecognitionSession } from './recognition-session.js';

/** Audio handed to a stream at a time: the event loop breathes between pieces. */
const PIECE_SECONDS = 0.5;

/** What would serve a language: a catalog model to pull, or the embedded English recogniser. */
function whatToInstall(language: string): string {
  const base = language.split('-')[0]!;
  const model = BUILT_IN_CATALOG.find((entry) => entry.manifest.languages.some((code) => code === language || code === base));
  const english = base === 'en' ? "Debian's pocketsphinx-en-us (npm run system-deps)" : null;
  const pull = model ? `sprachrohr models pull ${model.name}` : null;
  return [english, pull].filter(Boolean).join(' or ') || 'a Vosk or sherpa-onnx model for it in the models folder';
}

/**
 * The engine for each candidate, in candidate order.
 * @throws ApiError `stt.invalid_request` naming the candidates no installed recogniser serves
 *   and what would serve them; never a silent fallback to another language.
 */
export function enginesFor(recognisers: LiveRecognisers, candidates: readonly string[]): Array<{ language: string; engine: SttEngine }> {
  const missing = candidates.filter((language) => !recognisers.engineFor(language));
  if (missing.length > 0) {
    const installed = recognisers.languages.length > 0 ? `installed: ${recognisers.languages.join(', ')}` : 'none is installed';
    const remedies = missing.map((language) => `${language}: ${whatToInstall(language)}`).join('; ');
    throw new ApiError(
      'stt.invalid_request',
      `no recogniser for ${missing.join(', ')} is installed on this deployment (${installed}); the operator can install one (${remedies}) — see docs/models.md`,
    );
  }
  return candidates.map((language) => ({ language, engine: recognisers.engineFor(language)! }));
}

/** Float samples in [-1, 1] as PCM16 at `rateHz`, converted piece by piece. */
async function* pcmPieces(audio: DecodedAudio, rateHz: number): AsyncGenerator<Int16Array> {
  const resampler = audio.sampleRateHz === rateHz ? null : new Resampler(audio.sampleRateHz, rateHz);
  try {
    const piece = Math.round(PIECE_SECONDS * audio.sampleRateHz);
    for (let at = 0; at < audio.samples.length; at += piece) {
      await breathe();
      const floats = audio.samples.subarray(at, at + piece);
      const pcm = Int16Array.from(floats, (value) => Math.max(-32768, Math.min(32767, Math.round(value * 32767))));
      yield resampler ? resampler.process(pcm) : pcm;
    }
    if (resampler) yield resampler.flush();
  } finally {
    resampler?.destroy();
  }
}

/** One engine's transcript of the whole recording (a recognition session over it), and how sure it is. */
async function transcribe(
  engine: SttEngine,
  language: string,
  audio: DecodedAudio,
  vocabulary: readonly string[],
  signal: AbortSignal,
): Promise<{ text: string; words: RecognisedWord[]; confidence: number }> {
  const rateHz = engine.capabilities.sampleRatesHz.includes(audio.sampleRateHz) ? audio.sampleRateHz : engine.capabilities.sampleRatesHz[0]!;
  let session: RecognitionSession;
  try {
    session = new RecognitionSession([{ language, engine }], vocabulary, rateHz, signal);
  } catch (error) {
    if (!(error instanceof RecognitionCapacityError)) throw error;
    throw ApiError.of('stt', 'capacity', 'service_capacity', { retryAfterSeconds: 1, headers: { 'X-Speech-Capacity-Reason': 'service_capacity' } });
  }
  const finals: Array<{ text: string; words: readonly RecognisedWord[] }> = [];
  const reading = (async () => {
    for await (const event of session) if (event.type === 'final') finals.push(event);
  })();
  try {
    for await (const pcm of pcmPieces(audio, rateHz)) {
      signal.throwIfAborted();
      session.write(pcm);
    }
    session.end();
  } catch (error) {
    // Ends the reader too (aborted, or a failed conversion): nothing is left running.
    session.close();
    await reading.catch(() => undefined);
    throw error;
  }
  await reading;
  const words = finals.flatMap((final) => final.words);
  return { text: finals.map((final) => final.text).join(' '), words, confidence: confidenceOf(words) };
}

/** Up to `seconds` of the recording as 16 kHz samples in [-1, 1] (what language identification hears). */
async function opening(audio: DecodedAudio, seconds: number): Promise<Float32Array> {
  const pieces: Int16Array[] = [];
  let length = 0;
  for await (const pcm of pcmPieces(audio, LANGUAGE_ID_RATE_HZ)) {
    pieces.push(pcm);
    length += pcm.length;
    if (length >= seconds * LANGUAGE_ID_RATE_HZ) break;
  }
  const samples = new Float32Array(Math.min(length, seconds * LANGUAGE_ID_RATE_HZ));
  let at = 0;
  for (const piece of pieces) for (let i = 0; i < piece.length && at < samples.length; i++) samples[at++] = piece[i]! / 32768;
  return samples;
}

/**
 * The candidates to transcribe with: the one whose language an installed language identifier
 * hears (the first such candidate in the caller's order), or every candidate with a distinct
 * engine when there is no identifier or it hears a language that is not a candidate.
 */
async function candidatesToRun(recognisers: LiveRecognisers, chosen: Array<{ language: string; engine: SttEngine }>, audio: DecodedAudio, signal: AbortSignal) {
  // Candidates served by the same engine would give the same transcript: it runs once.
  const distinct = chosen.filter((entry, index) => chosen.findIndex((other) => other.engine === entry.engine) === index);
  if (distinct.length < 2 || !recognisers.languageId) return distinct;
  const heard = await recognisers.languageId.identify(await opening(audio, 30), signal);
  const match = chosen.find(({ language }) => language.split('-')[0] === heard);
  return match ? [match] : distinct;
}

/**
 * Batch recognition with the live engines (spec 4.5, 2.3). The recording is resampled to the
 * engine's rate and streamed through it; the finals of its utterances make one transcript.
 * With several candidates an installed language identifier picks the candidate; without one
 * (or when it hears no candidate's language) each distinct engine transcribes the recording
 * and the transcript with the highest duration-weighted word confidence wins (the first
 * candidate on a tie). `lang` is the chosen candidate exactly as given.
 */
export async function recognizeLive(recognisers: LiveRecognisers, audio: DecodedAudio, plan: RecognitionPlan, signal: AbortSignal): Promise<RecognitionResult> {
  const chosen = enginesFor(recognisers, plan.candidates);
  const distinct = await candidatesToRun(recognisers, chosen, audio, signal);
  const results = await Promise.all(distinct.map(({ language, engine }) => transcribe(engine, language, audio, plan.vocabulary, signal)));
  let best = 0;
  results.forEach((result, index) => {
    if (result.confidence > results[best]!.confidence) best = index;
  });
  const { text, words } = results[best]!;
  return { text, words, lang: distinct[best]!.language, durationSeconds: Math.round(audio.durationSeconds * 1000) / 1000 };
}
