/**
 * One bridged call's audio payloads in the other call's codec, packet by packet: the same codec
 * passes as it is; µ-law and A-law map byte to byte through a table; G.711 and Opus go through
 * libopus at 8 kHz (Opus codes and decodes that rate natively, so a 20 ms packet stays one
 * packet either way, with no resampler and its delay between). RFC 4733 events keep their
 * payload, but their durations count in the clock of the codec beside them, so they are scaled
 * when the two clocks differ (8 kHz G.711, 48 kHz Opus).
 */
import opus from '@discordjs/opus';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from '../../audio/g711.js';
import { sameCodec, type MediaCodec } from '../sdp/media-codec.js';

/** Turns payloads of one codec into another's. */
export interface PayloadConverter {
  /**
   * The payload in the target codec, or `null` when it cannot be converted (it is dropped). The
   * result may be a buffer the next call reuses: send it before converting the next.
   */
  convert(payload: Uint8Array): Uint8Array | null;
}

/** The Opus side codes at this rate: the telephone band that G.711 carries anyway. */
const OPUS_RATE_HZ = 8000;
/** Frame lengths Opus codes, in samples at 8 kHz (2.5 to 60 ms). */
const OPUS_FRAME_SAMPLES = new Set([20, 40, 80, 160, 320, 480]);
/**
 * OPUS_SET_COMPLEXITY_REQUEST and OPUS_SET_BITRATE_REQUEST: complexity 4 as for our Opus
 * files, 32 kbps in libopus's general (audio) mode. Its speech (VoIP) mode and lower rates kept
 * far less of the waveform, and cost more time a frame (docs/performance.md, "Bridged calls").
 */
const OPUS_SET_COMPLEXITY = 4010;
const OPUS_COMPLEXITY = 4;
const OPUS_BITRATE = 32_000;

/** A µ-law byte's A-law byte and the reverse, through the sample they stand for. */
const EVERY_BYTE = Uint8Array.from({ length: 256 }, (_, byte) => byte);
const MULAW_TO_ALAW = encodeAlaw(decodeMulaw(EVERY_BYTE));
const ALAW_TO_MULAW = encodeMulaw(decodeAlaw(EVERY_BYTE));

/** The converter from `from`'s payloads to `to`'s. */
export function payloadConverter(from: MediaCodec, to: MediaCodec): PayloadConverter {
  if (sameCodec(from, to)) return unchanged;
  if (from.name !== 'opus' && to.name !== 'opus') return new ByteMap(from.name === 'PCMU' ? MULAW_TO_ALAW : ALAW_TO_MULAW);
  if (to.name === 'opus') return new G711ToOpus(from.name === 'PCMU' ? decodeMulaw : decodeAlaw);
  return new OpusToG711(to.name === 'PCMU' ? encodeMulaw : encodeAlaw);
}

/** Same codec: the payload as it came (the packet buffer copies it). */
const unchanged: PayloadConverter = { convert: (payload) => payload };

/** A byte array that grows to the largest length asked for, and a view of the length last asked for. */
class Scratch {
  private bytes = new Uint8Array(172);
  private view = this.bytes.subarray(0, 0);

  /** A view of `length` bytes; the same one again while the length stays (one per call, not per packet). */
  of(length: number): Uint8Array {
    if (length > this.bytes.length) this.bytes = new Uint8Array(length);
    if (this.view.length !== length || this.view.buffer !== this.bytes.buffer) this.view = this.bytes.subarray(0, length);
    return this.view;
  }
}

/** µ-law ↔ A-law, a table lookup per byte into a reused buffer. */
class ByteMap implements PayloadConverter {
  private readonly out = new Scratch();

  constructor(private readonly table: Uint8Array) {}

  convert(payload: Uint8Array): Uint8Array {
    const out = this.out.of(payload.length);
    for (let i = 0; i < payload.length; i++) out[i] = this.table[payload[i]!]!;
    return out;
  }
}

/** An Opus encoder at 8 kHz, mono. */
function opusEncoder(): InstanceType<typeof opus.OpusEncoder> {
  const encoder = new opus.OpusEncoder(OPUS_RATE_HZ, 1);
  encoder.applyEncoderCTL(OPUS_SET_COMPLEXITY, OPUS_COMPLEXITY);
  encoder.setBitrate(OPUS_BITRATE);
  return encoder;
}

/** G.711 → Opus: decoded into a reused array, encoded as one Opus packet of the same length. */
class G711ToOpus implements PayloadConverter {
  private readonly encoder = opusEncoder();
  private pcm = new Int16Array(0);
  /** The same samples as the Buffer libopus takes, made with them. */
  private pcmBytes = Buffer.alloc(0);

  constructor(private readonly decode: (bytes: Uint8Array, into?: Int16Array) => Int16Array) {}

  convert(payload: Uint8Array): Uint8Array | null {
    // A packet length Opus has no frame for (30 ms G.711) is dropped rather than re-cut.
    if (!OPUS_FRAME_SAMPLES.has(payload.length)) return null;
    if (this.pcm.length !== payload.length) {
      this.pcm = new Int16Array(payload.length);
      this.pcmBytes = Buffer.from(this.pcm.buffer, 0, this.pcm.byteLength);
    }
    this.decode(payload, this.pcm);
    return this.encoder.encode(this.pcmBytes);
  }
}

/** Opus → G.711: decoded at 8 kHz by libopus, encoded by table. */
class OpusToG711 implements PayloadConverter {
  // The binding's one class holds an encoder and a decoder, each made when first used.
  private readonly decoder = new opus.OpusEncoder(OPUS_RATE_HZ, 1);

  constructor(private readonly encode: (pcm: Int16Array) => Uint8Array) {}

  convert(payload: Uint8Array): Uint8Array | null {
    let decoded: Buffer;
    try {
      decoded = this.decoder.decode(Buffer.from(payload.buffer, payload.byteOffset, payload.byteLength));
    } catch {
      // A corrupt packet: the far end's own concealment covers the gap better than a guess here.
      return null;
    }
    const pcm =
      decoded.byteOffset % 2 === 0
        ? new Int16Array(decoded.buffer, decoded.byteOffset, decoded.byteLength / 2)
        : new Int16Array(Uint8Array.from(decoded).buffer);
    return this.encode(pcm);
  }
}

/**
 * RFC 4733 event payloads with their durations in another clock: `ratio` target units per
 * source unit. Each 4-byte event block's duration is scaled (and capped at 16 bits); with equal
 * clocks the payload passes as it is.
 */
export class EventRescaler {
  private readonly out = new Scratch();

  constructor(private readonly ratio: number) {}

  convert(payload: Uint8Array): Uint8Array {
    if (this.ratio === 1) return payload;
    const out = this.out.of(payload.length);
    out.set(payload);
    for (let at = 0; at + 4 <= out.length; at += 4) {
      const duration = Math.min(0xffff, Math.round(((out[at + 2]! << 8) | out[at + 3]!) * this.ratio));
      out[at + 2] = duration >> 8;
      out[at + 3] = duration & 0xff;
    }
    return out;
  }
}
