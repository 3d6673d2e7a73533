/**
 * The outgoing frames of one RTP stream, copied into ring buffers that the stream keeps for its
 * whole life. A prompt arrives as runs of frames, often seconds ahead of the clock; kept as the
 * arriving objects, those runs would outlive two scavenges, be promoted to the old generation
 * and die there, and the media thread's major collections (its longest pauses) would come every
 * few seconds. Copied in, the arriving objects die young and the queue itself is a handful of
 * long-lived arrays that grow only when a longer queue than ever before has to fit (and go back
 * to their first size once a very long one has gone, see {@link KEEP_BYTES}).
 */

/** Frames of plain audio laid end to end in one buffer: frame `n` ends at byte `ends[n]`. */
export interface FrameRun {
  readonly data: Uint8Array;
  readonly ends: Uint32Array;
}

/**
 * The frame {@link FrameQueue.shift} took off the queue. The same object is filled again by the
 * next `shift`, and `payload` is a view into the queue's buffer: use both before queueing more.
 */
export interface QueuedFrame {
  payload: Uint8Array;
  /** The frame's own payload type, or `undefined` for the stream's audio type. */
  payloadType: number | undefined;
  /** The marker bit the frame insists on, or `undefined` to let the stream decide. */
  marker: boolean | undefined;
  /** Whether the frame carries the timestamp of the frame before it (RFC 4733 events). */
  repeatsTimestamp: boolean;
}

const MARKER_GIVEN = 1;
const MARKER_SET = 2;
const REPEATS_TIMESTAMP = 4;
/** Payload type slot value for "the stream's audio". */
const AUDIO_TYPE = -1;
/**
 * A queue emptied with more bytes than this (16 s of G.711) goes back to its first size, so one
 * long prompt does not hold a call's memory for the rest of the call.
 */
const KEEP_BYTES = 128 * 1024;

/** A first-in first-out queue of RTP payloads with their per-frame options. */
export class FrameQueue {
  // Set by allocate(), from the constructor on.
  private bytes!: Uint8Array;
  private starts!: Uint32Array;
  private lengths!: Uint32Array;
  private types!: Int16Array;
  private flags!: Uint8Array;
  /** Slot of the oldest frame in the frame arrays. */
  private first = 0;
  private count = 0;
  /** Where the oldest frame's bytes begin. */
  private byteStart = 0;
  /** Where the next frame's bytes go. */
  private byteEnd = 0;
  /** The newest bytes went to the buffer's beginning while the oldest are still at its end. */
  private wrapped = false;
  private readonly taken: QueuedFrame = { payload: new Uint8Array(0), payloadType: undefined, marker: undefined, repeatsTimestamp: false };

  /** @param initialFrames frames the queue holds before it first grows; `initialBytes` likewise for payload bytes */
  constructor(
    private readonly initialFrames = 64,
    private readonly initialBytes = initialFrames * 172,
  ) {
    this.allocate();
  }

  /** Frames waiting. */
  get length(): number {
    return this.count;
  }

  /** Bytes the queue can hold before it grows again. */
  get byteCapacity(): number {
    return this.bytes.length;
  }

  /** Copies one frame in at the end. */
  push(payload: Uint8Array, payloadType?: number, marker?: boolean, repeatsTimestamp = false): void {
    const slot = this.reserve(payload.length);
    this.bytes.set(payload, this.starts[slot]!);
    this.types[slot] = payloadType ?? AUDIO_TYPE;
    this.flags[slot] = (marker === undefined ? 0 : MARKER_GIVEN | (marker ? MARKER_SET : 0)) | (repeatsTimestamp ? REPEATS_TIMESTAMP : 0);
  }

  /** Copies a run's frames in at the end, in order. */
  pushRun(run: FrameRun): void {
    for (let n = 0, start = 0; n < run.ends.length; start = run.ends[n]!, n++) {
      const end = run.ends[n]!;
      const slot = this.reserve(end - start);
      const at = this.starts[slot]!;
      // A copy loop rather than `set(subarray)`: no view object per frame.
      for (let i = start; i < end; i++) this.bytes[at + i - start] = run.data[i]!;
      this.types[slot] = AUDIO_TYPE;
      this.flags[slot] = 0;
    }
  }

  /** Takes the oldest frame off, or returns `null` when the queue is empty. See {@link QueuedFrame} for how long it stays valid. */
  shift(): QueuedFrame | null {
    if (this.count === 0) return null;
    const slot = this.first;
    const start = this.starts[slot]!;
    const frame = this.taken;
    frame.payload = this.bytes.subarray(start, start + this.lengths[slot]!);
    const type = this.types[slot]!;
    frame.payloadType = type === AUDIO_TYPE ? undefined : type;
    const flags = this.flags[slot]!;
    frame.marker = flags & MARKER_GIVEN ? (flags & MARKER_SET) !== 0 : undefined;
    frame.repeatsTimestamp = (flags & REPEATS_TIMESTAMP) !== 0;
    this.first = (slot + 1) % this.starts.length;
    this.count--;
    if (this.count === 0) this.clear();
    else {
      const next = this.starts[this.first]!;
      // The oldest frame is now one written after the wrap: the bytes are in one piece again.
      if (this.wrapped && next < this.byteStart) this.wrapped = false;
      this.byteStart = next;
    }
    return frame;
  }

  /** Drops every frame (and memory grown beyond {@link KEEP_BYTES}). */
  clear(): void {
    if (this.bytes.length > KEEP_BYTES) this.allocate();
    this.first = 0;
    this.count = 0;
    this.byteStart = 0;
    this.byteEnd = 0;
    this.wrapped = false;
  }

  /** Buffers of the first size. */
  private allocate(): void {
    this.bytes = new Uint8Array(Math.max(1, this.initialBytes));
    this.starts = new Uint32Array(Math.max(1, this.initialFrames));
    this.lengths = new Uint32Array(this.starts.length);
    this.types = new Int16Array(this.starts.length);
    this.flags = new Uint8Array(this.starts.length);
  }

  /**
   * A slot for a frame of `length` bytes at the end, its start and length set. A frame's bytes
   * never wrap around the buffer's end; each frame takes at least one byte, so that the byte
   * positions alone tell where the oldest frame is.
   */
  private reserve(length: number): number {
    const room = Math.max(1, length);
    if (this.count === this.starts.length) this.growFrames();
    let at = this.place(room);
    if (at < 0) {
      this.growBytes(room);
      at = this.place(room);
    }
    const slot = (this.first + this.count) % this.starts.length;
    this.starts[slot] = at;
    this.lengths[slot] = length;
    this.count++;
    this.byteEnd = at + room;
    return slot;
  }

  /** Where `room` bytes fit after the newest frame, or -1. */
  private place(room: number): number {
    if (this.count === 0) return room <= this.bytes.length ? 0 : -1;
    if (this.wrapped) return this.byteEnd + room <= this.byteStart ? this.byteEnd : -1;
    if (this.byteEnd + room <= this.bytes.length) return this.byteEnd;
    if (room <= this.byteStart) {
      this.wrapped = true;
      return 0;
    }
    return -1;
  }

  /** Doubles the frame slots, the frames moved to the start in order. */
  private growFrames(): void {
    const size = this.starts.length * 2;
    const order = (array: Uint32Array | Int16Array | Uint8Array, grown: Uint32Array | Int16Array | Uint8Array): void => {
      for (let n = 0; n < this.count; n++) grown[n] = array[(this.first + n) % array.length]!;
    };
    const starts = new Uint32Array(size);
    const lengths = new Uint32Array(size);
    const types = new Int16Array(size);
    const flags = new Uint8Array(size);
    order(this.starts, starts);
    order(this.lengths, lengths);
    order(this.types, types);
    order(this.flags, flags);
    this.starts = starts;
    this.lengths = lengths;
    this.types = types;
    this.flags = flags;
    this.first = 0;
  }

  /** A larger byte buffer with room for `room` more, the frames' bytes moved to its start in order. */
  private growBytes(room: number): void {
    const used = this.wrapped ? this.bytes.length - this.byteStart + this.byteEnd : this.byteEnd - this.byteStart;
    const bytes = new Uint8Array(Math.max(this.bytes.length * 2, used + room));
    let at = 0;
    for (let n = 0; n < this.count; n++) {
      const slot = (this.first + n) % this.starts.length;
      const start = this.starts[slot]!;
      const length = this.lengths[slot]!;
      bytes.set(this.bytes.subarray(start, start + length), at);
      this.starts[slot] = at;
      at += Math.max(1, length);
    }
    this.bytes = bytes;
    this.byteStart = 0;
    this.byteEnd = at;
    this.wrapped = false;
  }
}
