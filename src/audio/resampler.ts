import SpeexResamplerModule from '@echogarden/speex-resampler-wasm/simd';
import { concatPcm } from './pcm.js';

interface SpeexModule {
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  _speex_resampler_init(channels: number, inRate: number, outRate: number, quality: number, errorPointer: number): number;
  _speex_resampler_process_int(state: number, channel: number, input: number, inputLength: number, output: number, outputLength: number): number;
  _speex_resampler_get_input_latency(state: number): number;
  _speex_resampler_skip_zeros(state: number): number;
  _speex_resampler_destroy(state: number): void;
  HEAP16: Int16Array;
  HEAPU32: Uint32Array;
}

let speex: SpeexModule | undefined;

/** Loads the Speex resampler (WebAssembly, SIMD); call once at start. */
export async function loadResampler(): Promise<void> {
  speex ??= (await (SpeexResamplerModule as unknown as () => Promise<SpeexModule>)()) as SpeexModule;
}

/**
 * Quality 3 of 10: cheap and clean for speech; higher settings cost more without audible gain
 * on telephone audio (docs/performance.md, "Measurements behind the code's choices").
 */
const QUALITY = 3;

/**
 * A streaming mono PCM16 rate converter (SpeexDSP). Feed chunks with {@link process}, then
 * {@link flush} once to get the tail the filter holds back; {@link destroy} frees it.
 */
export class Resampler {
  private state: number;
  private readonly module: SpeexModule;
  private readonly ratio: number;

  constructor(
    readonly inputRateHz: number,
    readonly outputRateHz: number,
  ) {
    if (!speex) throw new Error('the resampler is not loaded; call loadResampler() at start');
    this.module = speex;
    const error = this.module._malloc(4);
    this.state = this.module._speex_resampler_init(1, inputRateHz, outputRateHz, QUALITY, error);
    const code = this.module.HEAPU32[error >> 2]!;
    this.module._free(error);
    if (this.state === 0 || code !== 0) throw new Error(`the resampler could not start (${inputRateHz} → ${outputRateHz} Hz, error ${code})`);
    this.ratio = outputRateHz / inputRateHz;
    // Drop the filter's leading delay, so output sample n lines up with input time n / rate.
    this.module._speex_resampler_skip_zeros(this.state);
  }

  /** Converts one chunk; the output may be a few samples shorter or longer than the ratio says. */
  process(input: Int16Array): Int16Array {
    if (this.state === 0) throw new Error('the resampler was destroyed');
    if (input.length === 0) return new Int16Array(0);
    const m = this.module;
    const capacity = Math.ceil(input.length * this.ratio) + 64;
    const inputPointer = m._malloc(input.length * 2);
    const outputPointer = m._malloc(capacity * 2);
    const lengths = m._malloc(8);
    try {
      m.HEAP16.set(input, inputPointer >> 1);
      const out: Int16Array[] = [];
      let consumed = 0;
      while (consumed < input.length) {
        m.HEAPU32[lengths >> 2] = input.length - consumed;
        m.HEAPU32[(lengths >> 2) + 1] = capacity;
        m._speex_resampler_process_int(this.state, 0, inputPointer + consumed * 2, lengths, outputPointer, lengths + 4);
        const used = m.HEAPU32[lengths >> 2]!;
        const written = m.HEAPU32[(lengths >> 2) + 1]!;
        out.push(m.HEAP16.slice(outputPointer >> 1, (outputPointer >> 1) + written));
        consumed += used;
        if (used === 0 && written === 0) break;
      }
      return concatPcm(out);
    } finally {
      m._free(inputPointer);
      m._free(outputPointer);
      m._free(lengths);
    }
  }

  /** Pushes the filter's look-ahead out with silence and returns the held-back tail. */
  flush(): Int16Array {
    const latency = this.module._speex_resampler_get_input_latency(this.state);
    const tail = this.process(new Int16Array(latency));
    return tail;
  }

  destroy(): void {
    if (this.state !== 0) this.module._speex_resampler_destroy(this.state);
    this.state = 0;
  }
}
