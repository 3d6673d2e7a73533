/** Messages between the background encoder (`background-encoder.ts`) and its worker thread. */
import type { FormatId } from '../catalog/formats.js';

/** A run of samples at one rate, in the order they are heard. */
export interface PcmRun {
  readonly pcm: Int16Array;
  readonly rateHz: number;
}

/** To the worker: open a stream, add audio to it, finish it (answered), or drop it. */
export type EncoderCommand =
  | {
      readonly type: 'open';
      readonly id: number;
      readonly format: FormatId;
      readonly sampleRateHz: number;
      /** The Ogg stream serial (equal requests give equal files). */
      readonly serial: number;
    }
  | { readonly type: 'write'; readonly id: number; readonly runs: readonly PcmRun[] }
  | { readonly type: 'finish'; readonly id: number }
  | { readonly type: 'abandon'; readonly id: number };

/** From the worker: a finished stream, or why it failed. */
export type EncodeResult =
  | { readonly id: number; readonly ok: true; readonly audio: Uint8Array; readonly samples: number }
  | { readonly id: number; readonly ok: false; readonly message: string };
