/**
 * WebRTC's voice activity detector (libfvad, compiled to WebAssembly: `@echogarden/fvad-wasm`).
 * It classifies 10, 20 or 30 ms frames of PCM16 at 8, 16, 32 or 48 kHz as speech or not, in a
 * few microseconds per frame, so it runs on the event loop.
 */
import fvad from '@echogarden/fvad-wasm';

/** Rates the detector classifies natively. */
export const VAD_SAMPLE_RATES_HZ: readonly number[] = [8000, 16000, 32000, 48000];

/** How eagerly audio counts as speech: 0 (most speech kept) to 3 (least noise let through). */
export type VadAggressiveness = 0 | 1 | 2 | 3;

interface FvadModule {
  _fvad_new(): number;
  _fvad_free(instance: number): void;
  _fvad_set_mode(instance: number, mode: number): number;
  _fvad_set_sample_rate(instance: number, rate: number): number;
  _fvad_process(instance: number, pointer: number, length: number): number;
  _malloc(bytes: number): number;
  _free(pointer: number): void;
  HEAP16: Int16Array;
}

let modulePromise: Promise<FvadModule> | null = null;
let loaded: FvadModule | null = null;

/** Loads the WebAssembly module (once per thread); detectors can then be made synchronously. */
export async function loadWebRtcVad(): Promise<void> {
  modulePromise ??= (fvad as unknown as () => Promise<FvadModule>)();
  loaded = await modulePromise;
}

/** One detector for one stream (it keeps state between frames). */
export class WebRtcVad {
  /** Samples per frame (20 ms). */
  readonly frameSamples: number;
  private readonly pointer: number;
  private instance: number;

  private constructor(
    private readonly module: FvadModule,
    readonly sampleRateHz: number,
    aggressiveness: VadAggressiveness,
  ) {
    this.frameSamples = sampleRateHz / 50;
    this.instance = module._fvad_new();
    if (this.instance === 0) throw new Error('the voice activity detector could not be created');
    if (module._fvad_set_mode(this.instance, aggressiveness) !== 0 || module._fvad_set_sample_rate(this.instance, sampleRateHz) !== 0) {
      module._fvad_free(this.instance);
      throw new RangeError(`the voice activity detector does not take ${sampleRateHz} Hz or aggressiveness ${aggressiveness}`);
    }
    this.pointer = module._malloc(this.frameSamples * 2);
  }

  /**
   * A detector for 20 ms frames at one of {@link VAD_SAMPLE_RATES_HZ}.
   * @throws Error when {@link loadWebRtcVad} has not finished yet.
   */
  static create(sampleRateHz: number, aggressiveness: VadAggressiveness = 2): WebRtcVad {
    if (!loaded) throw new Error('loadWebRtcVad() must finish before a detector is made');
    if (!VAD_SAMPLE_RATES_HZ.includes(sampleRateHz))
      throw new RangeError(`voice activity detection runs at ${VAD_SAMPLE_RATES_HZ.join(', ')} Hz, not ${sampleRateHz}`);
    return new WebRtcVad(loaded, sampleRateHz, aggressiveness);
  }

  /** Whether one 20 ms frame (exactly {@link frameSamples} samples) holds speech. */
  isSpeech(frame: Int16Array): boolean {
    if (this.instance === 0) throw new Error('the voice activity detector is closed');
    if (frame.length !== this.frameSamples) throw new RangeError(`a frame has ${this.frameSamples} samples, not ${frame.length}`);
    // The heap may have grown (and moved) since the last frame: take the view anew.
    this.module.HEAP16.set(frame, this.pointer >> 1);
    return this.module._fvad_process(this.instance, this.pointer, frame.length) === 1;
  }

  /** Frees the detector; later calls fail. */
  close(): void {
    if (this.instance === 0) return;
    this.module._free(this.pointer);
    this.module._fvad_free(this.instance);
    this.instance = 0;
  }
}
