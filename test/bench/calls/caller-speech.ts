/** The caller's audio: Debian's "go forward ten meters" at 8 kHz, as µ-law frames and as SIPp's capture. */
import { lastSpeechFrame } from '../speech-end.js';
import { readFileSync } from 'node:fs';
import { encodeMulaw } from '../../../src/audio/g711.js';
import { loadResampler, Resampler } from '../../../src/audio/resampler.js';
import { pcmuPackets, rtpPcap } from '../../integration/sipp/make-pcap.js';
import { FRAME_SAMPLES } from './common.js';

/** A 20 ms frame of the 8 kHz caller audio louder than this (RMS) is speech. */
const LOUD_RMS = 500;

/** Debian's "go forward ten meters" at 8 kHz: µ-law frames, where speech starts and where it ends. */
export interface CallerSpeech {
  readonly pcm: Int16Array;
  readonly frames: Uint8Array[];
  /** The first frame louder than RMS 500: where the words start. */
  readonly firstLoud: number;
  /** The last frame of speech: the last within 30 dB of the loudest (`speech-end.ts`), the quiet end of "meters". */
  readonly lastSpeech: number;
}

/** Reads the recording, resamples it to 8 kHz and finds where its speech starts and ends. */
export async function callerSpeech(): Promise<CallerSpeech> {
  await loadResampler();
  const raw = readFileSync('/usr/share/pocketsphinx/test/data/goforward.raw');
  const wide = new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  const resampler = new Resampler(16000, 8000);
  const head = resampler.process(wide);
  const tail = resampler.flush();
  resampler.destroy();
  const pcm = new Int16Array(Math.ceil((head.length + tail.length) / FRAME_SAMPLES) * FRAME_SAMPLES);
  pcm.set(head);
  pcm.set(tail, head.length);
  const frames: Uint8Array[] = [];
  let firstLoud = -1;
  for (let at = 0, index = 0; at < pcm.length; at += FRAME_SAMPLES, index++) {
    const frame = pcm.subarray(at, at + FRAME_SAMPLES);
    let sum = 0;
    for (const sample of frame) sum += sample * sample;
    if (firstLoud < 0 && Math.sqrt(sum / FRAME_SAMPLES) > LOUD_RMS) firstLoud = index;
    frames.push(encodeMulaw(frame));
  }
  if (firstLoud < 0) throw new Error('the recording has no frame louder than RMS 500');
  return { pcm, frames, firstLoud, lastSpeech: lastSpeechFrame(pcm, FRAME_SAMPLES) };
}

/** SIPp's capture: the recording and a second of silence, again and again, for `seconds`. */
export function callerCapture(speech: CallerSpeech, seconds: number): Buffer {
  const cycle = new Int16Array(speech.pcm.length + 8000);
  cycle.set(speech.pcm);
  const total = new Int16Array(Math.ceil((seconds * 8000) / cycle.length) * cycle.length);
  for (let at = 0; at < total.length; at += cycle.length) total.set(cycle, at);
  return rtpPcap(pcmuPackets(encodeMulaw(total), { ssrc: 0x43414c4c }));
}
