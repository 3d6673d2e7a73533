/**
 * Runs a frame-by-frame decision (the answering-machine detector, the beep wait) on a call's
 * live audio: listens to its `audio` events until the decision is made or the signal aborts,
 * and then stops listening. Audio that does not come (a callee whose phone sends nothing while
 * it is quiet) is heard as silence: once the decision's longest time has passed on the clock,
 * and a little more for the audio's own delay, the missing time is fed as silent frames, so the
 * decision comes in time whether or not the audio does.
 */

/**
 * The callee's decoded audio as the detector needs it; the project's `MediaChannel` is one.
 * Frames are PCM16 mono at {@link audioRateHz}, normally 20 ms each.
 */
export interface CalleeAudio {
  readonly audioRateHz: number;
  on(event: 'audio', listener: (pcm: Int16Array) => void): unknown;
  off(event: 'audio', listener: (pcm: Int16Array) => void): unknown;
}

/** A decision taken frame by frame: the detector and the beep wait. */
export interface FrameDecision<Outcome> {
  /** Samples in a frame. */
  readonly frameSamples: number;
  /** The longest audio, in ms, it takes to decide. */
  readonly maxMs: number;
  /** Takes a frame; the outcome once decided, null before. */
  push(frame: Int16Array): Outcome | null;
}

/**
 * How far the audio may lag the clock before missing audio counts as silence: the jitter
 * buffer's playout delay (up to some 200 ms) and the media thread's batching, with room to spare.
 */
const AUDIO_LAG_MS = 500;
/** The longest delay a Node timer takes (a longer one fires at once). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Feeds `audio` to `decision` until it decides; rejects with the signal's reason when `signal`
 * aborts first. Either way the listener is removed before the promise settles.
 */
export function runOnCalleeAudio<Outcome>(audio: CalleeAudio, decision: FrameDecision<Outcome>, signal: AbortSignal): Promise<Outcome> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<Outcome>((resolve, reject) => {
    const frames = new FrameSplitter(decision.frameSamples);
    let pushed = 0;
    let done = false;
    const settle = (outcome: Outcome | null, error?: unknown): void => {
      if (done) return;
      done = true;
      audio.off('audio', listener);
      signal.removeEventListener('abort', aborted);
      clearTimeout(timer);
      if (outcome === null) reject(error as Error);
      else resolve(outcome);
    };
    const feed = (frame: Int16Array): boolean => {
      pushed++;
      const outcome = decision.push(frame);
      if (outcome !== null) settle(outcome);
      return outcome !== null;
    };
    const listener = (pcm: Int16Array): void => {
      try {
        frames.split(pcm, feed);
      } catch (error) {
        settle(null, error);
      }
    };
    const aborted = (): void => settle(null, signal.reason);
    const fillIn = (): void => {
      // Every frame still missing up to the longest time, and one more so that the time is reached.
      const silence = new Int16Array(decision.frameSamples);
      const missing = Math.ceil(decision.maxMs / 20) + 1 - pushed;
      for (let i = 0; i < missing; i++) if (feed(silence)) return;
      settle(null, new Error(`no decision after ${decision.maxMs} ms of audio`));
    };
    // Without a longest time (an option set to Infinity) only the audio or the signal ends it.
    const waitMs = decision.maxMs + AUDIO_LAG_MS;
    const timer = waitMs <= MAX_TIMER_MS ? setTimeout(fillIn, waitMs) : undefined;
    audio.on('audio', listener);
    signal.addEventListener('abort', aborted, { once: true });
  });
}

/**
 * Cuts audio into frames of one length: a chunk of exactly that length (what the media channel
 * sends) goes on as it is; others are gathered in one buffer kept for the stream.
 */
export class FrameSplitter {
  private readonly buffer: Int16Array;
  private filled = 0;

  constructor(private readonly frameSamples: number) {
    this.buffer = new Int16Array(frameSamples);
  }

  /** Hands each whole frame in `pcm` (after what was left over) to `each`; stops when it returns true. */
  split(pcm: Int16Array, each: (frame: Int16Array) => boolean): void {
    if (this.filled === 0 && pcm.length === this.frameSamples) {
      each(pcm);
      return;
    }
    for (let at = 0; at < pcm.length;) {
      const take = Math.min(pcm.length - at, this.frameSamples - this.filled);
      this.buffer.set(pcm.subarray(at, at + take), this.filled);
      at += take;
      this.filled += take;
      if (this.filled < this.frameSamples) return;
      this.filled = 0;
      if (each(this.buffer)) return;
    }
  }
}
