/**
 * After an answering machine was detected: when to leave the message. That is after its beep,
 * or, for a machine that has none, once the greeting is over, that is after a long silence.
 * A maximum wait ends it regardless (a greeting that loops, a line that keeps making noise).
 */
import { CalleeFrames, type CalleeListenOptions } from './callee-frames.js';

/** When the message can start. */
export interface BeepWaitOutcome {
  /** Whether a beep was heard (false: the greeting ended in silence, or the wait ran out). */
  readonly beep: boolean;
  /** 'beep': the beep ended; 'silence': the end-of-greeting silence; 'max-wait': the wait ran out. */
  readonly reason: 'beep' | 'silence' | 'max-wait';
  /** Audio time from the first frame of the wait, in ms. */
  readonly afterMs: number;
}

/** How long to wait; defaults in {@link DEFAULT_BEEP_WAIT_OPTIONS}. */
export interface BeepWaitOptions extends CalleeListenOptions {
  /** Silence this long (after the last speech, or from the start if none) ends the greeting without a beep. */
  readonly endSilenceMs?: number;
  /** The longest wait. */
  readonly maxWaitMs?: number;
}

/**
 * A machine pauses within its greeting for well under a second, and beeps within a second of
 * its end; 1.5 s of silence means there is no beep to come. 30 s is longer than greetings are.
 */
export const DEFAULT_BEEP_WAIT_OPTIONS = { endSilenceMs: 1500, maxWaitMs: 30_000 } as const satisfies BeepWaitOptions;

/** Waits in one stream for the beep or the end of the greeting, frame by frame. */
export class BeepWaiter {
  private readonly frames: CalleeFrames;
  private readonly endSilenceMs: number;
  private readonly maxWaitMs: number;
  private outcome: BeepWaitOutcome | null = null;

  /** @throws RangeError for a rate without whole 20 ms frames. */
  constructor(rateHz: number, options: BeepWaitOptions = {}) {
    this.frames = new CalleeFrames(rateHz, options);
    this.endSilenceMs = options.endSilenceMs ?? DEFAULT_BEEP_WAIT_OPTIONS.endSilenceMs;
    this.maxWaitMs = options.maxWaitMs ?? DEFAULT_BEEP_WAIT_OPTIONS.maxWaitMs;
  }

  /** Samples a frame must have: 20 ms at the rate. */
  get frameSamples(): number {
    return this.frames.frameSamples;
  }

  /** The longest audio it waits, in ms. */
  get maxMs(): number {
    return this.maxWaitMs;
  }

  /** The outcome, once there is one. */
  get decision(): BeepWaitOutcome | null {
    return this.outcome;
  }

  /** Takes the next 20 ms frame; returns the outcome on the frame that decides and every frame after it, null before. */
  push(frame: Int16Array): BeepWaitOutcome | null {
    if (this.outcome) return this.outcome;
    if (this.frames.push(frame)) return this.decide(true, 'beep');
    if (this.frames.tone.sounding) return null;
    const speech = this.frames.speech;
    if (speech.silenceMs >= this.endSilenceMs) return this.decide(false, 'silence');
    if (speech.elapsedMs >= this.maxWaitMs) return this.decide(false, 'max-wait');
    return null;
  }

  private decide(beep: boolean, reason: BeepWaitOutcome['reason']): BeepWaitOutcome {
    this.outcome = { beep, reason, afterMs: this.frames.speech.elapsedMs };
    return this.outcome;
  }
}
