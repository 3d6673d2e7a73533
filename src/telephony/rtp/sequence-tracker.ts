/**
 * Receive statistics of one RTP source as RFC 3550 appendix A keeps them: extended sequence
 * numbers across the 16-bit wrap, the probation that tells a restarted sender from a stray
 * packet, duplicates, expected and lost counts, and the interarrival jitter estimate.
 */

/** What an RTCP reception report block needs about one source (RFC 3550 6.4.1). */
export interface ReceptionStats {
  readonly ssrc: number;
  /** Extended highest sequence number received: wrap count × 65536 + highest sequence number. */
  readonly extendedHighestSeq: number;
  /** Packets expected since the first (or since a restart). */
  readonly expected: number;
  /** Distinct packets received, late ones included, duplicates not. */
  readonly received: number;
  /** expected − received; never negative, since duplicates are not counted. */
  readonly cumulativeLost: number;
  /** Interarrival jitter in timestamp units (RFC 3550 A.8). */
  readonly jitter: number;
}

/** {@link SequenceTracker.track}: a packet that is neither in sequence nor a confirmed restart. */
export const SEQ_INVALID = -1;
/** {@link SequenceTracker.track}: a packet already received. */
export const SEQ_DUPLICATE = -2;

/** A gap ahead larger than this is a stray packet until its successor confirms it (RFC 3550 A.1). */
const MAX_DROPOUT = 3000;
/** Packets further behind than this are strays too. */
const MAX_MISORDER = 100;
/** Remembered sequence numbers for duplicate detection; more than MAX_DROPOUT + MAX_MISORDER is not needed. */
const HISTORY = 4096;
/** Extended numbers start one wrap up so that packets reordered before the first stay positive. */
const FIRST_CYCLE = 65536;

/** Sequence and jitter state of one source; the owner resets it when the SSRC changes. */
export class SequenceTracker {
  private started = false;
  private cycles = FIRST_CYCLE;
  private maxSeq = 0;
  private baseExt = 0;
  private badSeq = -1;
  private received = 0;
  private jitterUnits = 0;
  private lastArrivalUnits = Number.NaN;
  private lastTimestamp = 0;
  private readonly seen = new Float64Array(HISTORY).fill(-1);
  private restartedFlag = false;

  /** @param clockRate the payload's RTP clock in Hz, for the jitter estimate's arrival times */
  constructor(private readonly clockRate: number) {}

  /** Whether the last {@link track} call restarted the sequence: everything buffered before is void. */
  get restarted(): boolean {
    return this.restartedFlag;
  }

  /**
   * Accounts for one packet. Returns its extended sequence number (positive, increasing by one
   * per packet across wraps), {@link SEQ_DUPLICATE}, or {@link SEQ_INVALID} for a packet too far
   * from the sequence (a second packet continuing it restarts the sequence, see {@link restarted}).
   * @param withJitter false for packets whose timestamp does not follow the media clock
   *   (RFC 4733 events repeat their start timestamp)
   */
  track(sequenceNumber: number, timestamp: number, arrivalMs: number, withJitter = true): number {
    this.restartedFlag = false;
    const seq = sequenceNumber & 0xffff;
    if (!this.started) {
      this.init(seq);
    } else {
      const udelta = (seq - this.maxSeq) & 0xffff;
      if (udelta < MAX_DROPOUT) {
        if (seq < this.maxSeq) this.cycles += 65536;
        this.maxSeq = seq;
      } else if (udelta <= 65536 - MAX_MISORDER) {
        if (seq !== this.badSeq) {
          this.badSeq = (seq + 1) & 0xffff;
          return SEQ_INVALID;
        }
        // Two packets in sequence after a jump: the sender restarted its numbering.
        this.init(seq);
        this.restartedFlag = true;
      }
    }
    // Packets behind the highest one may belong to the previous wrap.
    const ext = this.cycles + seq - (seq > this.maxSeq ? 65536 : 0);
    const slot = ext % HISTORY;
    if (this.seen[slot] === ext) return SEQ_DUPLICATE;
    this.seen[slot] = ext;
    if (ext < this.baseExt) this.baseExt = ext;
    this.received++;
    if (withJitter) this.updateJitter(timestamp, arrivalMs);
    return ext;
  }

  /** Statistics for RTCP, reported for `ssrc`. */
  stats(ssrc: number): ReceptionStats {
    const highest = this.cycles + this.maxSeq;
    const expected = this.started ? highest - this.baseExt + 1 : 0;
    return {
      ssrc,
      extendedHighestSeq: this.started ? highest - FIRST_CYCLE : 0,
      expected,
      received: this.received,
      cumulativeLost: Math.max(0, expected - this.received),
      jitter: this.jitterUnits,
    };
  }

  /** Interarrival jitter in milliseconds. */
  get jitterMs(): number {
    return (this.jitterUnits * 1000) / this.clockRate;
  }

  /** Forgets the source. */
  reset(): void {
    this.started = false;
    this.received = 0;
    this.jitterUnits = 0;
    this.lastArrivalUnits = Number.NaN;
    this.restartedFlag = false;
  }

  private init(seq: number): void {
    this.started = true;
    this.cycles = FIRST_CYCLE;
    this.maxSeq = seq;
    this.baseExt = FIRST_CYCLE + seq;
    this.badSeq = -1;
    this.received = 0;
    this.lastArrivalUnits = Number.NaN;
    this.seen.fill(-1);
  }

  private updateJitter(timestamp: number, arrivalMs: number): void {
    const arrivalUnits = (arrivalMs * this.clockRate) / 1000;
    if (!Number.isNaN(this.lastArrivalUnits)) {
      // `| 0` takes the timestamp difference modulo 2^32 as a signed number: a wrap is a step of one frame.
      const sent = (timestamp - this.lastTimestamp) | 0;
      const d = arrivalUnits - this.lastArrivalUnits - sent;
      // A step of more than a second is the sender moving its timestamps (hold, a new media
      // source behind the same SSRC), not network jitter: it would swamp the estimate for seconds.
      if (Math.abs(d) <= this.clockRate) this.jitterUnits += (Math.abs(d) - this.jitterUnits) / 16;
    }
    this.lastArrivalUnits = arrivalUnits;
    this.lastTimestamp = timestamp;
  }
}
