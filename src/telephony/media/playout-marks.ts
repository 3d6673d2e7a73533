/**
 * Marks in a call's outgoing audio: "tell me when everything queued before this has been
 * played". A mark is set at the count of frames queued so far and reached when the pacer has
 * taken that many frames of the prompt; frames taken while the caller holds the call count as
 * played (they are due, just not sent). Marks are kept in order, so each frame costs one
 * comparison with the first.
 */

/** A mark that came due: `played` false when its audio was dropped (stopped, cleared, codec change). */
export interface ReachedMark {
  readonly mark: number;
  readonly played: boolean;
}

/** The marks of one prompt's stream of frames. */
export class PlayoutMarks {
  private queued = 0;
  private taken = 0;
  private readonly pending: Array<{ readonly mark: number; readonly at: number }> = [];

  /** Frames were queued behind the ones before. */
  queue(frames: number): void {
    this.queued += frames;
  }

  /** Sets a mark after every frame queued so far; returns it at once when nothing is left to play. */
  add(mark: number): ReachedMark | null {
    if (this.queued <= this.taken) return { mark, played: true };
    this.pending.push({ mark, at: this.queued });
    return null;
  }

  /** One frame was taken for sending; returns the marks it completes. */
  take(): ReachedMark[] | null {
    this.taken += 1;
    const first = this.pending[0];
    if (!first || first.at > this.taken) return null;
    const reached: ReachedMark[] = [];
    while (this.pending.length > 0 && this.pending[0]!.at <= this.taken) reached.push({ mark: this.pending.shift()!.mark, played: true });
    return reached;
  }

  /** Everything queued was dropped: every pending mark is due, unplayed, and counting starts over. */
  drop(): ReachedMark[] {
    this.queued = 0;
    this.taken = 0;
    return this.pending.splice(0).map(({ mark }) => ({ mark, played: false }));
  }
}
