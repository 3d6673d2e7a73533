/** RIFF WAVE: writing PCM16 files and reading the encodings recognition accepts. */

/** Size of the canonical 44-byte PCM WAVE header. */
export const WAV_HEADER_BYTES = 44;

/** Writes the canonical header of a mono PCM16 WAVE file holding `dataBytes` of samples. */
export function wavHeader(sampleRateHz: number, dataBytes: number): Buffer {
  const header = Buffer.alloc(WAV_HEADER_BYTES);
  header.write('RIFF', 0, 'ascii');
  header.writeUInt32LE(36 + dataBytes, 4);
  header.write('WAVE', 8, 'ascii');
  header.write('fmt ', 12, 'ascii');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20); // PCM
  header.writeUInt16LE(1, 22); // mono
  header.writeUInt32LE(sampleRateHz, 24);
  header.writeUInt32LE(sampleRateHz * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'ascii');
  header.writeUInt32LE(dataBytes, 40);
  return header;
}

/** Sample encodings a WAVE file may carry that we read. */
export type WavEncoding = 'pcm' | 'float' | 'alaw' | 'mulaw';

/** The `fmt ` chunk and the location of the `data` chunk. */
export interface WavInfo {
  readonly encoding: WavEncoding;
  readonly channels: number;
  readonly sampleRateHz: number;
  readonly bitsPerSample: number;
  readonly dataOffset: number;
  readonly dataBytes: number;
}

/** A WAVE file that cannot be read, with the reason. */
export class WavFormatError extends Error {
  override name = 'WavFormatError';
  /** True when the file is a WAVE file whose sample encoding we do not read. */
  constructor(
    message: string,
    readonly unsupportedEncoding = false,
  ) {
    super(message);
  }
}

const FORMAT_TAGS: Record<number, WavEncoding> = { 1: 'pcm', 3: 'float', 6: 'alaw', 7: 'mulaw' };
const EXTENSIBLE = 0xfffe;

/** True when the bytes begin like a RIFF WAVE file. */
export function looksLikeWav(bytes: Uint8Array): boolean {
  return bytes.length >= 12 && ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WAVE';
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset + offset, length).toString('latin1');
}

/**
 * Reads the chunk list of a WAVE file. A `data` chunk whose declared size runs past the end
 * of the file (as streaming writers leave it) is read up to the end of the file.
 */
export function parseWav(bytes: Uint8Array): WavInfo {
  if (!looksLikeWav(bytes)) throw new WavFormatError('not a RIFF WAVE file');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 12;
  let format: Omit<WavInfo, 'dataOffset' | 'dataBytes'> | undefined;
  while (offset + 8 <= bytes.length) {
    const id = ascii(bytes, offset, 4);
    const size = view.getUint32(offset + 4, true);
    const body = offset + 8;
    if (id === 'fmt ') {
      if (size < 16 || body + 16 > bytes.length) throw new WavFormatError('the fmt chunk is truncated');
      let tag = view.getUint16(body, true);
      if (tag === EXTENSIBLE && size >= 40) tag = view.getUint16(body + 24, true);
      const encoding = FORMAT_TAGS[tag];
      const channels = view.getUint16(body + 2, true);
      const sampleRateHz = view.getUint32(body + 4, true);
      const bitsPerSample = view.getUint16(body + 14, true);
      if (!encoding) throw new WavFormatError(`WAVE format tag 0x${tag.toString(16)} is not supported; use PCM, float, A-law or µ-law`, true);
      if (channels < 1 || channels > 8) throw new WavFormatError(`${channels} channels is not a valid channel count`);
      if (sampleRateHz < 1000 || sampleRateHz > 384000) throw new WavFormatError(`sample rate ${sampleRateHz} Hz is out of range`);
      const validBits =
        (encoding === 'pcm' && [8, 16, 24, 32].includes(bitsPerSample)) ||
        (encoding === 'float' && [32, 64].includes(bitsPerSample)) ||
        ((encoding === 'alaw' || encoding === 'mulaw') && bitsPerSample === 8);
      if (!validBits) throw new WavFormatError(`${bitsPerSample}-bit ${encoding} samples are not supported`, true);
      format = { encoding, channels, sampleRateHz, bitsPerSample };
    } else if (id === 'data') {
      if (!format) throw new WavFormatError('the data chunk comes before the fmt chunk');
      const available = bytes.length - body;
      const dataBytes = Math.min(size, available);
      const frame = (format.bitsPerSample / 8) * format.channels;
      return { ...format, dataOffset: body, dataBytes: dataBytes - (dataBytes % frame) };
    }
    offset = body + size + (size % 2);
  }
  throw new WavFormatError(format ? 'the file has no data chunk' : 'the file has no fmt chunk');
}
