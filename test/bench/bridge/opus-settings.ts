/**
 * The libopus settings a bridge from G.711 to Opus could encode with, on real speech (Debian's
 * "go forward ten meters", at 8 kHz as G.711 carries it): how much of the waveform comes back
 * (signal-to-noise ratio after the codec's delay, decoded at 8 kHz) and the time to encode and
 * decode a 20 ms frame. The bridge's choice is in src/telephony/media/payload-converter.ts.
 */
import { readFileSync } from 'node:fs';
import opus from '@discordjs/opus';
import { loadResampler, Resampler } from '../../../src/audio/resampler.js';

/** OPUS_SET_APPLICATION_REQUEST / OPUS_APPLICATION_VOIP, OPUS_SET_COMPLEXITY_REQUEST (opus_defines.h). */
const SET_APPLICATION = 4000;
const APPLICATION_VOIP = 2048;
const SET_COMPLEXITY = 4010;

/** One setting's figures. */
export interface OpusSetting {
  readonly mode: 'audio' | 'voip';
  /** The rate asked for, or null for libopus's default. */
  readonly bitrate: number | null;
  readonly kbps: number;
  readonly snrDb: number;
  readonly microsecondsPerFrame: number;
}

/** The recording at 8 kHz, whole 20 ms frames. */
async function speech(): Promise<Int16Array> {
  await loadResampler();
  const raw = readFileSync('/usr/share/pocketsphinx/test/data/goforward.raw');
  const resampler = new Resampler(16000, 8000);
  const pcm = resampler.process(new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length)));
  resampler.destroy();
  return pcm.subarray(0, pcm.length - (pcm.length % 160));
}

/** The best signal-to-noise ratio of `decoded` against `original` over the codec's possible delays (up to 25 ms). */
function snrDb(original: Int16Array, decoded: Int16Array): number {
  let best = Number.NEGATIVE_INFINITY;
  for (let delay = 0; delay < 200; delay++) {
    let signal = 0;
    let noise = 0;
    for (let i = 0; i + delay < decoded.length; i++) {
      const error = decoded[i + delay]! - original[i]!;
      signal += original[i]! * original[i]!;
      noise += error * error;
    }
    best = Math.max(best, 10 * Math.log10(signal / noise));
  }
  return best;
}

function measure(pcm: Int16Array, mode: 'audio' | 'voip', bitrate: number | null): OpusSetting {
  const encoder = new opus.OpusEncoder(8000, 1);
  if (mode === 'voip') encoder.applyEncoderCTL(SET_APPLICATION, APPLICATION_VOIP);
  encoder.applyEncoderCTL(SET_COMPLEXITY, 4);
  if (bitrate !== null) encoder.setBitrate(bitrate);
  const decoder = new opus.OpusEncoder(8000, 1);
  const decoded = new Int16Array(pcm.length);
  let bytes = 0;
  const start = process.hrtime.bigint();
  for (let at = 0; at < pcm.length; at += 160) {
    const frame = pcm.slice(at, at + 160);
    const packet = encoder.encode(Buffer.from(frame.buffer));
    bytes += packet.length;
    const out = decoder.decode(packet);
    decoded.set(new Int16Array(out.buffer, out.byteOffset, out.byteLength / 2), at);
  }
  const frames = pcm.length / 160;
  const microsecondsPerFrame = Number(process.hrtime.bigint() - start) / 1000 / frames;
  return { mode, bitrate, kbps: (bytes * 8) / (frames * 20), snrDb: snrDb(pcm, decoded), microsecondsPerFrame };
}

/** The settings compared: libopus's two speech-capable modes at its default rate and at 24 and 32 kbps. */
export async function benchOpusSettings(): Promise<OpusSetting[]> {
  const pcm = await speech();
  return (['voip', 'audio'] as const).flatMap((mode) => [null, 24_000, 32_000].map((bitrate) => measure(pcm, mode, bitrate)));
}
