/**
 * A recognition session: PCM16 audio in (at one rate), partial and final transcripts out,
 * each with the candidate language it is in. Every transport uses it: `POST /v1/stt` writes a
 * whole recording and keeps the finals, `/v1/stt/stream` forwards its events as frames.
 *
 * With several candidates on different recognisers, each recogniser hears the audio; every
 * utterance's final comes from the recogniser most sure of it (duration-weighted word
 * confidence; the first candidate on a tie), and partials from the one most sure of its
 * current guess, so a change of language between utterances shows in `lang`.
 */
import { AsyncQueue } from '../../engine/async-queue.js';
import type { RecognisedWord, SttEngine, SttEvent, SttStream } from '../../engine/types.js';
import { Resampler } from '../audio/resampler.js';

/**
 * What a session says. `audioSeconds`: for a partial, the audio its guess had heard; for a
 * final, the audio the session had received when it was said.
 */
export type RecognitionSessionEvent =
  | { readonly type: 'partial'; readonly text: string; readonly words: readonly RecognisedWord[]; readonly lang: string; readonly audioSeconds: number }
  | {
      readonly type: 'final';
      readonly text: string;
      readonly words: readonly RecognisedWord[];
      readonly lang: string;
      readonly audioSeconds: number;
      readonly startSeconds: number;
      readonly endSeconds: number;
    };

/** One candidate's recogniser and the stream it decodes. */
interface Listener {
  readonly language: string;
  readonly stream: SttStream;
  readonly resampler: Resampler | null;
  latestPartial: (SttEvent & { type: 'partial' }) | null;
  readonly finals: Array<SttEvent & { type: 'final' }>;
  done: boolean;
}

/** How sure a recogniser is of some words: duration-weighted mean confidence. */
export function confidenceOf(words: readonly RecognisedWord[]): number {
  const spoken = words.reduce((sum, word) => sum + (word.end - word.start), 0);
  if (spoken > 0) return words.reduce((sum, word) => sum + word.conf * (word.end - word.start), 0) / spoken;
  return words.length > 0 ? words.reduce((sum, word) => sum + word.conf, 0) / words.length : 0;
}

/** Picks the index with the highest score; the first on a tie. */
function best<T>(items: readonly T[], score: (item: T) => number): number {
  let chosen = 0;
  items.forEach((item, index) => {
    if (score(item) > score(items[chosen]!)) chosen = index;
  });
  return chosen;
}

/** A live recognition over one or more candidate languages. */
export class RecognitionSession implements AsyncIterable<RecognitionSessionEvent> {
  private readonly listeners: Listener[];
  private readonly events = new AsyncQueue<RecognitionSessionEvent | null>();
  private samplesIn = 0;
  private finalsOut = 0;
  private ended = false;

  /**
   * Opens a stream per distinct recogniser (candidates served by the same one share it: the
   * first of them names the language).
   * @param candidates each candidate's language and its engine, in the caller's order
   * @param rateHz the rate of the audio the caller writes
   * @throws RecognitionCapacityError when a recogniser takes no more streams (none stays open)
   */
  constructor(
    candidates: ReadonlyArray<{ language: string; engine: SttEngine }>,
    vocabulary: readonly string[],
    private readonly rateHz: number,
    signal: AbortSignal,
    /** Silence that ends an utterance (see `SttStreamOptions.endSilenceMs`); the engines' own when absent. */
    endSilenceMs?: number,
  ) {
    const distinct = candidates.filter((entry, index) => candidates.findIndex((other) => other.engine === entry.engine) === index);
    this.listeners = [];
    try {
      for (const { language, engine } of distinct) {
        const engineRate = engine.capabilities.sampleRatesHz.includes(rateHz) ? rateHz : engine.capabilities.sampleRatesHz[0]!;
        const stream = engine.open({ language, vocabulary, sampleRateHz: engineRate, ...(endSilenceMs === undefined ? {} : { endSilenceMs }) }, signal);
        this.listeners.push({
          language,
          stream,
          resampler: engineRate === rateHz ? null : new Resampler(rateHz, engineRate),
          latestPartial: null,
          finals: [],
          done: false,
        });
      }
    } catch (error) {
      this.close();
      throw error;
    }
    for (const listener of this.listeners) void this.listen(listener);
  }

  /** Audio heard so far, in seconds. */
  get audioSeconds(): number {
    return this.samplesIn / this.rateHz;
  }

  /** Adds PCM16 mono audio at the session's rate. */
  write(pcm: Int16Array): void {
    if (this.ended) throw new Error('the recognition session has ended');
    this.samplesIn += pcm.length;
    for (const listener of this.listeners) listener.stream.write(listener.resampler ? listener.resampler.process(pcm) : pcm);
  }

  /** No more audio: the utterance in progress is finished, then the events end. */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    for (const listener of this.listeners) {
      if (listener.resampler) listener.stream.write(listener.resampler.flush());
      listener.stream.end();
    }
  }

  /** Ends the streams without waiting for results (the caller went away). */
  close(): void {
    this.ended = true;
    for (const listener of this.listeners) {
      listener.stream.end();
      listener.resampler?.destroy();
    }
  }

  private async listen(listener: Listener): Promise<void> {
    try {
      for await (const event of listener.stream) {
        if (event.type === 'partial') {
          listener.latestPartial = event;
          this.emitPartial();
        } else {
          listener.finals.push(event);
          this.emitFinals();
        }
      }
      listener.done = true;
      this.emitFinals();
      if (this.listeners.every((other) => other.done)) {
        for (const other of this.listeners) other.resampler?.destroy();
        this.events.push(null);
      }
    } catch (error) {
      this.close();
      this.events.fail(error as Error);
    }
  }

  private emitPartial(): void {
    const guesses = this.listeners.filter((listener) => listener.latestPartial !== null);
    const chosen = guesses[best(guesses, (listener) => confidenceOf(listener.latestPartial!.words))]!;
    const partial = chosen.latestPartial!;
    // The audio the guess had heard, not all that has arrived since: what a caller's lag is measured by.
    this.events.push({ type: 'partial', text: partial.text, words: partial.words, lang: chosen.language, audioSeconds: partial.audioSeconds });
  }

  /**
   * Emits the utterances every recogniser has closed or finished without (the k-th final of
   * each belongs to the same utterance: they hear the same audio through the same detector).
   */
  private emitFinals(): void {
    for (;;) {
      const index = this.finalsOut;
      if (!this.listeners.every((listener) => listener.done || listener.finals.length > index)) return;
      const ready = this.listeners.filter((listener) => listener.finals.length > index);
      if (ready.length === 0) return;
      const chosen = ready[best(ready, (listener) => confidenceOf(listener.finals[index]!.words))]!;
      const final = chosen.finals[index]!;
      this.finalsOut += 1;
      for (const listener of this.listeners) listener.latestPartial = null;
      this.events.push({
        type: 'final',
        text: final.text,
        words: final.words,
        lang: chosen.language,
        audioSeconds: this.audioSeconds,
        startSeconds: final.startSeconds,
        endSeconds: final.endSeconds,
      });
    }
  }

  async *[Symbol.asyncIterator](): AsyncIterator<RecognitionSessionEvent> {
    for (;;) {
      const event = await this.events.next();
      if (event === null) return;
      yield event;
    }
  }
}
