/** The load run's receiving side: one socket per SIPp call, and the arrival of every packet against the call's schedule. */
import type dgram from 'node:dgram';
import { bind, closeSocket, FRAME_MS, FRAME_SAMPLES } from './common.js';

/** The packets one call's receiver got: arrival times and their offsets from the call's schedule. */
export class CallTrace {
  count = 0;
  lost = 0;
  foreign = 0;
  private ssrc = 0;
  private firstTimestamp = 0;
  private lastSequence = 0;
  at: Float64Array;
  offset: Float64Array;
  /** How many packets were missing before each one (gaps in the sequence numbers). */
  gapBefore: Uint16Array;

  /** `capacity`: the packets expected, so that the arrays need not grow while packets arrive. */
  constructor(capacity: number) {
    this.at = new Float64Array(capacity);
    this.offset = new Float64Array(capacity);
    this.gapBefore = new Uint16Array(capacity);
  }

  /** Records a datagram that arrived at `at` (performance.now()); anything not RTP is passed over. */
  add(data: Buffer, at: number): void {
    if (data.length < 12 || data[0]! >> 6 !== 2) return;
    const sequence = data.readUInt16BE(2);
    const timestamp = data.readUInt32BE(4);
    const ssrc = data.readUInt32BE(8);
    let gap = 0;
    if (this.count === 0) {
      this.ssrc = ssrc;
      this.firstTimestamp = timestamp;
    } else if (ssrc !== this.ssrc) {
      this.foreign += 1;
      return;
    } else {
      const step = (sequence - this.lastSequence) & 0xffff;
      if (step > 1 && step < 0x8000) gap = step - 1;
      this.lost += gap;
    }
    this.lastSequence = sequence;
    if (this.count === this.at.length) {
      const grow = <T extends Float64Array | Uint16Array>(array: T, make: (length: number) => T): T => {
        const bigger = make(array.length * 2);
        bigger.set(array);
        return bigger;
      };
      this.at = grow(this.at, (n) => new Float64Array(n));
      this.offset = grow(this.offset, (n) => new Float64Array(n));
      this.gapBefore = grow(this.gapBefore, (n) => new Uint16Array(n));
    }
    const frames = ((timestamp - this.firstTimestamp) >>> 0) / FRAME_SAMPLES;
    this.at[this.count] = at;
    this.offset[this.count] = at - frames * FRAME_MS;
    this.gapBefore[this.count] = Math.min(gap, 0xffff);
    this.count += 1;
  }

  get firstAt(): number {
    return this.count > 0 ? this.at[0]! : Number.NaN;
  }

  get lastAt(): number {
    return this.count > 0 ? this.at[this.count - 1]! : Number.NaN;
  }
}

/** One socket per call on the ports SIPp's calls offer: media port + 4n for call n. */
export class CallReceivers {
  traces: CallTrace[] = [];
  onAllStarted: (() => void) | null = null;
  private started = 0;
  /** Packets expected per call (grown to when a run is longer). */
  capacity = 2048;

  private constructor(
    readonly mediaPort: number,
    private readonly sockets: dgram.Socket[],
  ) {
    this.reset();
    sockets.forEach((socket, index) =>
      socket.on('message', (data) => {
        const at = performance.now();
        const trace = this.traces[index]!;
        const wasEmpty = trace.count === 0;
        trace.add(data, at);
        if (wasEmpty && trace.count > 0 && ++this.started === this.sockets.length) this.onAllStarted?.();
      }),
    );
  }

  /** Binds the receivers; SIPp's own media ports (the media port and two above) must be free too. */
  static async open(calls: number): Promise<CallReceivers> {
    const fixed = process.env['CALLS_BENCH_MEDIA_PORT'] ? Number(process.env['CALLS_BENCH_MEDIA_PORT']) : null;
    const span = 4 * (calls + 1);
    const bases = fixed !== null ? [fixed] : Array.from({ length: 40 }, (_, k) => 10_000 + k * (span + 4)).filter((base) => base + span < 20_000);
    for (const base of bases) {
      const sockets: dgram.Socket[] = [];
      try {
        for (const port of [base, base + 2]) await bind(port).then(closeSocket);
        for (let n = 1; n <= calls; n++) sockets.push(await bind(base + 4 * n));
        return new CallReceivers(base, sockets);
      } catch {
        await Promise.all(sockets.map(closeSocket));
      }
    }
    throw new Error(`no free run of ports for ${calls} calls below 20000 (set CALLS_BENCH_MEDIA_PORT)`);
  }

  /** The receivers' ports, call by call. */
  get ports(): number[] {
    return this.sockets.map((_, index) => this.mediaPort + 4 * (index + 1));
  }

  /** Empty traces for every call (the packets of the warm-up are dropped). */
  reset(): void {
    this.traces = this.sockets.map(() => new CallTrace(this.capacity));
    this.started = 0;
  }

  /** Closes every receiver's socket. */
  async close(): Promise<void> {
    await Promise.all(this.sockets.map(closeSocket));
  }
}

/** The pacing errors of the packets that arrived in the window from `start` to `end`. */
export interface WindowErrors {
  /** Each packet's arrival less its place in the call's schedule, in ms, ascending. */
  readonly errors: Float64Array;
  readonly packets: number;
  /** Packets missing before those of the window (gaps in the sequence numbers). */
  readonly lost: number;
}

/**
 * Every packet's offset from its call's schedule, the schedule shifted to the call's most
 * punctual packet (so that no packet counts as early); only packets of the window count.
 */
export function windowErrors(traces: readonly CallTrace[], start: number, end: number): WindowErrors {
  let packets = 0;
  let lost = 0;
  for (const trace of traces) for (let i = 0; i < trace.count; i++) if (trace.at[i]! >= start && trace.at[i]! <= end) packets++;
  const errors = new Float64Array(packets);
  let k = 0;
  for (const trace of traces) {
    let anchor = Infinity;
    for (let i = 0; i < trace.count; i++) anchor = Math.min(anchor, trace.offset[i]!);
    for (let i = 0; i < trace.count; i++) {
      if (trace.at[i]! < start || trace.at[i]! > end) continue;
      errors[k++] = trace.offset[i]! - anchor;
      lost += trace.gapBefore[i]!;
    }
  }
  errors.sort();
  return { errors, packets, lost };
}
