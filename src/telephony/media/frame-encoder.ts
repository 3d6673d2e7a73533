/**
 * Our speech for a call, cut into 20 ms frames and encoded for its codec (G.711 through lookup
 * tables, Opus through libopus), as runs of frames in one buffer. It runs where the speech is
 * made, on the main thread, so the media thread only queues ready payloads and a long prompt
 * costs it no encoding burst.
 */
import opus from '@discordjs/opus';
import { encodeAlaw, encodeMulaw } from '../../audio/g711.js';
import type { FrameRun } from '../rtp/paced-stream.js';
import type { MediaCodec } from '../sdp/media-codec.js';

/** Frames one codec's payloads from PCM16 at the codec's clock rate. */
export class FrameEncoder {
  private pending = new Int16Array(0);
  private opusEncoder: InstanceType<typeof opus.OpusEncoder> | null = null;

  constructor(readonly codec: MediaCodec) {}

  /** Samples in one 20 ms frame at the codec's rate. */
  get frameSamples(): number {
    return this.codec.clockRate / 50;
  }

  /** Every whole frame in what came before and `pcm`, encoded (null when none is whole yet); a partial frame waits. */
  encode(pcm: Int16Array): FrameRun | null {
    let audio = pcm;
    if (this.pending.length > 0) {
      audio = new Int16Array(this.pending.length + pcm.length);
      audio.set(this.pending);
      audio.set(pcm, this.pending.length);
    }
    const whole = audio.length - (audio.length % this.frameSamples);
    this.pending = audio.slice(whole);
    return whole === 0 ? null : this.encodeRun(audio.subarray(0, whole));
  }

  /** The last partial frame, padded with silence (null when nothing waits). */
  flush(): FrameRun | null {
    if (this.pending.length === 0) return null;
    const frame = new Int16Array(this.frameSamples);
    frame.set(this.pending);
    this.pending = new Int16Array(0);
    return this.encodeRun(frame);
  }

  /** Forgets the partial frame (the prompt was stopped). */
  reset(): void {
    this.pending = new Int16Array(0);
  }

  /** Whole frames of audio as one run. */
  private encodeRun(audio: Int16Array): FrameRun {
    const count = audio.length / this.frameSamples;
    const ends = new Uint32Array(count);
    if (this.codec.name !== 'opus') {
      // G.711 codes sample by sample: the whole stretch at once is the frames one after another.
      const bytesPerFrame = this.frameSamples;
      for (let n = 0; n < count; n++) ends[n] = (n + 1) * bytesPerFrame;
      return { data: this.codec.name === 'PCMU' ? encodeMulaw(audio) : encodeAlaw(audio), ends };
    }
    this.opusEncoder ??= new opus.OpusEncoder(48000, 1);
    const packets: Buffer[] = [];
    let bytes = 0;
    for (let n = 0; n < count; n++) {
      const frame = audio.subarray(n * this.frameSamples, (n + 1) * this.frameSamples);
      const packet = this.opusEncoder.encode(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
      packets.push(packet);
      bytes += packet.length;
      ends[n] = bytes;
    }
    const data = new Uint8Array(bytes);
    packets.forEach((packet, n) => data.set(packet, n === 0 ? 0 : ends[n - 1]!));
    return { data, ends };
  }
}
