import { LIMITS } from '../catalog/limits.js';
import { ApiError, type ErrorFamily } from './errors.js';
import type { Principal } from '../auth/authenticate.js';
import type { Config } from '../config.js';
import type { BucketShape, LimitCounters } from '../store/limit-counters.js';

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

/** A key's request bucket: a burst of 25, refilled at 600 per minute. */
const REQUEST_BUCKET: BucketShape = { capacity: LIMITS.burstPerSecond, refillPerSecond: LIMITS.requestsPerMinute / 60 };

/** The headers' view of a bucket holding `tokens`. */
function stateOf(tokens: number): RateLimitState {
  return { remaining: Math.floor(tokens), resetSeconds: Math.ceil((REQUEST_BUCKET.capacity - tokens) / REQUEST_BUCKET.refillPerSecond) };
}

/**
 * Admits or refuses ordinary requests (or realtime sessions) per key: a token bucket (burst of
 * 25, refilled at 600 per minute) for the request rate, and in-flight ceilings per key and per
 * process. The key's bucket and ceiling are counted by the store's {@link LimitCounters}: in
 * this process with the embedded store, for every instance together with PostgreSQL. The
 * process's ceiling protects this machine and stays its own.
 */
export class Admission {
  private readonly limits: AdmissionLimits;
  private inFlight = 0;
  private peakInFlight = 0;
  private readonly rejected = { rate_limited: 0, key_capacity: 0, service_capacity: 0 };

  /**
   * @param limits the three ceilings; only these fields are kept (a caller may hand over a
   *   larger object, such as the whole configuration, and none of the rest must end up in a
   *   {@link snapshot} that capabilities publishes).
   * @param counters where the keys' buckets and in-flight slots are counted
   * @param scope what is admitted (`http` requests, `realtime` sessions): each has its own
   *   buckets and ceilings under the same key
   */
  constructor(
    limits: AdmissionLimits,
    private readonly counters: LimitCounters,
    private readonly scope: 'http' | 'realtime',
  ) {
    this.limits = { maxInFlight: limits.maxInFlight, keyMaxInFlight: limits.keyMaxInFlight, sandboxKeyMaxInFlight: limits.sandboxKeyMaxInFlight };
  }

  /**
   * Counts one request against the key's rate and takes a slot for it (a realtime session's
   * open). Same as {@link countRequest} then {@link takeSlot}.
   * @returns the function that gives the slot back (call it exactly once).
   * @throws ApiError `*.rate_limited` or `*.capacity` (429 with Retry-After).
   */
  async admit(principal: Principal, family: ErrorFamily): Promise<() => void> {
    await this.countRequest(principal, family);
    return this.takeSlot(principal, family);
  }

  /**
   * Counts one request against the key's rate (a burst of 25, refilled at 600 per minute), as
   * it arrives.
   * @returns where the key stands now, for the `RateLimit` headers
   * @throws ApiError `*.rate_limited` (429 with Retry-After and the `RateLimit` headers).
   */
  async countRequest(principal: Principal, family: ErrorFamily): Promise<RateLimitState> {
    const take = await this.counters.takeToken(`${this.scope}:rate:${principal.keyId}`, REQUEST_BUCKET);
    if (!take.taken) {
      this.rejected.rate_limited++;
      const waitSeconds = (1 - take.tokens) / REQUEST_BUCKET.refillPerSecond;
      throw ApiError.of(family, 'rate_limited', `more than ${LIMITS.requestsPerMinute} requests per minute or ${LIMITS.burstPerSecond} in a burst`, {
        retryAfterSeconds: waitSeconds,
        headers: rateLimitHeaders(stateOf(take.tokens)),
      });
    }
    return stateOf(take.tokens);
  }

  /**
   * Takes an in-flight slot under the key's and the process's ceilings: for an HTTP request
   * once its body has arrived, so a client that sends slowly holds no slot while it does.
   * @returns the function that gives the slot back (call it exactly once).
   * @throws ApiError `*.capacity` (429 with Retry-After, `key_capacity` or `service_capacity`).
   */
  async takeSlot(principal: Principal, family: ErrorFamily): Promise<() => void> {
    const keyLimit = principal.environment === 'sandbox' ? this.limits.sandboxKeyMaxInFlight : this.limits.keyMaxInFlight;
    // A full process refuses before it asks the shared counters: no round trip to refuse.
    if (this.inFlight >= this.limits.maxInFlight) this.refuseServiceCapacity(family);
    const keySlot = await this.counters.takeSlot(this.keySlotName(principal.keyId), keyLimit);
    if (!keySlot) {
      this.rejected.key_capacity++;
      throw ApiError.of(family, 'capacity', 'key_capacity', { retryAfterSeconds: 1, headers: { 'X-Speech-Capacity-Reason': 'key_capacity' } });
    }
    // Checked again: other requests may have filled the process while the key's slot was taken.
    if (this.inFlight >= this.limits.maxInFlight) {
      keySlot();
      this.refuseServiceCapacity(family);
    }
    this.inFlight++;
    this.peakInFlight = Math.max(this.peakInFlight, this.inFlight);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inFlight--;
      keySlot();
    };
  }

  /** Counts and throws the refusal of a request the process has no room for. */
  private refuseServiceCapacity(family: ErrorFamily): never {
    this.rejected.service_capacity++;
    throw ApiError.of(family, 'capacity', 'service_capacity', { retryAfterSeconds: 1, headers: { 'X-Speech-Capacity-Reason': 'service_capacity' } });
  }

  /** Requests (or sessions) of a key in flight now, on every instance that shares the counters. */
  inFlightOf(keyId: string): Promise<number> {
    return this.counters.slotsTaken(this.keySlotName(keyId));
  }

  private keySlotName(keyId: string): string {
    return `${this.scope}:in-flight:${keyId}`;
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
