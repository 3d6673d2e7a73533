import { createHash } from 'node:crypto';
import type { TtsEngine } from '../../engine/types.js';
import { mediaTypeFor } from '../catalog/formats.js';
import { encodeAudio } from '../audio/encode.js';
import { ApiError } from '../errors.js';
import type { SynthesisPlan } from './synthesis-request.js';

/** A finished batch synthesis: encoded bytes and what describes them. */
export interface SynthesisOutcome {
  readonly audio: Buffer;
  readonly mediaType: string;
  readonly durationSeconds: number;
  readonly marks: ReadonlyArray<{ name: string; offset_seconds: number }>;
}

/**
 * A stable 32-bit number for a plan, used as the Ogg stream serial: equal requests give
 * byte-identical files, different requests differ.
 */
function serialOf(plan: SynthesisPlan): number {
  const digest = createHash('sha256')
    .update(JSON.stringify([plan.voice, plan.language, plan.dialect, plan.speed, plan.style, plan.format.id, plan.sampleRateHz, plan.speech.document]))
    .digest();
  return digest.readUInt32LE(0);
}

/**
 * Joins PCM chunks into one array. Engines that render into one buffer hand out consecutive
 * views of it; those are joined without copying.
 */
function joinChunks(chunks: readonly Int16Array[], samples: number): Int16Array {
  const first = chunks[0];
  if (!first) return new Int16Array(0);
  let contiguous = true;
  for (let i = 1; i < chunks.length && contiguous; i++) {
    const previous = chunks[i - 1]!;
    contiguous = chunks[i]!.buffer === first.buffer && chunks[i]!.byteOffset === previous.byteOffset + previous.byteLength;
  }
  if (contiguous) return new Int16Array(first.buffer, first.byteOffset, samples);
  // Every sample is overwritten below, so the memory need not be zeroed first.
  const pcm = new Int16Array(Buffer.allocUnsafeSlow(samples * 2).buffer, 0, samples);
  let offset = 0;
  for (const chunk of chunks) {
    pcm.set(chunk, offset);
    offset += chunk.length;
  }
  return pcm;
}

/** Runs a synthesis to its end and encodes it in the requested format (batch mode). */
export async function synthesizeBatch(engine: TtsEngine, plan: SynthesisPlan, signal: AbortSignal): Promise<SynthesisOutcome> {
  const chunks: Int16Array[] = [];
  let samples = 0;
  const marks: Array<{ name: string; offset_seconds: number }> = [];
  const options = { voice: plan.voice, speed: plan.speed, style: plan.style, sampleRateHz: plan.sampleRateHz };
  for await (const event of engine.synthesize(plan.speech.document, options, signal)) {
    if (event.type === 'audio') {
      chunks.push(event.pcm);
      samples += event.pcm.length;
    } else if (event.type === 'mark') {
      marks.push({ name: event.name, offset_seconds: Math.round(event.offsetSeconds * 1000) / 1000 });
    }
  }
  const pcm = joinChunks(chunks, samples);
  let audio: Buffer;
  try {
    audio = encodeAudio(plan.format.id, pcm, plan.sampleRateHz, serialOf(plan));
  } catch (error) {
    throw new ApiError('tts.encode_failed', null, { cause: error });
  }
  return { audio, mediaType: mediaTypeFor(plan.format, plan.sampleRateHz), durationSeconds: samples / plan.sampleRateHz, marks };
}
