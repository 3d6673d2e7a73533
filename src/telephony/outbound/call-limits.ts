/**
 * Per-key limits on outbound calls: how many a key may start per second (a token bucket holding
 * one second's worth, so a burst of that many is fine) and how many it may have queued, ringing
 * or up at once. Counted by the store's {@link LimitCounters}, so with PostgreSQL the limits
 * hold for every instance together. A refused call costs nothing.
 */
import type { LimitCounters, SlotRelease } from '../../store/limit-counters.js';
import { CallOrderError } from './call-order.js';

/** The limits of one key's calls. */
export class OutboundCallLimits {
  constructor(
    private readonly callsPerSecond: number,
    private readonly callsPerKey: number,
    private readonly counters: LimitCounters,
  ) {}

  /**
   * Takes a call for `keyId`.
   * @returns what gives its place back once the call is over (call it once)
   * @throws CallOrderError (`key_limit`) with the seconds to wait when the key is over a limit
   */
  async take(keyId: string): Promise<SlotRelease> {
    const release = await this.counters.takeSlot(`calls:live:${keyId}`, this.callsPerKey);
    if (!release)
      throw new CallOrderError('key_limit', `this key has ${this.callsPerKey} calls queued, ringing or up, its limit (SPRACHROHR_CALLS_PER_KEY)`, 5);
    const rate = await this.counters
      .takeToken(`calls:rate:${keyId}`, { capacity: this.callsPerSecond, refillPerSecond: this.callsPerSecond })
      .catch((error: unknown) => {
        release();
        throw error;
      });
    if (!rate.taken) {
      release();
      const waitSeconds = Math.max(1, Math.ceil((1 - rate.tokens) / this.callsPerSecond));
      throw new CallOrderError('key_limit', `this key may start ${this.callsPerSecond} calls a second (SPRACHROHR_CALLS_PER_SECOND)`, waitSeconds);
    }
    return release;
  }
}
