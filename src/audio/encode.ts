import type { FormatId } from '../catalog/formats.js';
import { encodeAlaw, encodeMulaw } from './g711.js';
import { encodeMp3 } from './mp3-encoder.js';
import { encodeOggOpus } from './ogg-opus-encoder.js';
import { wavHeader } from './wav.js';

/** The samples' own memory as bytes (no copy): the caller hands over the array. */
function pcmBytes(pcm: Int16Array): Buffer {
  // Int16Array is little-endian on every platform Node supports (x86-64, arm64).
  return Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
}

function viewAsBuffer(bytes: Uint8Array): Buffer {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/**
 * Encodes mono PCM16 at `sampleRateHz` into a delivery format. The rate must already be one
 * the format permits (the catalog checks requests); `serial` makes Ogg output deterministic.
 */
export function encodeAudio(format: FormatId, pcm: Int16Array, sampleRateHz: number, serial = 0): Buffer {
  switch (format) {
    case 'pcm16':
      return pcmBytes(pcm);
    case 'wav':
      return Buffer.concat([wavHeader(sampleRateHz, pcm.byteLength), pcmBytes(pcm)]);
    case 'mulaw':
      return viewAsBuffer(encodeMulaw(pcm));
    case 'alaw':
      return viewAsBuffer(encodeAlaw(pcm));
    case 'mp3':
      return encodeMp3(pcm, sampleRateHz);
    case 'opus':
      return encodeOggOpus(pcm, sampleRateHz, serial);
  }
}
