/**
 * Synthesis for work that runs behind interactive requests (jobs): the engine's audio is
 * gathered piece by piece, and resampled and encoded on the background encoder's thread, so
 * that the event loop only passes samples along.
 */
import type { BackgroundEncoder, BackgroundStream, PcmRun } from '../audio/background-encoder.js';
import { concatPcm } from '../audio/pcm.js';
import { mediaTypeFor } from '../catalog/formats.js';
import { ApiError } from '../api/errors.js';
import { engineEvents, serialOf, type AudioAllowance, type SynthesisEngines, type SynthesisOutcome } from './synthesis-service.js';
import type { SynthesisPlan } from './synthesis-request.js';

/** Consecutive chunks of one rate as runs, each in a buffer of its own (to be handed to the encoder). */
function runsOf(chunks: readonly PcmRun[]): PcmRun[] {
  const runs: Array<{ parts: Int16Array[]; rateHz: number }> = [];
  for (const { pcm, rateHz } of chunks) {
    const last = runs.at(-1);
    if (last?.rateHz === rateHz) last.parts.push(pcm);
    else runs.push({ parts: [pcm], rateHz });
  }
  // concatPcm gives a lone part back as it is: copy it, the engine may still hold its buffer.
  return runs.map(({ parts, rateHz }) => ({ pcm: parts.length === 1 ? parts[0]!.slice() : concatPcm(parts), rateHz }));
}

/**
 * Like `synthesizeBatch` in `synthesis-service.ts`, for a text in pieces (sentences) spoken one
 * after the other into one encoded stream of the first plan's format, each its own engine job;
 * each piece's audio goes to the background encoder as soon as the piece is spoken, so the
 * encoding overlaps the synthesis. `allowance` sees the audio's length grow, as the engine
 * delivers it; `beforePiece` is awaited before each piece.
 */
export async function synthesizeInBackground(
  engines: SynthesisEngines,
  plans: readonly SynthesisPlan[],
  encoder: BackgroundEncoder,
  signal: AbortSignal,
  allowance?: AudioAllowance,
  neededAtMs?: number,
  beforePiece?: () => Promise<void>,
): Promise<SynthesisOutcome> {
  const first = plans[0]!;
  let stream: BackgroundStream;
  try {
    stream = await encoder.open(first.format.id, first.sampleRateHz, serialOf(first));
  } catch (error) {
    throw new ApiError('tts.encode_failed', null, { cause: error });
  }
  const marks: Array<{ name: string; offset_seconds: number }> = [];
  let seconds = 0;
  try {
    for (const plan of plans) {
      await beforePiece?.();
      const start = seconds;
      const chunks: PcmRun[] = [];
      for await (const event of engineEvents(engines, plan, signal, neededAtMs)) {
        if (event.type === 'audio') {
          if (event.pcm.length === 0) continue;
          seconds += event.pcm.length / event.sampleRateHz;
          allowance?.(seconds);
          chunks.push({ pcm: event.pcm, rateHz: event.sampleRateHz });
        } else if (event.type === 'mark') {
          marks.push({ name: event.name, offset_seconds: Math.round((start + event.offsetSeconds) * 1000) / 1000 });
        }
      }
      stream.write(runsOf(chunks));
    }
    signal.throwIfAborted();
  } catch (error) {
    stream.abandon();
    throw error;
  }
  let encoded;
  try {
    encoded = await stream.finish();
  } catch (error) {
    throw new ApiError('tts.encode_failed', null, { cause: error });
  }
  return { audio: encoded.audio, mediaType: mediaTypeFor(first.format, first.sampleRateHz), durationSeconds: encoded.samples / first.sampleRateHz, marks };
}
