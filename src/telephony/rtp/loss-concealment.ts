/**
 * Packet loss concealment for decoded PCM (G.711 has none of its own): a lost frame is replaced
 * by the last good one, faded out, and silence follows once the fade has run its course. One
 * lost frame then sounds like a short dip instead of a click, and a long gap like silence
 * instead of a buzzing loop.
 */

/** How a {@link LossConcealer} is set up. */
export interface LossConcealerOptions {
  /** Sample rate of the decoded audio in Hz. */
  readonly sampleRate: number;
  /** Samples in one frame (160 for 20 ms at 8000 Hz): the length of silence before any audio was seen. */
  readonly frameSamples: number;
  /** From full level to silence over this long (default 60 ms). */
  readonly fadeMs?: number;
}

/** Conceals lost frames of one decoded stream: pass good frames through `process`, ask `conceal` for lost ones. */
export class LossConcealer {
  private readonly frameSamples: number;
  private readonly fadeSamples: number;
  private last: Int16Array | null = null;
  /** Samples concealed since the last good frame. */
  private concealedSamples = 0;

  constructor(options: LossConcealerOptions) {
    this.frameSamples = options.frameSamples;
    this.fadeSamples = Math.max(1, Math.round(((options.fadeMs ?? 60) * options.sampleRate) / 1000));
  }

  /**
   * Takes a good frame and returns what to play: the frame itself, or after concealment a copy
   * that rises from the concealment's level, so that audio does not restart with a click.
   */
  process(frame: Int16Array): Int16Array {
    const startGain = this.gainAt(this.concealedSamples);
    this.last = frame;
    this.concealedSamples = 0;
    if (startGain >= 1 || frame.length === 0) return frame;
    const out = new Int16Array(frame.length);
    for (let i = 0; i < frame.length; i++) out[i] = Math.round(frame[i]! * (startGain + ((1 - startGain) * i) / frame.length));
    return out;
  }

  /** A frame to play in place of a lost one: the last good frame at a falling level, then silence. */
  conceal(): Int16Array {
    const source = this.last;
    const length = source?.length ?? this.frameSamples;
    const out = new Int16Array(length);
    const start = this.concealedSamples;
    this.concealedSamples += length;
    if (!source || start >= this.fadeSamples) return out;
    for (let i = 0; i < length; i++) out[i] = Math.round(source[i]! * this.gainAt(start + i));
    return out;
  }

  /** Forgets the last frame (a new stream). */
  reset(): void {
    this.last = null;
    this.concealedSamples = 0;
  }

  private gainAt(concealed: number): number {
    return Math.max(0, 1 - concealed / this.fadeSamples);
  }
}
