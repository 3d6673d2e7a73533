/**
 * The shape of the callee's speech from voiced and silent frames: where speech began, how many
 * words (voiced stretches) it had, when it was last heard and how long it has been quiet since.
 * A word needs a few voiced frames in a row, so a click or a burst of line noise is not one.
 */

/** How words are found. */
export interface UtteranceTrackerOptions {
  /** Voiced time in a row that makes a word (default 60 ms). */
  readonly minWordMs?: number;
  /** Silence that ends a word (default 60 ms): shorter gaps are inside a word. */
  readonly betweenWordsMs?: number;
}

const FRAME_MS = 20;

/** One stream's speech so far, frame by frame. */
export class UtteranceTracker {
  private readonly minWordFrames: number;
  private readonly gapFrames: number;
  private frames = 0;
  private voicedRun = 0;
  private inWord = false;
  private wordCount = 0;
  /** First frame of the first word, -1 before. */
  private firstFrame = -1;
  /** The frame after the last voiced frame of a word. */
  private endFrame = 0;

  constructor(options: UtteranceTrackerOptions = {}) {
    this.minWordFrames = Math.max(1, Math.round((options.minWordMs ?? 60) / FRAME_MS));
    this.gapFrames = Math.max(1, Math.round((options.betweenWordsMs ?? 60) / FRAME_MS));
  }

  /** Time taken so far (frames × 20 ms). */
  get elapsedMs(): number {
    return this.frames * FRAME_MS;
  }

  /** Whether any word has been heard. */
  get spoke(): boolean {
    return this.firstFrame >= 0;
  }

  /** Words heard so far. */
  get words(): number {
    return this.wordCount;
  }

  /** From the start of the first word to the end of the last one heard (0 before any). */
  get speechMs(): number {
    return this.firstFrame < 0 ? 0 : (this.endFrame - this.firstFrame) * FRAME_MS;
  }

  /** When the first word started (-1 before any). */
  get speechStartMs(): number {
    return this.firstFrame < 0 ? -1 : this.firstFrame * FRAME_MS;
  }

  /** Silence since the last word, or since the start when there was none. */
  get silenceMs(): number {
    return (this.frames - this.endFrame) * FRAME_MS;
  }

  /** Takes the next frame's verdict. */
  push(voiced: boolean): void {
    const frame = this.frames++;
    if (!voiced) {
      this.voicedRun = 0;
      if (this.inWord && frame - this.endFrame + 1 >= this.gapFrames) this.inWord = false;
      return;
    }
    this.voicedRun++;
    if (this.inWord) {
      this.endFrame = frame + 1;
      return;
    }
    if (this.voicedRun < this.minWordFrames) return;
    // A word: it began with the first frame of this voiced run.
    this.inWord = true;
    this.wordCount++;
    if (this.firstFrame < 0) this.firstFrame = frame + 1 - this.voicedRun;
    this.endFrame = frame + 1;
  }
}
