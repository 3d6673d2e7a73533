/**
 * Encoders that take PCM chunk by chunk as synthesis produces it and hand out encoded bytes as
 * soon as they exist. Each call does a chunk's worth of work, so a long synthesis never holds
 * the event loop; the realtime API streams their output, batch requests concatenate it.
 */
import type { FormatId } from '../catalog/formats.js';
import { encodeAlaw, encodeMulaw } from './g711.js';
import { Mp3StreamEncoder } from './mp3-encoder.js';
import { OggOpusStreamEncoder } from './ogg-opus-encoder.js';
import { wavHeader } from './wav.js';

/** A format encoder for one stream. */
export interface StreamEncoder {
  /** Encodes a chunk; returns the bytes that are ready (possibly none). */
  write(pcm: Int16Array): Buffer[];
  /** Flushes and closes; returns the remaining bytes. Call exactly once. */
  end(): Buffer[];
}

function bytesOf(view: Int16Array | Uint8Array): Buffer {
  return Buffer.from(view.buffer, view.byteOffset, view.byteLength);
}

/** Raw PCM16 little-endian: the samples' own bytes (Int16Array is little-endian on x86-64 and arm64). */
class Pcm16Encoder implements StreamEncoder {
  write(pcm: Int16Array): Buffer[] {
    return [bytesOf(pcm)];
  }
  end(): Buffer[] {
    return [];
  }
}

/** G.711 µ-law or A-law, sample by sample. */
class G711Encoder implements StreamEncoder {
  constructor(private readonly law: 'mulaw' | 'alaw') {}
  write(pcm: Int16Array): Buffer[] {
    return [bytesOf(this.law === 'mulaw' ? encodeMulaw(pcm) : encodeAlaw(pcm))];
  }
  end(): Buffer[] {
    return [];
  }
}

/** RIFF WAVE: the header needs the length, so the data is held until the end. */
class WavEncoder implements StreamEncoder {
  private readonly chunks: Buffer[] = [];
  private bytes = 0;
  constructor(private readonly sampleRateHz: number) {}
  write(pcm: Int16Array): Buffer[] {
    this.chunks.push(bytesOf(pcm));
    this.bytes += pcm.byteLength;
    return [];
  }
  end(): Buffer[] {
    return [wavHeader(this.sampleRateHz, this.bytes), ...this.chunks];
  }
}

/**
 * Opens an encoder for one stream. The rate must be one the format permits (the catalog checks
 * requests); `serial` makes Ogg output deterministic.
 */
export async function createStreamEncoder(format: FormatId, sampleRateHz: number, serial: number): Promise<StreamEncoder> {
  switch (format) {
    case 'pcm16':
      return new Pcm16Encoder();
    case 'wav':
      return new WavEncoder(sampleRateHz);
    case 'mulaw':
    case 'alaw':
      return new G711Encoder(format);
    case 'mp3':
      return Mp3StreamEncoder.open(sampleRateHz);
    case 'opus':
      return new OggOpusStreamEncoder(sampleRateHz, serial);
  }
}
