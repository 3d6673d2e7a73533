import { FLACDecoderWebWorker } from '@wasm-audio-decoders/flac';
import { OggOpusDecoderWebWorker } from 'ogg-opus-decoder';
import { decodeAlaw, decodeMulaw } from './g711.js';
import { looksLikeWav, parseWav, WavFormatError, type WavInfo } from './wav.js';

/** Containers recognition accepts, detected from the bytes. */
export type Container = 'wav' | 'ogg-opus' | 'flac';

/** Decoded audio: mono samples in [-1, 1] and what the file declared. */
export interface DecodedAudio {
  readonly container: Container;
  readonly encoding: string;
  readonly sampleRateHz: number;
  readonly channels: number;
  readonly durationSeconds: number;
  /** Mono samples (channels averaged) at `sampleRateHz`. */
  readonly samples: Float32Array;
}

/** Why audio could not be decoded: an unsupported format, or a supported one that is broken. */
export class AudioDecodeError extends Error {
  override name = 'AudioDecodeError';
  constructor(
    readonly reason: 'unsupported' | 'invalid',
    message: string,
  ) {
    super(message);
  }
}

/** Identifies the container from its first bytes; `undefined` for anything we do not accept. */
export function detectContainer(bytes: Uint8Array): Container | 'ogg-other' | undefined {
  if (looksLikeWav(bytes)) return 'wav';
  const magic = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 64));
  if (magic.subarray(0, 4).toString('latin1') === 'fLaC') return 'flac';
  if (magic.subarray(0, 4).toString('latin1') === 'OggS') {
    // The first page of an Ogg Opus stream holds the OpusHead packet right after the lacing.
    const segments = magic[26] ?? 0;
    const packetStart = 27 + segments;
    return magic.subarray(packetStart, packetStart + 8).toString('latin1') === 'OpusHead' ? 'ogg-opus' : 'ogg-other';
  }
  return undefined;
}

/** Describes unrecognised bytes for an error detail (common formats named by their magic). */
function describeUnknown(bytes: Uint8Array): string {
  const head = Buffer.from(bytes.buffer, bytes.byteOffset, Math.min(bytes.length, 12));
  if (head.subarray(0, 3).toString('latin1') === 'ID3' || (head[0] === 0xff && ((head[1] ?? 0) & 0xe0) === 0xe0)) return 'MP3 audio';
  if (head.subarray(4, 8).toString('latin1') === 'ftyp') return 'an MP4/M4A file';
  if (head.subarray(0, 4).toString('latin1') === 'RIFF') return 'a RIFF file that is not WAVE';
  if (head.subarray(0, 4).toString('hex') === '1a45dfa3') return 'a WebM/Matroska file';
  return 'data in no audio container we accept';
}

/**
 * Checks the header of a file before decoding: refuses unsupported containers and encodings,
 * and returns the WAVE header when there is one (its duration is known without decoding).
 */
export function inspectAudio(bytes: Uint8Array): { container: Container; wav?: WavInfo } {
  if (bytes.length === 0) throw new AudioDecodeError('invalid', 'the audio file is empty');
  const container = detectContainer(bytes);
  if (container === 'ogg-other') throw new AudioDecodeError('unsupported', 'the Ogg stream is not Opus; send Ogg Opus, FLAC or WAV');
  if (!container) throw new AudioDecodeError('unsupported', `the upload is ${describeUnknown(bytes)}; send WAV, Ogg Opus or FLAC`);
  if (container !== 'wav') return { container };
  try {
    return { container, wav: parseWav(bytes) };
  } catch (error) {
    if (error instanceof WavFormatError) throw new AudioDecodeError(error.unsupportedEncoding ? 'unsupported' : 'invalid', error.message);
    throw error;
  }
}

/** Seconds of audio a WAVE header declares. */
export function wavDurationSeconds(info: WavInfo): number {
  return info.dataBytes / ((info.bitsPerSample / 8) * info.channels) / info.sampleRateHz;
}

function wavToMono(bytes: Uint8Array, info: WavInfo): Float32Array {
  const data = bytes.subarray(info.dataOffset, info.dataOffset + info.dataBytes);
  const view = new DataView(data.buffer, data.byteOffset, data.byteLength);
  const bytesPerSample = info.bitsPerSample / 8;
  const frames = info.dataBytes / (bytesPerSample * info.channels);
  const mono = new Float32Array(frames);
  let decodedG711: Int16Array | undefined;
  if (info.encoding === 'alaw') decodedG711 = decodeAlaw(data);
  if (info.encoding === 'mulaw') decodedG711 = decodeMulaw(data);
  const read = (index: number): number => {
    const at = index * bytesPerSample;
    if (decodedG711) return decodedG711[index]! / 32768;
    if (info.encoding === 'float') return info.bitsPerSample === 32 ? view.getFloat32(at, true) : view.getFloat64(at, true);
    switch (info.bitsPerSample) {
      case 8:
        return (view.getUint8(at) - 128) / 128;
      case 16:
        return view.getInt16(at, true) / 32768;
      case 24:
        return (view.getUint8(at) | (view.getUint8(at + 1) << 8) | (view.getInt8(at + 2) << 16)) / 8388608;
      default:
        return view.getInt32(at, true) / 2147483648;
    }
  };
  for (let frame = 0, index = 0; frame < frames; frame++) {
    let sum = 0;
    for (let c = 0; c < info.channels; c++) sum += read(index++);
    mono[frame] = sum / info.channels;
  }
  return mono;
}

function mixDown(channelData: Float32Array[], samples: number): Float32Array {
  if (channelData.length === 1) return channelData[0]!.subarray(0, samples);
  const mono = new Float32Array(samples);
  for (const channel of channelData) for (let i = 0; i < samples; i++) mono[i]! += channel[i]! / channelData.length;
  return mono;
}

/**
 * Decodes a WAVE, Ogg Opus or FLAC file to mono samples. Opus and FLAC decode in a worker
 * thread (the WebAssembly decoders' own), so a large upload does not stall the event loop.
 */
export async function decodeAudio(bytes: Uint8Array): Promise<DecodedAudio> {
  const { container, wav } = inspectAudio(bytes);
  if (wav) {
    if (wav.dataBytes === 0) throw new AudioDecodeError('invalid', 'the WAVE file holds no samples');
    const samples = wavToMono(bytes, wav);
    const encoding = wav.encoding === 'pcm' || wav.encoding === 'float' ? `${wav.encoding}${wav.bitsPerSample}` : wav.encoding;
    return { container, encoding, sampleRateHz: wav.sampleRateHz, channels: wav.channels, durationSeconds: samples.length / wav.sampleRateHz, samples };
  }
  const decoder = container === 'flac' ? new FLACDecoderWebWorker() : new OggOpusDecoderWebWorker();
  try {
    await decoder.ready;
    const result = await decoder.decodeFile(bytes);
    if (result.samplesDecoded === 0) {
      const reason = result.errors[0]?.message ?? 'no audio frames were found';
      throw new AudioDecodeError('invalid', `the ${container === 'flac' ? 'FLAC' : 'Ogg Opus'} stream could not be decoded: ${reason}`);
    }
    const samples = mixDown(result.channelData, result.samplesDecoded);
    return {
      container,
      encoding: container === 'flac' ? 'flac' : 'opus',
      sampleRateHz: result.sampleRate,
      channels: result.channelData.length,
      durationSeconds: result.samplesDecoded / result.sampleRate,
      samples,
    };
  } finally {
    await decoder.free();
  }
}
