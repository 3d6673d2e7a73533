import { createHash } from 'node:crypto';
import type { DialectRenderer } from '../../engine/dialect/dialect-renderer.js';
import { normaliseText } from '../../engine/text/normaliser.js';
import { sameProsody } from '../../engine/delivery.js';
import { NEUTRAL_PROSODY, type Prosody, type SpeechDocument, type TtsEngine } from '../../engine/types.js';
import { Resampler } from '../audio/resampler.js';
import { mediaTypeFor } from '../catalog/formats.js';
import { encodeAudio } from '../audio/encode.js';
import { ApiError } from '../errors.js';
import { combineDelivery, styleDelivery } from './style.js';
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

/**
 * Turns written text into what is said: numbers, dates, times, money, phone numbers and
 * abbreviations are written out in the passage's language, then every Swiss German passage
 * passes through the dialect renderer (spec 2.5).
 */
export function prepareSpeech(document: SpeechDocument, renderer: DialectRenderer, style: Prosody = NEUTRAL_PROSODY): SpeechDocument {
  const styled = !sameProsody(style, NEUTRAL_PROSODY);
  return {
    passages: document.passages.map((passage) => ({
      ...passage,
      items: passage.items.map((item) => {
        if (item.type !== 'text') return item;
        const said = normaliseText(item.text, passage.language);
        const text = passage.language === 'de-CH' ? renderer.render(said, passage.dialect) : said;
        return styled ? { ...item, text, prosody: combineDelivery(style, item.prosody) } : { ...item, text };
      }),
    })),
  };
}

/**
 * Brings an engine's audio to the requested rate: chunks pass through untouched when the rates
 * agree, else through one streaming resampler for the whole synthesis.
 */
class RateMatcher {
  private resampler: Resampler | null = null;

  constructor(private readonly targetRateHz: number) {}

  push(pcm: Int16Array, rateHz: number): Int16Array {
    if (rateHz === this.targetRateHz) return pcm;
    if (this.resampler && this.resampler.inputRateHz !== rateHz) throw new Error('an engine changed its sample rate mid-stream');
    this.resampler ??= new Resampler(rateHz, this.targetRateHz);
    return this.resampler.process(pcm);
  }

  finish(): Int16Array | null {
    if (!this.resampler) return null;
    const tail = this.resampler.flush();
    this.resampler.destroy();
    return tail;
  }
}

/** What a synthesis needs from the engine layer. */
export interface SynthesisEngines {
  readonly engine: TtsEngine;
  readonly dialect: DialectRenderer;
}

/** Runs a synthesis to its end and encodes it in the requested format (batch mode). */
export async function synthesizeBatch({ engine, dialect }: SynthesisEngines, plan: SynthesisPlan, signal: AbortSignal): Promise<SynthesisOutcome> {
  const chunks: Int16Array[] = [];
  let samples = 0;
  const marks: Array<{ name: string; offset_seconds: number }> = [];
  const options = { voice: plan.voice, speed: plan.speed, style: plan.style, sampleRateHz: plan.sampleRateHz };
  const rate = new RateMatcher(plan.sampleRateHz);
  const keep = (pcm: Int16Array): void => {
    if (pcm.length === 0) return;
    chunks.push(pcm);
    samples += pcm.length;
  };
  try {
    for await (const event of engine.synthesize(prepareSpeech(plan.speech.document, dialect, styleDelivery(plan.style)), options, signal)) {
      if (event.type === 'audio') {
        keep(rate.push(event.pcm, event.sampleRateHz));
      } else if (event.type === 'mark') {
        marks.push({ name: event.name, offset_seconds: Math.round(event.offsetSeconds * 1000) / 1000 });
      }
    }
  } finally {
    const tail = rate.finish();
    if (tail) keep(tail);
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
