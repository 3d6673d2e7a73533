/** The last few frames of caller audio, kept without shifting arrays 50 times a second. */
export class FrameRing {
  private readonly frames: Array<Int16Array | undefined>;
  private next = 0;
  private count = 0;

  constructor(private readonly capacity: number) {
    this.frames = new Array<Int16Array | undefined>(capacity);
  }

  push(frame: Int16Array): void {
    this.frames[this.next] = frame;
    this.next = (this.next + 1) % this.capacity;
    this.count = Math.min(this.count + 1, this.capacity);
  }

  /** Forgets all but the newest `frames`. */
  keepLast(frames: number): void {
    this.count = Math.min(this.count, frames);
  }

  /** The kept frames, oldest first; the ring is empty afterwards. */
  take(): Int16Array[] {
    const out: Int16Array[] = [];
    for (let i = this.count; i > 0; i--) out.push(this.frames[(this.next - i + this.capacity) % this.capacity]!);
    this.count = 0;
    return out;
  }
}
