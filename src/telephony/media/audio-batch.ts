/**
 * The caller audio of every call from one pacer tick, in one buffer: frame `n` belongs to call
 * `calls[n]` and ends at sample `ends[n]`. One array a tick instead of one per call and frame
 * keeps the media thread's garbage collector quiet and the message to the main thread small.
 */

/** A tick's frames as they cross to the main thread. */
export interface AudioFrames {
  readonly calls: Uint32Array;
  readonly ends: Uint32Array;
  readonly samples: Int16Array;
}

/** Collects frames until {@link take}. */
export class AudioBatch {
  private calls = new Uint32Array(256);
  private ends = new Uint32Array(256);
  private samples = new Int16Array(256 * 320);
  private frames = 0;
  private used = 0;

  /** Frames collected since the last {@link take}. */
  get size(): number {
    return this.frames;
  }

  /** Copies `pcm` in as call `call`'s next frame. */
  add(call: number, pcm: Int16Array): void {
    if (this.frames === this.calls.length) {
      this.calls = grow(this.calls, new Uint32Array(this.calls.length * 2));
      this.ends = grow(this.ends, new Uint32Array(this.ends.length * 2));
    }
    if (this.used + pcm.length > this.samples.length)
      this.samples = grow(this.samples, new Int16Array(Math.max(this.samples.length * 2, this.used + pcm.length)));
    this.samples.set(pcm, this.used);
    this.used += pcm.length;
    this.calls[this.frames] = call;
    this.ends[this.frames] = this.used;
    this.frames += 1;
  }

  /** The frames collected (copies of just the used part), and an empty batch. */
  take(): AudioFrames {
    const taken = { calls: this.calls.slice(0, this.frames), ends: this.ends.slice(0, this.frames), samples: this.samples.slice(0, this.used) };
    this.frames = 0;
    this.used = 0;
    return taken;
  }
}

function grow<T extends Uint32Array | Int16Array>(from: T, to: T): T {
  to.set(from);
  return to;
}

/** Each frame of a batch as a view into its buffer, with its call. */
export function* framesOf(batch: AudioFrames): Generator<[call: number, pcm: Int16Array]> {
  for (let n = 0, start = 0; n < batch.calls.length; start = batch.ends[n]!, n++) yield [batch.calls[n]!, batch.samples.subarray(start, batch.ends[n]!)];
}
