/**
 * When each stretch of a realtime recognition session's audio arrived, so that a transcript
 * covering the audio up to a point can be timed from the arrival of that point's audio: the
 * recogniser's lag, whatever pace the client sends at.
 */

/** Writes remembered: a minute of 20 ms frames, more than any utterance spans. */
const KEPT = 3000;

export class AudioArrivals {
  /** Audio seconds received in total after each write, and when that write arrived; oldest first. */
  private marks: Array<{ readonly seconds: number; readonly atMs: number }> = [];

  /** Notes that the audio now reaches `totalSeconds`, arrived at `atMs`. */
  arrived(totalSeconds: number, atMs = performance.now()): void {
    this.marks.push({ seconds: totalSeconds, atMs });
    if (this.marks.length > 2 * KEPT) this.marks = this.marks.slice(-KEPT);
  }

  /**
   * Milliseconds from the arrival of the write that brought the audio up to `coveredSeconds`
   * to `nowMs`, or null when no remembered write reached it.
   */
  lagMs(coveredSeconds: number, nowMs = performance.now()): number | null {
    // The first mark at or past the point (a small tolerance: transcripts round to frames).
    let low = 0;
    let high = this.marks.length;
    while (low < high) {
      const middle = (low + high) >>> 1;
      if (this.marks[middle]!.seconds + 0.0005 < coveredSeconds) low = middle + 1;
      else high = middle;
    }
    const mark = this.marks[low];
    return mark === undefined ? null : nowMs - mark.atMs;
  }
}
