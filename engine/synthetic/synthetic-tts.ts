import { applyGain, deliveryGainDb, deliveryRate } from '../delivery.js';
import type { SpeechDocument, TtsEngine, TtsEvent, TtsOptions } from '../types.js';

/** Options of the synthetic engine. */
export interface SyntheticTtsOptions {
  /** Characters per second at speed 1: the duration model of the sandbox. */
  readonly charactersPerSecond: number;
  readonly languages: readonly string[];
}

/** Tone pitches (Hz) of a pentatonic scale; a word's letters pick one, so beeps vary but repeat. */
const PITCHES = [392, 440, 523.25, 587.33, 659.25] as const;
/** Share of a word's time slot that sounds; the rest is a gap so the beeps read as separate. */
const TONE_SHARE = 0.75;
const AMPLITUDE = 0.25 * 32767;
/** Fade in and out of each beep, so that it does not click. */
const FADE_SECONDS = 0.005;
/** Audio is delivered in chunks of this length (the engine is instant: larger chunks cost less). */
const CHUNK_SECONDS = 1;

function pitchOf(word: string): number {
  let sum = 0;
  for (let i = 0; i < word.length; i++) sum = (sum * 31 + word.charCodeAt(i)) >>> 0;
  return PITCHES[sum % PITCHES.length]!;
}

/** Splits text into words, keeping the characters (with one following space) that each word takes. */
function wordsOf(text: string): string[] {
  return text.split(/\s+/).filter((word) => word.length > 0);
}

/**
 * The sandbox engine (spec 5.8): deterministic audio that is obviously not speech — one
 * sine beep per word, its length from a characters-per-second model, breaks as exact silence.
 * The same document and options always give the same samples.
 */
export class SyntheticTtsEngine implements TtsEngine {
  readonly id = 'synthetic';
  readonly capabilities;

  constructor(private readonly options: SyntheticTtsOptions) {
    this.capabilities = { languages: options.languages, streaming: true, sampleRateHz: 'any' as const };
  }

  async *synthesize(document: SpeechDocument, options: TtsOptions, signal: AbortSignal): AsyncIterable<TtsEvent> {
    const rate = options.sampleRateHz;
    const secondsPerCharacter = 1 / (this.options.charactersPerSecond * options.speed);
    const chunkSamples = Math.round(rate * CHUNK_SECONDS);
    const fade = Math.max(1, Math.round(FADE_SECONDS * rate));
    let produced = 0;
    for (const passage of document.passages) {
      for (const item of passage.items) {
        signal.throwIfAborted();
        let pcm: Int16Array;
        if (item.type === 'mark') {
          yield { type: 'mark', name: item.name, offsetSeconds: produced / rate };
          continue;
        } else if (item.type === 'break') {
          pcm = new Int16Array(Math.round((item.milliseconds / 1000) * rate));
        } else {
          // Lay the words out first, then render them all into one array of the exact length.
          const pace = deliveryRate(item.prosody);
          const pitch = item.prosody?.pitch ?? 1;
          const words = wordsOf(item.text).map((word) => {
            const slot = Math.round(((word.length + 1) * secondsPerCharacter * rate) / pace);
            return { word, slot, tone: Math.round(slot * TONE_SHARE) };
          });
          // Every sample is written below (beep, then gap), so the memory is not zeroed first.
          const total = words.reduce((sum, w) => sum + w.slot, 0);
          pcm = new Int16Array(Buffer.allocUnsafeSlow(total * 2).buffer, 0, total);
          let at = 0;
          for (const { word, slot, tone } of words) {
            yield { type: 'word', text: word, offsetSeconds: (produced + at) / rate };
            writeBeep(pcm, at, toneOf(Math.round(pitchOf(word) * pitch), rate), tone, fade);
            pcm.fill(0, at + tone, at + slot);
            at += slot;
          }
          applyGain(pcm, deliveryGainDb(item.prosody));
        }
        for (let at = 0; at < pcm.length; at += chunkSamples) {
          signal.throwIfAborted();
          yield { type: 'audio', pcm: pcm.subarray(at, Math.min(at + chunkSamples, pcm.length)), sampleRateHz: rate };
        }
        produced += pcm.length;
      }
    }
    signal.throwIfAborted();
    yield { type: 'end', durationSeconds: produced / rate };
  }
}

/** Longest beep kept ready per pitch and rate; longer beeps repeat it. */
const CACHED_TONE_SECONDS = 2;
const toneCache = new Map<string, Int16Array>();

/**
 * A steady sine at a pitch, without envelope, computed once per pitch and rate: beeps are
 * copied out of it, so the sandbox costs little more than a memory copy per sample.
 */
function toneOf(pitch: number, rate: number): Int16Array {
  const key = `${pitch}@${rate}`;
  let tone = toneCache.get(key);
  if (!tone) {
    tone = new Int16Array(Math.round(CACHED_TONE_SECONDS * rate));
    const step = (2 * Math.PI * pitch) / rate;
    for (let i = 0; i < tone.length; i++) tone[i] = Math.round(AMPLITUDE * Math.sin(step * i));
    toneCache.set(key, tone);
  }
  return tone;
}

/** Writes `samples` of a steady tone at `at`, with linear fades of `fade` samples at both ends. */
function writeBeep(out: Int16Array, at: number, source: Int16Array, samples: number, fade: number): void {
  for (let done = 0; done < samples; done += source.length) {
    out.set(source.subarray(0, Math.min(source.length, samples - done)), at + done);
  }
  const edge = Math.min(fade, Math.floor(samples / 2));
  for (let i = 0; i < edge; i++) {
    const gain = i / fade;
    out[at + i] = Math.round(out[at + i]! * gain);
    out[at + samples - 1 - i] = Math.round(out[at + samples - 1 - i]! * gain);
  }
}
