import { LIMITS } from '../catalog/limits.js';
import { ApiError, type ErrorFamily } from './errors.js';
import type { Principal } from '../auth/authenticate.js';
import type { Config } from '../config.js';

/** Ceilings on simultaneous requests (spec 8: over them gives 429, never a queue). */
export interface AdmissionLimits {
  readonly maxInFlight: number;
  readonly keyMaxInFlight: number;
  readonly sandboxKeyMaxInFlight: number;
}

/** `capacity.limits` of capabilities: the published ceilings, and nothing else. */
export interface CapacityLimits {
  readonly max_in_flight: number;
  readonly key_max_in_flight: number;
  readonly sandbox_key_max_in_flight: number;
  readonly requests_per_minute: number;
  readonly burst_per_second: number;
}

/** The ceilings of ordinary HTTP requests, in the shape the admission rules take. */
export function httpLimits(config: Config): AdmissionLimits {
  return { maxInFlight: config.maxInFlight, keyMaxInFlight: config.keyMaxInFlight, sandboxKeyMaxInFlight: config.sandboxKeyMaxInFlight };
}

/** The ceilings of realtime sessions, in the shape the admission rules take. */
export function realtimeLimits(config: Config): AdmissionLimits {
  return {
    maxInFlight: config.realtimeMaxSessions,
    keyMaxInFlight: config.realtimeKeyMaxSessions,
    sandboxKeyMaxInFlight: config.realtimeSandboxKeyMaxSessions,
  };
}

/** Where a key stands against its request rate after a request: what it may send at once now, and when its bucket is full again. */
export interface RateLimitState {
  /** Requests the key may send at once now (the burst left). */
  readonly remaining: number;
  /** Seconds until the bucket is full again (a whole burst may be sent). */
  readonly resetSeconds: number;
}

/**
 * The IETF `RateLimit` and `RateLimit-Policy` headers (draft-ietf-httpapi-ratelimit-headers):
 * the policy is 600 requests a minute; `r` is what may be sent at once now (a burst of at most
 * 25), `t` the seconds until the bucket is full again.
 */
export function rateLimitHeaders(state: RateLimitState): Record<string, string> {
  return {
    'RateLimit-Policy': `"default";q=${LIMITS.requestsPerMinute};w=60`,
    RateLimit: `"default";r=${state.remaining};t=${state.resetSeconds}`,
  };
}

interface Bucket {
  tokens: number;
  updatedMs: number;
}

/** Tokens refilled per millisecond: 600 per minute. */
const REFILL_PER_MS = LIMITS.requestsPerMinute / 60_000;

/** The headers' view of a bucket holding `tokens`. */
function stateOf(tokens: number): RateLimitState {
  return { remaining: Math.floor(tokens), resetSeconds: Math.ceil((LIMITS.burstPerSecond - tokens) / REFILL_PER_MS / 1000) };
}

/**
 * Admits or refuses ordinary requests per key: a token bucket (burst of 25, refilled at 600 per
 * minute) for the request rate, and in-flight ceilings per key and per process.
 */
export class Admission {
  private readonly limits: AdmissionLimits;
  private readonly buckets = new Map<string, Bucket>();
  private readonly inFlightByKey = new Map<string, number>();
  private inFlight = 0;
  private peakInFlight = 0;
  private readonly rejected = { rate_limited: 0, key_capacity: 0, service_capacity: 0 };

  /**
   * @param limits the three ceilings; only these fields are kept (a caller may hand over a
   *   larger object, such as the whole configuration, and none of the rest must end up in a
   *   {@link snapshot} that capabilities publishes).
   */
  constructor(
    limits: AdmissionLimits,
    private readonly nowMs: () => number = () => performance.now(),
  ) {
    this.limits = { maxInFlight: limits.maxInFlight, keyMaxInFlight: limits.keyMaxInFlight, sandboxKeyMaxInFlight: limits.sandboxKeyMaxInFlight };
  }

  /**
   * Counts one request against the key's rate and takes a slot for it (a realtime session's
   * open). Same as {@link countRequest} then {@link takeSlot}.
   * @returns the function that gives the slot back (call it exactly once).
   * @throws ApiError `*.rate_limited` or `*.capacity` (429 with Retry-After).
   */
  admit(principal: Principal, family: ErrorFamily): () => void {
    this.countRequest(principal, family);
    return this.takeSlot(principal, family);
  }

  /**
   * Counts one request against the key's rate (a burst of 25, refilled at 600 per minute), as
   * it arrives.
   * @returns where the key stands now, for the `RateLimit` headers
   * @throws ApiError `*.rate_limited` (429 with Retry-After and the `RateLimit` headers).
   */
  countRequest(principal: Principal, family: ErrorFamily): RateLimitState {
    return this.takeToken(principal.keyId, family);
  }

  /**
   * Takes an in-flight slot under the key's and the process's ceilings: for an HTTP request
   * once its body has arrived, so a client that sends slowly holds no slot while it does.
   * @returns the function that gives the slot back (call it exactly once).
   * @throws ApiError `*.capacity` (429 with Retry-After, `key_capacity` or `service_capacity`).
   */
  takeSlot(principal: Principal, family: ErrorFamily): () => void {
    const keyLimit = principal.environment === 'sandbox' ? this.limits.sandboxKeyMaxInFlight : this.limits.keyMaxInFlight;
    const keyInFlight = this.inFlightByKey.get(principal.keyId) ?? 0;
    if (keyInFlight >= keyLimit) {
      this.rejected.key_capacity++;
      throw ApiError.of(family, 'capacity', 'key_capacity', { retryAfterSeconds: 1, headers: { 'X-Speech-Capacity-Reason': 'key_capacity' } });
    }
    if (this.inFlight >= this.limits.maxInFlight) {
      this.rejected.service_capacity++;
      throw ApiError.of(family, 'capacity', 'service_capacity', { retryAfterSeconds: 1, headers: { 'X-Speech-Capacity-Reason': 'service_capacity' } });
    }
    this.inFlightByKey.set(principal.keyId, keyInFlight + 1);
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      const left = (this.inFlightByKey.get(principal.keyId) ?? 1) - 1;
      if (left === 0) this.inFlightByKey.delete(principal.keyId);
      else this.inFlightByKey.set(principal.keyId, left);
    };
  }

  private takeToken(keyId: string, family: ErrorFamily): RateLimitState {
    const now = this.nowMs();
    const bucket = this.buckets.get(keyId) ?? { tokens: LIMITS.burstPerSecond, updatedMs: now };
    bucket.tokens = Math.min(LIMITS.burstPerSecond, bucket.tokens + (now - bucket.updatedMs) * REFILL_PER_MS);
    bucket.updatedMs = now;
    this.buckets.set(keyId, bucket);
    if (bucket.tokens < 1) {
      this.rejected.rate_limited++;
      const waitSeconds = (1 - bucket.tokens) / REFILL_PER_MS / 1000;
      throw ApiError.of(family, 'rate_limited', `more than ${LIMITS.requestsPerMinute} requests per minute or ${LIMITS.burstPerSecond} in a burst`, {
        retryAfterSeconds: waitSeconds,
        headers: rateLimitHeaders(stateOf(bucket.tokens)),
      });
    }
    bucket.tokens -= 1;
    if (this.buckets.size > 100_000) this.forgetFullBuckets(now);
    return stateOf(bucket.tokens);
  }

  /** Drops buckets that have refilled completely: they hold no information. */
  private forgetFullBuckets(now: number): void {
    for (const [key, bucket] of this.buckets) {
      if (bucket.tokens + (now - bucket.updatedMs) * REFILL_PER_MS >= LIMITS.burstPerSecond) this.buckets.delete(key);
    }
  }

  /** Requests in flight now, per key. */
  inFlightOf(keyId: string): number {
    return this.inFlightByKey.get(keyId) ?? 0;
  }

  /** The `capacity` section of capabilities (spec 2.7), without host figures. */
  snapshot(): { in_flight: number; peak_in_flight: number; limits: CapacityLimits; rejected: Readonly<Record<string, number>> } {
    return {
      in_flight: this.inFlight,
      peak_in_flight: this.peakInFlight,
      // Named field by field: this object is published to every key.
      limits: {
        max_in_flight: this.limits.maxInFlight,
        key_max_in_flight: this.limits.keyMaxInFlight,
        sandbox_key_max_in_flight: this.limits.sandboxKeyMaxInFlight,
        requests_per_minute: LIMITS.requestsPerMinute,
        burst_per_second: LIMITS.burstPerSecond,
      },
      rejected: { ...this.rejected },
    };
  }
}
