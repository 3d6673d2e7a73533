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
/** Audio is delivered in chunks of this length, and abort is checked between chunks. */
const CHUNK_SECONDS = 0.1;

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
    this.capabilities = { languages: options.languages, streaming: true };
  }

  async *synthesize(document: SpeechDocument, options: TtsOptions, signal: AbortSignal): AsyncIterable<TtsEvent> {
    const rate = options.sampleRateHz;
    const secondsPerCharacter = 1 / (this.options.charactersPerSecond * options.speed);
    const chunk = new ChunkWriter(Math.round(rate * CHUNK_SECONDS));
    const fade = Math.max(1, Math.round(FADE_SECONDS * rate));
    for (const passage of document.passages) {
      for (const item of passage.items) {
        signal.throwIfAborted();
        if (item.type === 'mark') {
          yield { type: 'mark', name: item.name, offsetSeconds: chunk.samplesWritten / rate };
        } else if (item.type === 'break') {
          yield* chunk.silence(Math.round((item.milliseconds / 1000) * rate));
        } else {
          for (const word of wordsOf(item.text)) {
            yield { type: 'word', text: word, offsetSeconds: chunk.samplesWritten / rate };
            const slot = Math.round((word.length + 1) * secondsPerCharacter * rate);
            const toneSamples = Math.round(slot * TONE_SHARE);
            yield* chunk.tone(toneSamples, (2 * Math.PI * pitchOf(word)) / rate, fade);
            yield* chunk.silence(slot - toneSamples);
          }
        }
      }
    }
    signal.throwIfAborted();
    yield* chunk.flush();
    yield { type: 'end', durationSeconds: chunk.samplesWritten / rate };
  }
}

/** Fills fixed-size PCM chunks and hands each out when full. */
class ChunkWriter {
  /** Samples produced so far, including those not yet handed out. */
  samplesWritten = 0;
  private buffer: Int16Array;
  private filled = 0;

  constructor(private readonly chunkSamples: number) {
    this.buffer = new Int16Array(chunkSamples);
  }

  *silence(samples: number): Generator<TtsEvent> {
    let left = samples;
    while (left > 0) {
      const take = Math.min(left, this.chunkSamples - this.filled);
      // A fresh buffer is zero-filled, so silence only moves the cursor.
      this.filled += take;
      this.samplesWritten += take;
      left -= take;
      yield* this.handOutIfFull();
    }
  }

  /** A sine beep by the two-term recurrence (one multiply-add per sample, no Math.sin). */
  *tone(samples: number, step: number, fade: number): Generator<TtsEvent> {
    const coefficient = 2 * Math.cos(step);
    let previous = Math.sin(-step);
    let current = 0;
    for (let i = 0; i < samples; i++) {
      const envelope = i < fade ? i / fade : samples - i < fade ? (samples - i) / fade : 1;
      this.buffer[this.filled++] = Math.round(AMPLITUDE * envelope * current);
      const next = coefficient * current - previous;
      previous = current;
      current = next;
      this.samplesWritten++;
      if (this.filled === this.chunkSamples) yield* this.handOutIfFull();
    }
  }

  *flush(): Generator<TtsEvent> {
    if (this.filled === 0) return;
    const pcm = this.buffer.subarray(0, this.filled);
    this.buffer = new Int16Array(this.chunkSamples);
    this.filled = 0;
    yield { type: 'audio', pcm };
  }

  private *handOutIfFull(): Generator<TtsEvent> {
    if (this.filled < this.chunkSamples) return;
    yield* this.flush();
  }
}
