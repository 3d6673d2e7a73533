/**
 * Finds where utterances start and end in a row of 20 ms frames already classified as speech or
 * not. Pure and synchronous: the same frames in give the same decisions out.
 */

/** How an utterance is found. */
export interface EndpointerOptions {
  /** Speech frames in a row that open an utterance (60 ms: a click is not speech). */
  readonly startFrames: number;
  /** Silence after speech that closes the utterance (the hangover). */
  readonly hangoverMs: number;
  /** Audio kept from before the start, so the first sound of a word is not cut. */
  readonly prerollMs: number;
  /** An utterance longer than this is closed anyway (bounds a decoder's memory). */
  readonly maxUtteranceMs: number;
}

/** Defaults for telephone dialogue: a breath inside a sentence does not end it. */
export const DEFAULT_ENDPOINTER_OPTIONS: EndpointerOptions = { startFrames: 3, hangoverMs: 500, prerollMs: 300, maxUtteranceMs: 30_000 };

const FRAME_MS = 20;

/** What to do with a frame. */
export type EndpointDecision =
  /** No utterance: the frame is kept as possible pre-roll. */
  | { readonly kind: 'silence' }
  /** An utterance opens with these frames (pre-roll and this one). */
  | { readonly kind: 'start'; readonly frames: readonly Int16Array[] }
  /** The frame belongs to the open utterance. */
  | { readonly kind: 'continue' }
  /** The frame is the last of the utterance; `speechEndFrames` counts the frames up to its last speech. */
  | { readonly kind: 'end'; readonly speechEndFrames: number };

/** The state of one stream's endpointing. */
export class Endpointer {
  private readonly preroll: Int16Array[] = [];
  private voicedRun = 0;
  private inUtterance = false;
  private utteranceFrames = 0;
  private silentFrames = 0;
  private lastSpeechFrame = 0;

  constructor(private readonly options: EndpointerOptions = DEFAULT_ENDPOINTER_OPTIONS) {}

  /** Whether an utterance is open. */
  get open(): boolean {
    return this.inUtterance;
  }

  /** Frames of the open utterance so far (pre-roll included). */
  get frames(): number {
    return this.utteranceFrames;
  }

  /** Takes the next frame and whether it holds speech. */
  push(frame: Int16Array, speech: boolean): EndpointDecision {
    if (!this.inUtterance) {
      this.preroll.push(frame);
      const keep = Math.max(this.options.startFrames, Math.ceil(this.options.prerollMs / FRAME_MS) + 1);
      if (this.preroll.length > keep) this.preroll.shift();
      this.voicedRun = speech ? this.voicedRun + 1 : 0;
      if (this.voicedRun < this.options.startFrames) return { kind: 'silence' };
      const frames = this.preroll.splice(0);
      this.inUtterance = true;
      this.utteranceFrames = frames.length;
      this.lastSpeechFrame = frames.length;
      this.silentFrames = 0;
      this.voicedRun = 0;
      return { kind: 'start', frames };
    }
    this.utteranceFrames += 1;
    if (speech) {
      this.silentFrames = 0;
      this.lastSpeechFrame = this.utteranceFrames;
    } else {
      this.silentFrames += 1;
    }
    const hungOver = this.silentFrames * FRAME_MS >= this.options.hangoverMs;
    if (hungOver || this.utteranceFrames * FRAME_MS >= this.options.maxUtteranceMs) {
      this.inUtterance = false;
      return { kind: 'end', speechEndFrames: this.lastSpeechFrame };
    }
    return { kind: 'continue' };
  }
}
