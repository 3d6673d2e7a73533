/**
 * The counters behind the per-key limits (spec 8): token buckets for request and call rates,
 * and slots for what a key may have in flight at once. One process keeps them in memory
 * ({@link LocalLimitCounters}); instances of a shared deployment keep them in PostgreSQL, so
 * that two instances under one key together allow what one allows.
 */

/** Where a token bucket stands after a take. */
export interface TokenTake {
  /** Whether a token was taken. */
  readonly taken: boolean;
  /** Tokens left in the bucket now (after the take, or when refused what it holds). */
  readonly tokens: number;
}

/** The shape of a token bucket: how many tokens it holds when full, and how fast it refills. */
export interface BucketShape {
  readonly capacity: number;
  readonly refillPerSecond: number;
}

/** A slot taken under a limit; give it back once (a second call does nothing). */
export type SlotRelease = () => void;

/** Counters by name; names are made by the service (a limit and a key id), never by a client. */
export interface LimitCounters {
  /**
   * Takes one token from the bucket `name` (a new bucket starts full), when it holds one.
   * The decision is exact under concurrency: two takes never share a token.
   */
  takeToken(name: string, shape: BucketShape): Promise<TokenTake>;
  /**
   * Takes one of `limit` slots of `name` when fewer than `limit` are taken.
   * @returns the slot's release, or `null` when all are taken
   */
  takeSlot(name: string, limit: number): Promise<SlotRelease | null>;
  /** Slots of `name` taken now (by every instance that shares the counters). */
  slotsTaken(name: string): Promise<number>;
}

interface Bucket {
  tokens: number;
  updatedMs: number;
  readonly shape: BucketShape;
}

/** Buckets kept before the full ones are forgotten (a full bucket is what a missing one means). */
const MAX_BUCKETS = 100_000;

/** The counters of one process, in memory. */
export class LocalLimitCounters implements LimitCounters {
  private readonly buckets = new Map<string, Bucket>();
  private readonly slots = new Map<string, number>();

  /** @param nowMs the clock the buckets refill by (tests hold it still) */
  constructor(private readonly nowMs: () => number = () => performance.now()) {}

  async takeToken(name: string, shape: BucketShape): Promise<TokenTake> {
    const now = this.nowMs();
    const bucket = this.buckets.get(name) ?? { tokens: shape.capacity, updatedMs: now, shape };
    bucket.tokens = this.level(bucket, now);
    bucket.updatedMs = now;
    this.buckets.set(name, bucket);
    if (bucket.tokens < 1) return { taken: false, tokens: bucket.tokens };
    bucket.tokens -= 1;
    if (this.buckets.size > MAX_BUCKETS) this.forgetFullBuckets(now);
    return { taken: true, tokens: bucket.tokens };
  }

  async takeSlot(name: string, limit: number): Promise<SlotRelease | null> {
    const taken = this.slots.get(name) ?? 0;
    if (taken >= limit) return null;
    this.slots.set(name, taken + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.slots.get(name) ?? 1) - 1;
      if (left <= 0) this.slots.delete(name);
      else this.slots.set(name, left);
    };
  }

  async slotsTaken(name: string): Promise<number> {
    return this.slots.get(name) ?? 0;
  }

  private level(bucket: Bucket, now: number): number {
    return Math.min(bucket.shape.capacity, bucket.tokens + ((now - bucket.updatedMs) / 1000) * bucket.shape.refillPerSecond);
  }

  private forgetFullBuckets(now: number): void {
    for (const [name, bucket] of this.buckets) if (this.level(bucket, now) >= bucket.shape.capacity) this.buckets.delete(name);
  }
}
