/**
 * Turns an engine that decodes one utterance at a time into a recognition stream: a voice
 * activity detector finds where speech starts and ends, the engine hears each utterance (with
 * a little audio from before it), partial results are asked for every 250 ms of speech, and a
 * final closes each utterance at the end of speech or of the stream.
 */
import { AsyncQueue } from '../async-queue.js';
import type { Hypothesis, RecognisedWord, SttEvent, SttStream } from '../types.js';
import { DEFAULT_ENDPOINTER_OPTIONS, Endpointer, type EndpointerOptions } from '../vad/endpointer.js';
import type { FrameClassifier } from '../vad/frame-classifier.js';

/** What an engine does with one utterance; calls arrive in order, one utterance at a time. */
export interface UtteranceDecoder {
  /** A new utterance begins. */
  start(): void;
  /** Audio of the utterance (PCM16 mono at the stream's rate). */
  write(pcm: Int16Array): void;
  /** The words so far, or `null` when there are none yet. */
  partial(): Promise<Hypothesis | null>;
  /** The utterance is over: its words, times from its first sample. */
  finish(): Promise<Hypothesis>;
  /** Frees the decoder; nothing is asked of it afterwards. */
  close(): void;
}

/** How often partial results are asked for, in audio time, while speech continues. */
export const PARTIAL_INTERVAL_MS = 250;

const round = (seconds: number): number => Math.round(seconds * 1000) / 1000;

function shifted(hypothesis: Hypothesis, offsetSeconds: number): Hypothesis {
  const words: RecognisedWord[] = hypothesis.words.map((word) => ({ ...word, start: round(word.start + offsetSeconds), end: round(word.end + offsetSeconds) }));
  return { text: hypothesis.text, words };
}

/** A recognition stream over an utterance decoder and a voice activity detector. */
export class EndpointedStream implements SttStream {
  private readonly events = new AsyncQueue<SttEvent | null>();
  private readonly endpointer: Endpointer;
  private readonly frameSamples: number;
  private readonly partialEverySamples: number;
  private remainder = new Int16Array(0);
  /** Results are delivered in the order they were asked for. */
  private delivery: Promise<void> = Promise.resolve();
  private samplesSeen = 0;
  private utteranceStart = 0;
  private samplesSincePartial = 0;
  private lastPartialText = '';
  private ended = false;
  private closed = false;
  private iterating = false;
  private forgetSignal: () => void = () => undefined;

  constructor(
    private readonly decoder: UtteranceDecoder,
    private readonly vad: FrameClassifier,
    private readonly sampleRateHz: number,
    signal: AbortSignal,
    endpointer: EndpointerOptions = DEFAULT_ENDPOINTER_OPTIONS,
  ) {
    this.endpointer = new Endpointer(endpointer);
    this.frameSamples = vad.frameSamples;
    this.partialEverySamples = (PARTIAL_INTERVAL_MS / 1000) * sampleRateHz;
    const onAbort = (): void => this.abort(signal.reason);
    if (signal.aborted) onAbort();
    else {
      signal.addEventListener('abort', onAbort, { once: true });
      // A long-lived signal (a call's) must not keep every finished stream alive.
      this.forgetSignal = () => signal.removeEventListener('abort', onAbort);
    }
  }

  write(pcm: Int16Array): void {
    if (this.ended) throw new Error('the recognition stream has ended; open a new one');
    if (this.closed) return;
    let samples = pcm;
    if (this.remainder.length > 0) {
      samples = new Int16Array(this.remainder.length + pcm.length);
      samples.set(this.remainder);
      samples.set(pcm, this.remainder.length);
    }
    let at = 0;
    for (; at + this.frameSamples <= samples.length; at += this.frameSamples) this.frame(samples.slice(at, at + this.frameSamples));
    this.remainder = samples.slice(at);
  }

  end(): void {
    if (this.ended) return;
    this.ended = true;
    if (this.closed) return;
    if (this.endpointer.open) {
      if (this.remainder.length > 0) this.decoder.write(this.remainder);
      this.finishUtterance(this.samplesSeen + this.remainder.length);
    }
    this.remainder = new Int16Array(0);
    this.deliver(async () => {
      this.events.push(null);
      this.close();
    });
  }

  async *[Symbol.asyncIterator](): AsyncIterator<SttEvent> {
    if (this.iterating) throw new Error('a recognition stream is read once');
    this.iterating = true;
    try {
      for (let event = await this.events.next(); event !== null; event = await this.events.next()) yield event;
    } finally {
      // A reader that stops early ends the stream and frees the decoder.
      this.ended = true;
      this.close();
    }
  }

  private frame(frame: Int16Array): void {
    const decision = this.endpointer.push(frame, this.vad.isSpeech(frame));
    const frameStart = this.samplesSeen;
    this.samplesSeen += frame.length;
    switch (decision.kind) {
      case 'silence':
        return;
      case 'start':
        this.utteranceStart = frameStart - (decision.frames.length - 1) * this.frameSamples;
        this.samplesSincePartial = 0;
        this.lastPartialText = '';
        this.decoder.start();
        for (const kept of decision.frames) this.decoder.write(kept);
        return;
      case 'continue':
        this.decoder.write(frame);
        this.samplesSincePartial += frame.length;
        if (this.samplesSincePartial >= this.partialEverySamples) {
          this.samplesSincePartial = 0;
          this.askPartial();
        }
        return;
      case 'end':
        this.decoder.write(frame);
        this.finishUtterance(this.utteranceStart + decision.speechEndFrames * this.frameSamples);
        return;
    }
  }

  private askPartial(): void {
    const result = this.decoder.partial();
    const offset = this.utteranceStart / this.sampleRateHz;
    const audioSeconds = round(this.samplesSeen / this.sampleRateHz);
    this.deliver(async () => {
      const hypothesis = await result;
      if (this.closed || !hypothesis || hypothesis.text === '' || hypothesis.text === this.lastPartialText) return;
      this.lastPartialText = hypothesis.text;
      this.events.push({ type: 'partial', audioSeconds, ...shifted(hypothesis, offset) });
    });
  }

  private finishUtterance(speechEndSample: number): void {
    const result = this.decoder.finish();
    const startSeconds = this.utteranceStart / this.sampleRateHz;
    const endSeconds = speechEndSample / this.sampleRateHz;
    this.deliver(async () => {
      const hypothesis = await result;
      if (this.closed || hypothesis.text === '') return;
      this.events.push({ type: 'final', startSeconds: round(startSeconds), endSeconds: round(endSeconds), ...shifted(hypothesis, startSeconds) });
    });
  }

  private deliver(step: () => Promise<void>): void {
    this.delivery = this.delivery.then(step).catch((error: unknown) => {
      this.events.fail(error instanceof Error ? error : new Error(String(error)));
      this.close();
    });
  }

  private abort(reason: unknown): void {
    const error = reason instanceof Error ? reason : new DOMException('the recognition was aborted', 'AbortError');
    this.events.fail(error);
    this.close();
  }

  private close(): void {
    if (this.closed) return;
    this.closed = true;
    this.forgetSignal();
    this.decoder.close();
    this.vad.close();
  }
}
