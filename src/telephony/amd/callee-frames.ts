/**
 * One pass over each 20 ms frame of the callee's audio that both the answering-machine detector
 * and the beep wait build on: the frame's measures, the beep tracker, voice activity and the
 * speech pattern so far. Frames of a beep are not voice, so a beep is never taken for a word.
 */
import { FrameFeatures } from './frame-features.js';
import { energyOfDbfs, NoiseFloorVad, type NoiseFloorVadOptions } from './noise-floor-vad.js';
import { SteadyToneTracker, type SteadyToneOptions } from './steady-tone.js';
import { UtteranceTracker, type UtteranceTrackerOptions } from './utterance-tracker.js';

/** How voice and beeps are found; every part has defaults. */
export interface CalleeListenOptions {
  readonly voice?: NoiseFloorVadOptions;
  readonly words?: UtteranceTrackerOptions;
  readonly beep?: SteadyToneOptions;
}

/** A beep quieter than this (RMS) is not looked for: answering machines play theirs loud. */
const MIN_BEEP_DBFS = -45;

/** The frames of one stream, measured and followed. */
export class CalleeFrames {
  /** Samples in a frame: 20 ms at the rate. */
  readonly frameSamples: number;
  /** The speech heard so far. */
  readonly speech: UtteranceTracker;
  /** The beep tracker. */
  readonly tone: SteadyToneTracker;
  private readonly features: FrameFeatures;
  private readonly vad: NoiseFloorVad;

  /** @throws RangeError for a rate below 8000 Hz or one without whole 20 ms frames. */
  constructor(rateHz: number, options: CalleeListenOptions = {}) {
    if (!Number.isInteger(rateHz / 50) || rateHz < 8000)
      throw new RangeError(`the callee's audio must be at 8000 Hz or more in 20 ms frames, not ${rateHz} Hz`);
    this.frameSamples = rateHz / 50;
    this.features = new FrameFeatures(rateHz, this.frameSamples, energyOfDbfs(MIN_BEEP_DBFS));
    this.vad = new NoiseFloorVad(options.voice);
    this.tone = new SteadyToneTracker(options.beep);
    this.speech = new UtteranceTracker(options.words);
  }

  /** Takes the next frame (exactly {@link frameSamples} samples); true when a beep ended just before it. */
  push(frame: Int16Array): boolean {
    this.features.measure(frame);
    const beepEnded = this.tone.push(this.features);
    // Every frame goes to the voice detector, so that its noise floor stays current.
    const loud = this.vad.isVoiced(this.features.energy);
    this.speech.push(loud && !this.tone.sounding);
    return beepEnded;
  }
}
