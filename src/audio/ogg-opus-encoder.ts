import opus from '@discordjs/opus';
import { OggPageWriter, PAGE_FLAGS } from './ogg-page-writer.js';

/** Opus frame length: 20 ms, the telephony and WebRTC norm. */
const FRAME_MS = 20;
/** Encoder look-ahead of libopus in the AUDIO application (6.5 ms), in 48 kHz samples. */
const PRE_SKIP_48K = 312;
/**
 * Encoder complexity (0 … 10). 4 is far faster than 10 (docs/performance.md, "Measurements
 * behind the code's choices"); for speech at these bit rates the difference is hard to hear,
 * and batch requests and realtime calls must never wait on the encoder.
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
 * Mono PCM16 to Ogg Opus (RFC 7845) in 20 ms frames, chunk by chunk. Pages of one second are
 * handed out as they fill; the last page carries the exact end position, so decoders trim the
 * stream to the true length.
 */
export class OggOpusStreamEncoder {
  private readonly encoder: InstanceType<typeof opus.OpusEncoder>;
  private readonly writer: OggPageWriter;
  private readonly frameSamples: number;
  private readonly toGranule: number;
  private readonly frame: Buffer;
  private filled = 0;
  private samplesIn = 0;
  private framesOut = 0;
  private packets: Buffer[] = [];
  private started = false;

  constructor(
    private readonly sampleRateHz: number,
    serial: number,
  ) {
    this.encoder = new opus.OpusEncoder(sampleRateHz, 1);
    this.encoder.setBitrate(bitrateFor(sampleRateHz));
    this.encoder.applyEncoderCTL(OPUS_SET_COMPLEXITY, COMPLEXITY);
    this.writer = new OggPageWriter(serial);
    this.frameSamples = (sampleRateHz * FRAME_MS) / 1000;
    this.toGranule = 48_000 / sampleRateHz;
    this.frame = Buffer.alloc(this.frameSamples * 2);
  }

  write(pcm: Int16Array): Buffer[] {
    const out = this.headers();
    this.samplesIn += pcm.length;
    let offset = 0;
    while (offset < pcm.length) {
      const take = Math.min(this.frameSamples - this.filled, pcm.length - offset);
      const part = pcm.subarray(offset, offset + take);
      Buffer.from(part.buffer, part.byteOffset, part.byteLength).copy(this.frame, this.filled * 2);
      this.filled += take;
      offset += take;
      if (this.filled === this.frameSamples) out.push(...this.encodeFrame(false));
    }
    return out;
  }

  end(): Buffer[] {
    const out = this.headers();
    // Feed the look-ahead as trailing silence so the last real samples come out of the decoder.
    let padding = Math.ceil(PRE_SKIP_48K / this.toGranule);
    do {
      const take = Math.min(this.frameSamples - this.filled, padding);
      this.frame.fill(0, this.filled * 2, (this.filled + take) * 2);
      this.filled += take;
      padding -= take;
      if (this.filled === this.frameSamples || padding <= 0) {
        this.frame.fill(0, this.filled * 2);
        this.filled = this.frameSamples;
        out.push(...this.encodeFrame(padding <= 0));
      }
    } while (padding > 0);
    return out;
  }

  private headers(): Buffer[] {
    if (this.started) return [];
    this.started = true;
    return [this.writer.page([opusHead(this.sampleRateHz)], 0n, PAGE_FLAGS.beginOfStream), this.writer.page([opusTags()], 0n)];
  }

  private encodeFrame(last: boolean): Buffer[] {
    this.packets.push(this.encoder.encode(this.frame));
    this.filled = 0;
    this.framesOut++;
    if (this.packets.length < PACKETS_PER_PAGE && !last) return [];
    const granule = last
      ? BigInt(PRE_SKIP_48K + Math.round(this.samplesIn * this.toGranule))
      : BigInt(Math.round(this.framesOut * this.frameSamples * this.toGranule));
    const page = this.writer.page(this.packets, granule, last ? PAGE_FLAGS.endOfStream : 0);
    this.packets = [];
    return [page];
  }
}
