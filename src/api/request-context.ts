import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Principal } from '../auth/authenticate.js';
import type { ErrorFamily } from './errors.js';
import type { Admission } from './admission.js';

/** Per-route settings that the shared hooks read. */
export interface RouteSettings {
  /** Error family of the route: its 401/403/429/500 codes. */
  readonly family: ErrorFamily;
  /** Set `false` for routes that need no API key. */
  readonly auth?: boolean;
  /**
   * A WebSocket session route: the key may also come as a subprotocol or query parameter, and
   * admission counts open sessions rather than requests.
   */
  readonly realtime?: boolean;
  /**
   * The handler reads the body itself (a streamed multipart upload) and takes the request's
   * in-flight slot with {@link takeRequestSlot} once it has; otherwise a hook takes it before
   * the handler runs, after the body has been parsed.
   */
  readonly bodyInHandler?: boolean;
  /**
   * An operations endpoint (health, readiness, metrics, drain): answered while the instance
   * drains, and neither API work the drain waits for nor an API request in the metrics.
   */
  readonly operations?: boolean;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The authenticated key; set by the authentication hook on every authenticated route. */
    principal: Principal | null;
    /** Aborted when the client goes away before the response is complete. */
    abortSignal: AbortSignal;
  }
  interface FastifyContextConfig {
    sprachrohr?: RouteSettings;
  }
}

/** Random per process, so ids from several processes behind one balancer never collide. */
const PROCESS_PREFIX = randomBytes(9).toString('base64url');
let requestCounter = 0;

/** A new request id: `req_`, the process's random prefix and a counter (no syscall per request). */
export function newRequestId(): string {
  requestCounter = (requestCounter + 1) % Number.MAX_SAFE_INTEGER;
  return `req_${PROCESS_PREFIX}${requestCounter.toString(36)}`;
}

/** The error family of a request: the route's, or guessed from the path for unknown routes. */
export function familyOf(request: FastifyRequest): ErrorFamily {
  const configured = request.routeOptions.config?.sprachrohr?.family;
  if (configured) return configured;
  return /^\/v1\/stt(\/|$|\?)/.test(request.url) ? 'stt' : 'tts';
}

/**
 * Headers every response carries (spec 5.7): request id and environment. Before a key is
 * known the environment is the one the presented key's prefix claims, or `none`.
 */
export function setSpeechHeaders(request: FastifyRequest, reply: FastifyReply): void {
  reply.header('X-Speech-Request-Id', request.id);
  const environment = request.principal?.environment ?? claimedEnvironment(request.headers['x-api-key']);
  reply.header('X-Speech-Environment', environment);
  if (request.principal?.keyStatus) reply.header('X-Speech-Key-Status', request.principal.keyStatus);
}

function claimedEnvironment(key: string | string[] | undefined): string {
  if (typeof key !== 'string' || !key.startsWith('sv_')) return 'none';
  return key.startsWith('sv_test_') ? 'sandbox' : 'live';
}

/**
 * Takes the request's in-flight slot (its body has arrived); the slot comes back when the
 * response ends or the connection closes.
 * @throws ApiError `*.capacity` over the key's or the process's ceiling.
 */
export async function takeRequestSlot(request: FastifyRequest, reply: FastifyReply, admission: Admission): Promise<void> {
  // Listening first: a connection that closes while the slot is being taken gives it back at once.
  let release: (() => void) | null = null;
  let closed = false;
  reply.raw.once('close', () => {
    closed = true;
    release?.();
  });
  // One that closed before (while its body was read) has no close event left to come. (Not the
  // request stream's own `destroyed`: that is true once its body has been read.)
  if (reply.raw.destroyed || request.raw.socket?.destroyed === true) closed = true;
  release = await admission.takeSlot(request.principal!, familyOf(request));
  if (closed) release();
}
