/**
 * Per-key limits on outbound calls: how many a key may start per second (a token bucket holding
 * one second's worth, so a burst of that many is fine) and how many it may have queued, ringing
 * or up at once. A refused call costs nothing.
 */
import { CallOrderError } from './call-order.js';

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** The limits of one process. */
export class OutboundCallLimits {
  private readonly buckets = new Map<string, Bucket>();
  private readonly live = new Map<string, number>();

  constructor(
    private readonly callsPerSecond: number,
    private readonly callsPerKey: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Takes a call for `keyId`; release it with {@link release} once it is over.
   * @throws CallOrderError (`key_limit`) with the seconds to wait when the key is over a limit
   */
  take(keyId: string): void {
    const live = this.live.get(keyId) ?? 0;
    if (live >= this.callsPerKey)
      throw new CallOrderError('key_limit', `this key has ${live} calls queued, ringing or up, its limit (SPRACHROHR_CALLS_PER_KEY)`, 5);
    const now = this.now();
    const bucket = this.buckets.get(keyId) ?? { tokens: this.callsPerSecond, updatedMs: now };
    bucket.tokens = Math.min(this.callsPerSecond, bucket.tokens + ((now - bucket.updatedMs) / 1000) * this.callsPerSecond);
    bucket.updatedMs = now;
    this.buckets.set(keyId, bucket);
    if (bucket.tokens < 1) {
      const waitSeconds = Math.max(1, Math.ceil((1 - bucket.tokens) / this.callsPerSecond));
      throw new CallOrderError('key_limit', `this key may start ${this.callsPerSecond} calls a second (SPRACHROHR_CALLS_PER_SECOND)`, waitSeconds);
    }
    bucket.tokens -= 1;
    this.live.set(keyId, live + 1);
  }

  /** A call of `keyId` is over. */
  release(keyId: string): void {
    const live = (this.live.get(keyId) ?? 1) - 1;
    if (live <= 0) this.live.delete(keyId);
    else this.live.set(keyId, live);
    // A full bucket of a key without calls is what a missing one means.
    const bucket = this.buckets.get(keyId);
    if (live <= 0 && bucket && bucket.tokens + ((this.now() - bucket.updatedMs) / 1000) * this.callsPerSecond >= this.callsPerSecond)
      this.buckets.delete(keyId);
  }
}
