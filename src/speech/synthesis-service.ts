import { createHash } from 'node:crypto';
import type { DialectRenderer } from '../../engine/dialect/dialect-renderer.js';
import type { RenderTrace } from '../../engine/dialect/render-trace.js';
import { normaliseText } from '../../engine/text/normaliser.js';
import { sameProsody } from '../../engine/delivery.js';
import { AsyncQueue } from '../../engine/async-queue.js';
import { NEUTRAL_PROSODY, type Prosody, type SpeechDocument, type TtsEngine, type TtsEvent } from '../../engine/types.js';
import { RateMatcher } from '../audio/rate-matcher.js';
import { mediaTypeFor } from '../catalog/formats.js';
import { createStreamEncoder, type StreamEncoder } from '../audio/stream-encoder.js';
import { ApiError } from '../api/errors.js';
import { breathe } from './event-loop-budget.js';
import { combineDelivery, styleDelivery } from './style.js';
import type { SynthesisPlan } from './synthesis-request.js';
import { renderWrittenOut } from './dialect-text.js';

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
export function serialOf(plan: SynthesisPlan): number {
  const digest = createHash('sha256')
    .update(
      JSON.stringify([
        plan.voice,
        plan.language,
        plan.dialect,
        plan.speed,
        plan.style,
        plan.format.id,
        plan.sampleRateHz,
        plan.speech.document,
        // Only when set, so that every other request keeps its serial.
        ...(plan.dialectText ? ['dialect_text'] : []),
      ]),
    )
    .digest();
  return digest.readUInt32LE(0);
}

/** How {@link prepareSpeech} treats Swiss German text. */
export interface SpeechPreparation {
  /**
   * The text is already written in the dialect (`dialect_text`): its words are not rendered, only
   * what normalisation writes out for it (numbers, dates, times, money); it is pronounced the Swiss way.
   */
  readonly dialectText?: boolean;
  /** Hears every step of the rendering (`sprachrohr dialect --explain`). */
  readonly trace?: RenderTrace;
}

/**
 * Turns written text into what is said: numbers, dates, times, money, phone numbers and
 * abbreviations are written out in the passage's language, then every Swiss German passage
 * passes through the dialect renderer (spec 2.5) and gets its dialect's pronunciation.
 */
export function prepareSpeech(
  document: SpeechDocument,
  renderer: DialectRenderer,
  style: Prosody = NEUTRAL_PROSODY,
  preparation: SpeechPreparation = {},
): SpeechDocument {
  const styled = !sameProsody(style, NEUTRAL_PROSODY);
  const { dialectText = false, trace } = preparation;
  return {
    passages: document.passages.map((passage) => ({
      ...passage,
      items: passage.items.map((item) => {
        if (item.type !== 'text') return item;
        const swiss = passage.language === 'de-CH';
        const said = normaliseText(swiss ? renderer.prepare(item.text, passage.dialect) : item.text, passage.language);
        trace?.add({ kind: 'written-out', from: item.text, to: said });
        let text = said;
        if (swiss) text = dialectText ? renderWrittenOut(item.text, said, passage.dialect, renderer) : renderer.render(said, passage.dialect, trace);
        // Swiss German dialects are spoken with Swiss pronunciation, not read as German.
        const pronunciation = swiss ? renderer.pronounce(text, passage.dialect) : null;
        const spoken = pronunciation ? { ...item, text, pronunciation } : { ...item, text };
        return styled ? { ...spoken, prosody: combineDelivery(style, item.prosody) } : spoken;
      }),
    })),
  };
}

/** What a synthesis needs from the engine layer. */
export interface SynthesisEngines {
  readonly engine: TtsEngine;
  readonly dialect: DialectRenderer;
}

/** The engine's events for a plan: its text prepared (normalised, dialect, style) and synthesised. */
export function engineEvents({ engine, dialect }: SynthesisEngines, plan: SynthesisPlan, signal: AbortSignal, neededAtMs?: number): AsyncIterable<TtsEvent> {
  const options = {
    voice: plan.voice,
    speed: plan.speed,
    style: plan.style,
    sampleRateHz: plan.sampleRateHz,
    ...(neededAtMs === undefined ? {} : { neededAtMs }),
  };
  return engine.synthesize(prepareSpeech(plan.speech.document, dialect, styleDelivery(plan.style), { dialectText: plan.dialectText }), options, signal);
}

/**
 * A synthesis started before its turn in a session: the engine works on it (and its events
 * wait here) while the session is still sending earlier audio, so a stream that has started
 * does not stall between sentences.
 */
export class SpeechAhead {
  private readonly queue = new AsyncQueue<TtsEvent | null>();

  /** `neededAtMs`: when its first audio will be needed (see `TtsOptions.neededAtMs`). */
  constructor(engines: SynthesisEngines, plan: SynthesisPlan, signal: AbortSignal, neededAtMs?: number) {
    void (async () => {
      try {
        for await (const event of engineEvents(engines, plan, signal, neededAtMs)) this.queue.push(event);
        this.queue.push(null);
      } catch (error) {
        this.queue.fail(error as Error);
      }
    })();
  }

  async *events(): AsyncGenerator<TtsEvent> {
    for (;;) {
      const event = await this.queue.next();
      if (event === null) return;
      yield event;
    }
  }
}

/** What a synthesis session gives out, in order. */
export type SynthesisOutput =
  | { readonly type: 'audio'; readonly bytes: Buffer }
  /** `offsetSeconds`: from the start of the session's audio. */
  | { readonly type: 'mark'; readonly name: string; readonly offsetSeconds: number };

/**
 * Told the session's whole audio length before each piece is encoded; throws (an
 * {@link ApiError}) to stop the synthesis there: the request's length cap, the key's budget.
 */
export type AudioAllowance = (totalSeconds: number) => void;

/**
 * A synthesis session: one encoded audio stream in one format, into which texts are spoken one
 * after another (`speak`), closed by `finish`. Batch synthesis is one `speak`; the realtime
 * endpoint speaks segment after segment as text arrives.
 */
export class SynthesisSession {
  private readonly rate: RateMatcher;
  private samples = 0;
  private finished = false;

  private constructor(
    private readonly encoder: StreamEncoder,
    private readonly sampleRateHz: number,
    private readonly allowance: AudioAllowance | undefined,
  ) {
    this.rate = new RateMatcher(sampleRateHz);
  }

  /**
   * Opens the encoder of the plan's format and rate (an Ogg stream's serial follows the plan).
   * `allowance` sees the audio's length grow and may stop it.
   * @throws ApiError `tts.encode_failed` when the encoder cannot start.
   */
  static async open(plan: SynthesisPlan, allowance?: AudioAllowance): Promise<SynthesisSession> {
    await breathe();
    try {
      return new SynthesisSession(await createStreamEncoder(plan.format.id, plan.sampleRateHz, serialOf(plan)), plan.sampleRateHz, allowance);
    } catch (error) {
      throw new ApiError('tts.encode_failed', null, { cause: error });
    }
  }

  /** Seconds of audio encoded so far. */
  get durationSeconds(): number {
    return this.samples / this.sampleRateHz;
  }

  /** `allowed`: false for the resampler's last few samples at the end, which are not refused. */
  private encode(pcm: Int16Array, allowed = true): Buffer[] {
    if (pcm.length === 0) return [];
    if (allowed) this.allowance?.((this.samples + pcm.length) / this.sampleRateHz);
    this.samples += pcm.length;
    try {
      return this.encoder.write(pcm);
    } catch (error) {
      throw new ApiError('tts.encode_failed', null, { cause: error });
    }
  }

  /**
   * Speaks one plan's text into the stream, giving out encoded bytes and marks as they come;
   * `neededAtMs` as in `TtsOptions` (a background job passes a time far ahead, so that every
   * interactive synthesis waiting for a worker goes first).
   */
  speak(engines: SynthesisEngines, plan: SynthesisPlan, signal: AbortSignal, neededAtMs?: number): AsyncGenerator<SynthesisOutput> {
    return this.encodeEvents(engineEvents(engines, plan, signal, neededAtMs));
  }

  /** Speaks a synthesis started ahead of its turn (see {@link SpeechAhead}). */
  speakAhead(ahead: SpeechAhead): AsyncGenerator<SynthesisOutput> {
    return this.encodeEvents(ahead.events());
  }

  private async *encodeEvents(events: AsyncIterable<TtsEvent>): AsyncGenerator<SynthesisOutput> {
    if (this.finished) throw new Error('the synthesis session is finished');
    const start = this.durationSeconds;
    for await (const event of events) {
      if (event.type === 'audio') {
        // Wait for a turn before the work, not after: chunks from the workers arrive in
        // batches, and each waiting synthesis would otherwise take one more step in that turn.
        await breathe();
        for (const bytes of this.encode(this.rate.push(event.pcm, event.sampleRateHz))) yield { type: 'audio', bytes };
      } else if (event.type === 'mark') {
        yield { type: 'mark', name: event.name, offsetSeconds: Math.round((start + event.offsetSeconds) * 1000) / 1000 };
      }
    }
  }

  /** Ends the stream: the resampler's and encoder's last bytes. Safe to call twice. */
  finish(): Buffer[] {
    if (this.finished) return [];
    this.finished = true;
    const tail = this.rate.finish();
    const parts = tail ? this.encode(tail, false) : [];
    try {
      parts.push(...this.encoder.end());
    } catch (error) {
      throw new ApiError('tts.encode_failed', null, { cause: error });
    }
    return parts;
  }

  /** Frees the encoder of a session that will not finish (aborted or failed). */
  abandon(): void {
    if (this.finished) return;
    this.finished = true;
    this.rate.finish();
    try {
      this.encoder.end();
    } catch {
      // The encoder failed already; the error that matters is on its way out.
    }
  }
}

/**
 * Runs a synthesis to its end and encodes it in the requested format (batch mode).
 * @throws what `allowance` throws, as soon as the audio grows past what it allows.
 */
export async function synthesizeBatch(
  engines: SynthesisEngines,
  plan: SynthesisPlan,
  signal: AbortSignal,
  allowance?: AudioAllowance,
  neededAtMs?: number,
): Promise<SynthesisOutcome> {
  const session = await SynthesisSession.open(plan, allowance);
  const marks: Array<{ name: string; offset_seconds: number }> = [];
  const parts: Buffer[] = [];
  try {
    for await (const output of session.speak(engines, plan, signal, neededAtMs)) {
      if (output.type === 'audio') parts.push(output.bytes);
      else marks.push({ name: output.name, offset_seconds: output.offsetSeconds });
    }
    parts.push(...session.finish());
  } finally {
    // A failed or aborted synthesis still closes its encoder, so pooled encoders come back.
    session.abandon();
  }
  const audio = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
  return { audio, mediaType: mediaTypeFor(plan.format, plan.sampleRateHz), durationSeconds: session.durationSeconds, marks };
}
