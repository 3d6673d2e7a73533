import opus from '@discordjs/opus';
import { OggPageWriter, PAGE_FLAGS } from './ogg-page-writer.js';

/** Opus frame length: 20 ms, the telephony and WebRTC norm. */
const FRAME_MS = 20;
/** Encoder look-ahead of libopus in the AUDIO application (6.5 ms), in 48 kHz samples. */
const PRE_SKIP_48K = 312;
/**
 * Encoder complexity (0 … 10). Measured here: 10 runs at about 150× real time, 4 at over
 * 250×; for speech at these bit rates the difference is hard to hear, and batch requests and
 * realtime calls must never wait on the encoder.
 */
const COMPLEXITY = 4;
/** OPUS_SET_COMPLEXITY_REQUEST from opus_defines.h. */
const OPUS_SET_COMPLEXITY = 4010;
/** Packets per Ogg page: 1 s of audio, so pages stay small for streaming. */
const PACKETS_PER_PAGE = 50;

/** Bit rate for speech at a rate: enough for clear wideband speech, small for narrowband. */
function bitrateFor(sampleRateHz: number): number {
  if (sampleRateHz <= 8000) return 16_000;
  if (sampleRateHz <= 16_000) return 24_000;
  return 32_000;
}

function opusHead(sampleRateHz: number): Buffer {
  const head = Buffer.alloc(19);
  head.write('OpusHead', 0, 'ascii');
  head.writeUInt8(1, 8); // version
  head.writeUInt8(1, 9); // channels
  head.writeUInt16LE(PRE_SKIP_48K, 10);
  head.writeUInt32LE(sampleRateHz, 12); // rate of the source, informational
  head.writeInt16LE(0, 16); // output gain
  head.writeUInt8(0, 18); // mapping family 0: mono/stereo
  return head;
}

function opusTags(): Buffer {
  const vendor = Buffer.from('sprachrohr', 'utf8');
  const tags = Buffer.alloc(8 + 4 + vendor.length + 4);
  tags.write('OpusTags', 0, 'ascii');
  tags.writeUInt32LE(vendor.length, 8);
  vendor.copy(tags, 12);
  tags.writeUInt32LE(0, 12 + vendor.length);
  return tags;
}

/**
 * Encodes mono PCM16 into an Ogg Opus file (RFC 7845) with 20 ms frames. The stream's
 * `serial` is an input so that the same request gives the same bytes.
 */
export function encodeOggOpus(pcm: Int16Array, sampleRateHz: number, serial: number): Buffer {
  const encoder = new opus.OpusEncoder(sampleRateHz, 1);
  encoder.setBitrate(bitrateFor(sampleRateHz));
  encoder.applyEncoderCTL(OPUS_SET_COMPLEXITY, COMPLEXITY);
  const frameSamples = (sampleRateHz * FRAME_MS) / 1000;
  const toGranule = 48_000 / sampleRateHz;
  // Feed the look-ahead as trailing silence so the last real samples come out of the decoder.
  const lookahead = Math.ceil(PRE_SKIP_48K / toGranule);
  const frames = Math.max(1, Math.ceil((pcm.length + lookahead) / frameSamples));
  const writer = new OggPageWriter(serial);
  const out: Buffer[] = [
    writer.page([opusHead(sampleRateHz)], 0n, PAGE_FLAGS.beginOfStream),
    writer.page([opusTags()], 0n),
  ];
  const frameBuffer = Buffer.alloc(frameSamples * 2);
  const endGranule = BigInt(PRE_SKIP_48K + Math.round(pcm.length * toGranule));
  let pending: Buffer[] = [];
  for (let i = 0; i < frames; i++) {
    frameBuffer.fill(0);
    const start = i * frameSamples;
    const slice = pcm.subarray(start, Math.min(start + frameSamples, pcm.length));
    Buffer.from(slice.buffer, slice.byteOffset, slice.byteLength).copy(frameBuffer);
    pending.push(encoder.encode(frameBuffer));
    const last = i === frames - 1;
    if (pending.length === PACKETS_PER_PAGE || last) {
      const granule = last ? endGranule : BigInt(Math.round((i + 1) * frameSamples * toGranule));
      out.push(writer.page(pending, granule, last ? PAGE_FLAGS.endOfStream : 0));
      pending = [];
    }
  }
  return Buffer.concat(out);
}
