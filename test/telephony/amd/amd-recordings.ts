/**
 * Recordings of calls being answered, for the answering-machine tests and benchmark: speech,
 * silences and beeps joined in order, with a little line noise over all of it (a real line is
 * never digitally silent, and the detector's noise floor should have something to find).
 */
import { concatPcm } from '../../../src/audio/pcm.js';
import { toneSamples } from '../../../src/telephony/call/tones.js';

/** One piece of a recording: speech already synthesised, silence, or a beep. */
export type Piece = Int16Array | { readonly silenceS: number } | { readonly beepHz: number; readonly beepMs: number };

/** A deterministic uniform noise source in −1…1. */
function noiseSource(seed: number): () => number {
  let state = seed >>> 0;
  return () => (state = (state * 1103515245 + 12345) >>> 0) / 2 ** 31 - 1;
}

/** How a recording sounds on the line. */
export interface LineOptions {
  /** Uniform noise of ±this added throughout (default 50: about −61 dBFS). */
  readonly noise?: number;
  /** Gain of the speech and beeps before the noise is added (default 0 dB). */
  readonly gainDb?: number;
  /** Seed of the noise. */
  readonly seed?: number;
}

/** The pieces joined at `rateHz`, on a line with noise. */
export function recording(rateHz: number, pieces: readonly Piece[], line: LineOptions = {}): Int16Array {
  const parts = pieces.map((piece) => {
    if (piece instanceof Int16Array) return piece;
    if ('silenceS' in piece) return new Int16Array(Math.round(piece.silenceS * rateHz));
    return toneSamples({ hz: piece.beepHz, ms: piece.beepMs }, rateHz);
  });
  // A copy even of a single piece: the noise is added in place.
  const out = Int16Array.from(concatPcm(parts));
  const random = noiseSource(line.seed ?? 1);
  const gain = 10 ** ((line.gainDb ?? 0) / 20);
  const noise = line.noise ?? 50;
  for (let i = 0; i < out.length; i++) out[i] = Math.max(-32768, Math.min(32767, Math.round(out[i]! * gain + random() * noise)));
  return out;
}

/** Where each piece starts in a recording made of them, in seconds. */
export function pieceStarts(rateHz: number, pieces: readonly Piece[]): number[] {
  const starts: number[] = [];
  let at = 0;
  for (const piece of pieces) {
    starts.push(at / rateHz);
    if (piece instanceof Int16Array) at += piece.length;
    else if ('silenceS' in piece) at += Math.round(piece.silenceS * rateHz);
    else at += Math.round((rateHz * piece.beepMs) / 1000);
  }
  return starts;
}

/**
 * Feeds `pcm` in 20 ms frames to something that decides frame by frame, until it decides;
 * null when the recording ran out first. `from` is the sample to start at.
 */
export function feedFrames<Outcome>(
  decision: { readonly frameSamples: number; push(frame: Int16Array): Outcome | null },
  pcm: Int16Array,
  from = 0,
): Outcome | null {
  const n = decision.frameSamples;
  for (let at = from; at + n <= pcm.length; at += n) {
    const outcome = decision.push(pcm.subarray(at, at + n));
    if (outcome !== null) return outcome;
  }
  return null;
}
