/**
 * Finds an answering machine's beep: a run of frames that each carry most of their energy at one
 * frequency in the beep band, the same frequency from frame to frame, for long enough. Speech
 * fails on both counts: its energy is spread over harmonics and its pitch moves. A beep is
 * reported when it ends (the message is to start after it, not into it); a tone that goes on
 * beyond the longest beep is something else (ringback, a fax, a tone of the network) and is
 * never reported.
 */
import type { FrameFeatures } from './frame-features.js';

/** What counts as a beep. */
export interface SteadyToneOptions {
  /** Lowest beep frequency (default 400 Hz). */
  readonly minHz?: number;
  /** Highest beep frequency (default 2000 Hz). */
  readonly maxHz?: number;
  /** Shortest beep (default 150 ms). */
  readonly minToneMs?: number;
  /** Longest beep (default 3000 ms); a longer tone is not one. */
  readonly maxToneMs?: number;
  /** Share of a frame's energy the tone must carry (default 0.8; speech stays below about 0.6). */
  readonly minTonality?: number;
}

/** Beep defaults. */
export const DEFAULT_STEADY_TONE: Required<SteadyToneOptions> = { minHz: 400, maxHz: 2000, minToneMs: 150, maxToneMs: 3000, minTonality: 0.8 };

const FRAME_MS = 20;
/** How far a frame's frequency may stray from the tone's so far (2 %: a generator is steadier, speech pitch is not). */
const MAX_DRIFT = 0.02;

/** Follows one stream's frames for a beep. */
export class SteadyToneTracker {
  private readonly options: Required<SteadyToneOptions>;
  /**
   * Whole tonal frames that make a beep: a tone's first and last frames are partly silence,
   * whose noise upsets their crossing count, so a tone of n frames' length may show n − 2.
   */
  private readonly minFrames: number;
  private readonly maxFrames: number;
  private frames = 0;
  private runStart = 0;
  private runFrames = 0;
  private runHz = 0;
  /** The last beep: its first frame, the frame after its last, its frequency. */
  private beep = { startFrame: 0, endFrame: 0, hz: 0 };

  constructor(options: SteadyToneOptions = {}) {
    this.options = { ...DEFAULT_STEADY_TONE, ...options };
    this.minFrames = Math.max(2, Math.floor(this.options.minToneMs / FRAME_MS) - 1);
    this.maxFrames = Math.ceil(this.options.maxToneMs / FRAME_MS);
  }

  /** Whether the frames so far end in a tone long enough to be a beep (its frames are no voice). */
  get sounding(): boolean {
    return this.runFrames >= this.minFrames && this.runFrames <= this.maxFrames;
  }

  /** The last beep reported: start and end in ms from the first frame, and its frequency. */
  get lastBeep(): { readonly startMs: number; readonly endMs: number; readonly hz: number } {
    return { startMs: this.beep.startFrame * FRAME_MS, endMs: this.beep.endFrame * FRAME_MS, hz: this.beep.hz };
  }

  /** Takes the next frame's measures; true when a beep ended just before this frame. */
  push(features: FrameFeatures): boolean {
    const frame = this.frames++;
    const o = this.options;
    const hz = features.toneHz;
    const tonal = features.tonality >= o.minTonality && hz >= o.minHz && hz <= o.maxHz;
    if (tonal && this.runFrames > 0 && Math.abs(hz - this.runHz) <= MAX_DRIFT * this.runHz) {
      // The running mean: the tone's frequency is known better with each frame.
      this.runHz += (hz - this.runHz) / ++this.runFrames;
      return false;
    }
    const ended = this.sounding;
    if (ended) this.beep = { startFrame: this.runStart, endFrame: frame, hz: this.runHz };
    // A tonal frame at another frequency starts a tone of its own.
    this.runStart = frame;
    this.runFrames = tonal ? 1 : 0;
    this.runHz = tonal ? hz : 0;
    return ended;
  }
}
