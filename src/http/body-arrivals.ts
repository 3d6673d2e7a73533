/**
 * Request bodies while they arrive. A request takes its in-flight slot only once its body is
 * complete (see `Admission.takeSlot`), so a client that trickles a body holds no slot; what it
 * holds instead is bounded here: a key may have only as many bodies arriving as it may have
 * requests in flight, and a body must keep arriving at a minimum average rate after a grace
 * period, or the request is answered `*.timeout` and its connection closed.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/authenticate.js';
import { ApiError, type ErrorFamily } from '../api/errors.js';
import type { AdmissionLimits } from '../api/admission.js';

/** How a body must arrive. */
export interface BodyPace {
  /** Time every body gets, whatever its size. */
  readonly graceMs: number;
  /** After the grace, bytes per second the body must have averaged since it began. */
  readonly minBytesPerSecond: number;
}

interface Arrival {
  readonly request: FastifyRequest;
  readonly reply: FastifyReply;
  readonly keyId: string;
  readonly family: ErrorFamily;
  readonly startedMs: number;
  readonly bytesReadAtStart: number;
}

/** How often arriving bodies are checked: a late body is found within this of its deadline. */
const SWEEP_MS = 250;
/** How long a timed-out body's request gets to be answered before its connection is dropped. */
const ANSWER_GRACE_MS = 1000;

/** Tracks the bodies of requests that are still arriving. */
export class BodyArrivals {
  private readonly arriving = new Set<Arrival>();
  private readonly byKey = new Map<string, number>();
  private sweeper: NodeJS.Timeout | null = null;

  constructor(
    private readonly limits: AdmissionLimits,
    private readonly pace: BodyPace,
    private readonly nowMs: () => number = () => performance.now(),
  ) {}

  /** Whether a request carries a body still to be read (a length above 0, or chunked). */
  static hasBody(request: FastifyRequest): boolean {
    // A request made in-process (fastify's inject) has its whole body at once, and no socket.
    if (typeof request.raw.socket?.bytesRead !== 'number') return false;
    const length = request.headers['content-length'];
    if (length !== undefined) return length !== '0';
    return request.headers['transfer-encoding'] !== undefined;
  }

  /** Bodies arriving now, in all (for tests and capacity figures). */
  get size(): number {
    return this.arriving.size;
  }

  /**
   * Watches a request's body until it is complete or the request ends.
   * @throws ApiError `*.capacity` (`key_capacity`, `service_capacity`) when the key, or the
   *   process, already has as many bodies arriving as it may have requests in flight.
   */
  watch(request: FastifyRequest, reply: FastifyReply, principal: Principal, family: ErrorFamily): void {
    const keyLimit = principal.environment === 'sandbox' ? this.limits.sandboxKeyMaxInFlight : this.limits.keyMaxInFlight;
    const ofKey = this.byKey.get(principal.keyId) ?? 0;
    if (ofKey >= keyLimit)
      throw ApiError.of(family, 'capacity', 'key_capacity', { retryAfterSeconds: 1, headers: { 'X-Speech-Capacity-Reason': 'key_capacity' } });
    if (this.arriving.size >= this.limits.maxInFlight) {
      throw ApiError.of(family, 'capacity', 'service_capacity', { retryAfterSeconds: 1, headers: { 'X-Speech-Capacity-Reason': 'service_capacity' } });
    }
    // Counted from the socket, not from the body stream: a 'data' listener would start the
    // stream flowing before the body parser is attached, and its bytes would be lost.
    const arrival: Arrival = { request, reply, keyId: principal.keyId, family, startedMs: this.nowMs(), bytesReadAtStart: request.raw.socket.bytesRead };
    this.arriving.add(arrival);
    this.byKey.set(principal.keyId, ofKey + 1);
    const done = (): void => this.forget(arrival);
    request.raw.once('end', done);
    request.raw.once('close', done);
    this.sweeper ??= setInterval(() => this.sweep(), SWEEP_MS).unref();
  }

  /** Stops the sweeper (the app is closing). */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private forget(arrival: Arrival): void {
    if (!this.arriving.delete(arrival)) return;
    const left = (this.byKey.get(arrival.keyId) ?? 1) - 1;
    if (left === 0) this.byKey.delete(arrival.keyId);
    else this.byKey.set(arrival.keyId, left);
    if (this.arriving.size === 0) this.close();
  }

  private sweep(): void {
    const now = this.nowMs();
    for (const arrival of this.arriving) {
      const raw = arrival.request.raw;
      // The parser has the whole message; the application may still be reading it.
      if (raw.complete) {
        this.forget(arrival);
        continue;
      }
      const elapsedMs = now - arrival.startedMs;
      if (elapsedMs <= this.pace.graceMs) continue;
      const received = raw.socket.bytesRead - arrival.bytesReadAtStart;
      const required = ((elapsedMs - this.pace.graceMs) / 1000) * this.pace.minBytesPerSecond;
      if (received >= required) continue;
      this.forget(arrival);
      this.timeOut(arrival, elapsedMs, received);
    }
  }

  /**
   * Fails the body: the error travels the body stream to whoever reads it (fastify's parser,
   * the multipart reader), so the request is answered through the usual error handler; the
   * connection closes after the answer, the rest of the body unread.
   */
  private timeOut(arrival: Arrival, elapsedMs: number, received: number): void {
    const { request, reply, family } = arrival;
    request.log.info({ received, elapsedMs }, 'request body too slow');
    const socket = request.raw.socket;
    const drop = (): void => void socket.destroy();
    reply.header('Connection', 'close');
    reply.raw.once('finish', drop);
    // Whoever reads the body answers at once; should nobody be reading it, nobody answers.
    setTimeout(drop, ANSWER_GRACE_MS).unref();
    request.raw.emit(
      'error',
      ApiError.of(
        family,
        'timeout',
        `the request body arrived too slowly: ${received} bytes in ${Math.round(elapsedMs / 1000)} s; after ${this.pace.graceMs / 1000} s a body must average ${this.pace.minBytesPerSecond} bytes per second`,
      ),
    );
  }
}
