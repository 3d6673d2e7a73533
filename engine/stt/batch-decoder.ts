import type { BatchSttEngine, Hypothesis, SttStreamOptions } from '../types.js';
import type { UtteranceDecoder } from './endpointed-stream.js';

/** A guess at an utterance so far from how long it has lasted (the sandbox's; a batch engine has none). */
export type PartialGuess = (language: string, heardSeconds: number) => Hypothesis | null;

/**
 * The batch-to-streaming adapter's decoder: it gathers each utterance and has a batch engine
 * transcribe it at the utterance's end; partial results only where `guess` makes them.
 */
export class BatchUtteranceDecoder implements UtteranceDecoder {
  private chunks: Int16Array[] = [];
  private samples = 0;
  private readonly controller = new AbortController();

  constructor(
    private readonly engine: BatchSttEngine,
    private readonly options: SttStreamOptions,
    private readonly guess?: PartialGuess,
  ) {}

  start(): void {
    this.chunks = [];
    this.samples = 0;
  }

  write(pcm: Int16Array): void {
    this.chunks.push(pcm);
    this.samples += pcm.length;
  }

  async partial(): Promise<Hypothesis | null> {
    return this.guess?.(this.options.language, this.samples / this.options.sampleRateHz) ?? null;
  }

  async finish(): Promise<Hypothesis> {
    const length = this.chunks.reduce((sum, chunk) => sum + chunk.length, 0);
    const samples = new Float32Array(length);
    let at = 0;
    for (const chunk of this.chunks) for (let i = 0; i < chunk.length; i++) samples[at++] = chunk[i]! / 32768;
    this.chunks = [];
    const result = await this.engine.transcribe(
      samples,
      { candidates: [this.options.language], vocabulary: this.options.vocabulary, sampleRateHz: this.options.sampleRateHz },
      this.controller.signal,
    );
    return { text: result.text, words: result.words };
  }

  close(): void {
    this.chunks = [];
    this.controller.abort();
  }
}
