import { createMp3Encoder, type WasmMediaEncoder } from 'wasm-media-encoders';

type Mp3Bitrate = 24 | 32 | 48 | 64;

/** Constant bit rate for mono speech per sample-rate band (MPEG-2.5, MPEG-2, MPEG-1). */
function bitrateFor(sampleRateHz: number): Mp3Bitrate {
  if (sampleRateHz <= 12_000) return 24;
  if (sampleRateHz <= 24_000) return 48;
  return 64;
}

/**
 * The LAME encoder compiled to WebAssembly. One instance serves the whole process: an encode
 * runs synchronously from configure to finalize, so calls never interleave.
 */
let encoder: WasmMediaEncoder<'audio/mpeg'> | undefined;

/** Loads the encoder; call once at start so the first request does not pay for it. */
export async function loadMp3Encoder(): Promise<void> {
  encoder ??= await createMp3Encoder();
}

/** Encodes mono PCM16 as a constant-bit-rate MP3 stream. {@link loadMp3Encoder} must have run. */
export function encodeMp3(pcm: Int16Array, sampleRateHz: number): Buffer {
  if (!encoder) throw new Error('the MP3 encoder is not loaded; call loadMp3Encoder() at start');
  encoder.configure({ sampleRate: sampleRateHz, channels: 1, bitrate: bitrateFor(sampleRateHz) });
  const samples = new Float32Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) samples[i] = pcm[i]! / 32768;
  // encode() and finalize() return views into WebAssembly memory: copy before the next call.
  const body = Buffer.from(encoder.encode([samples]));
  const tail = Buffer.from(encoder.finalize());
  return Buffer.concat([body, tail]);
}
