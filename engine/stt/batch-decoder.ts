import type { BatchSttEngine, Hypothesis, SttStreamOptions } from '../types.js';
import type { UtteranceDecoder } from './endpointed-stream.js';

/**
 * The batch-to-streaming adapter's decoder: it gathers each utterance and has a batch engine
 * transcribe it at the utterance's end (no partial results).
 */
export class BatchUtteranceDecoder implements UtteranceDecoder {
  private chunks: Int16Array[] = [];
  private readonly controller = new AbortController();

  constructor(
    private readonly engine: BatchSttEngine,
    private readonly options: SttStreamOptions,
  ) {}

  start(): void {
    this.chunks = [];
  }

  write(pcm: Int16Array): void {
    this.chunks.push(pcm);
  }

  async partial(): Promise<Hypothesis | null> {
    return null;
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
