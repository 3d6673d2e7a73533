import { createHash } from 'node:crypto';
import type { DialectRenderer } from '../../engine/dialect/dialect-renderer.js';
import { normaliseText } from '../../engine/text/normaliser.js';
import { sameProsody } from '../../engine/delivery.js';
import { NEUTRAL_PROSODY, type Prosody, type SpeechDocument, type TtsEngine } from '../../engine/types.js';
import { concatPcm } from '../audio/pcm.js';
import { Resampler } from '../audio/resampler.js';
import { mediaTypeFor } from '../catalog/formats.js';
import { createStreamEncoder, type StreamEncoder } from '../audio/stream-encoder.js';
import { ApiError } from '../errors.js';
import { breathe } from './event-loop-budget.js';
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
 * Turns written text into what is said: numbers, dates, times, money, phone numbers and
 * abbreviations are written out in the passage's language, then every Swiss German passage
 * passes through the dialect renderer (spec 2.5) and gets its dialect's pronunciation.
 */
export function prepareSpeech(document: SpeechDocument, renderer: DialectRenderer, style: Prosody = NEUTRAL_PROSODY): SpeechDocument {
  const styled = !sameProsody(style, NEUTRAL_PROSODY);
  return {
    passages: document.passages.map((passage) => ({
      ...passage,
      items: passage.items.map((item) => {
        if (item.type !== 'text') return item;
        const swiss = passage.language === 'de-CH';
        const said = normaliseText(swiss ? renderer.prepare(item.text, passage.dialect) : item.text, passage.language);
        const text = swiss ? renderer.render(said, passage.dialect) : said;
        // Swiss German dialects are spoken with Swiss pronunciation, not read as German.
        const pronunciation = swiss ? renderer.pronounce(text, passage.dialect) : null;
        const spoken = pronunciation ? { ...item, text, pronunciation } : { ...item, text };
        return styled ? { ...spoken, prosody: combineDelivery(style, item.prosody) } : spoken;
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

  /** Converts a chunk; a change of input rate (passages from different models) flushes first. */
  push(pcm: Int16Array, rateHz: number): Int16Array {
    let tail: Int16Array | null = null;
    if (this.resampler && this.resampler.inputRateHz !== rateHz) tail = this.finish();
    if (rateHz === this.targetRateHz) return tail ? concatPcm([tail, pcm]) : pcm;
    this.resampler ??= new Resampler(rateHz, this.targetRateHz);
    const converted = this.resampler.process(pcm);
    return tail ? concatPcm([tail, converted]) : converted;
  }

  /** The resampler's held-back tail (once), and frees it; later calls return null. */
  finish(): Int16Array | null {
    if (!this.resampler) return null;
    const tail = this.resampler.flush();
    this.resampler.destroy();
    this.resampler = null;
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
  const marks: Array<{ name: string; offset_seconds: number }> = [];
  const options = { voice: plan.voice, speed: plan.speed, style: plan.style, sampleRateHz: plan.sampleRateHz };
  const rate = new RateMatcher(plan.sampleRateHz);
  let encoder: StreamEncoder;
  await breathe();
  try {
    encoder = await createStreamEncoder(plan.format.id, plan.sampleRateHz, serialOf(plan));
  } catch (error) {
    throw new ApiError('tts.encode_failed', null, { cause: error });
  }
  await breathe();
  const parts: Buffer[] = [];
  let samples = 0;
  let ended = false;
  // Each chunk is resampled and encoded as it arrives, so no step holds the event loop long.
  const encode = (pcm: Int16Array): void => {
    if (pcm.length === 0) return;
    samples += pcm.length;
    try {
      parts.push(...encoder.write(pcm));
    } catch (error) {
      throw new ApiError('tts.encode_failed', null, { cause: error });
    }
  };
  try {
    for await (const event of engine.synthesize(prepareSpeech(plan.speech.document, dialect, styleDelivery(plan.style)), options, signal)) {
      if (event.type === 'audio') {
        // Wait for a turn before the work, not after: chunks from the workers arrive in
        // batches, and each waiting synthesis would otherwise take one more step in that turn.
        await breathe();
        encode(rate.push(event.pcm, event.sampleRateHz));
      } else if (event.type === 'mark') {
        marks.push({ name: event.name, offset_seconds: Math.round(event.offsetSeconds * 1000) / 1000 });
      }
    }
    const tail = rate.finish();
    if (tail) encode(tail);
    parts.push(...encoder.end());
    ended = true;
  } finally {
    rate.finish();
    // A failed or aborted synthesis still closes its encoder, so pooled encoders come back.
    if (!ended) {
      try {
        encoder.end();
      } catch {
        // The encoder failed already; the error that matters is on its way out.
      }
    }
  }
  const audio = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  return { audio, mediaType: mediaTypeFor(plan.format, plan.sampleRateHz), durationSeconds: samples / plan.sampleRateHz, marks };
}
