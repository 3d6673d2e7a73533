/**
 * The one error type of the service and the one table of error codes (spec 7).
 *
 * Every HTTP error body, every WebSocket error frame and the `errors` list of
 * `GET /v1/capabilities` are produced from {@link ERROR_TABLE}; nothing else
 * invents a code, a status or a message.
 */

/** Route families: synthesis (`tts`) or recognition (`stt`). */
export type ErrorFamily = 'tts' | 'stt';

/** One row of the error table. */
export interface ErrorDefinition {
  readonly httpStatus: number;
  readonly message: string;
  /** Whether a client may retry the identical request (spec 7, rule 7). */
  readonly retryable: boolean;
}

const shared = {
  invalid_request: { httpStatus: 400, message: 'The request is invalid.', retryable: false },
  unauthenticated: { httpStatus: 401, message: 'A valid API key is required in the X-API-Key header.', retryable: false },
  forbidden: { httpStatus: 403, message: 'This API key may not perform this action.', retryable: false },
  not_found: { httpStatus: 404, message: 'No such endpoint.', retryable: false },
  rate_limited: { httpStatus: 429, message: 'Too many requests for this API key; retry after the time in Retry-After.', retryable: true },
  capacity: { httpStatus: 429, message: 'Capacity is exhausted; retry after the time in Retry-After.', retryable: true },
  plan_limit_reached: { httpStatus: 429, message: 'The concurrency limit of your plan is reached.', retryable: false },
  entitlement_exhausted: { httpStatus: 429, message: 'Free minutes or prepaid credit are used up.', retryable: false },
  timeout: { httpStatus: 504, message: 'The request took too long to complete.', retryable: true },
  internal_error: { httpStatus: 500, message: 'An internal error occurred; quote the request id to support.', retryable: true },
} as const satisfies Record<string, ErrorDefinition>;

/**
 * All error codes with their HTTP status, fixed message and retry rule.
 *
 * Statuses the specification leaves open, decided here:
 * - `stt.invalid_audio` 400: the container is recognised but its content cannot be decoded
 *   (truncated, corrupt, empty); the client must fix the file.
 * - `stt.upstream_unavailable` 503: a recognition engine is down; retry with backoff, like
 *   `*.unavailable`.
 * - `tts.text_required` 400: a missing or empty `text` is a parameter error, not a size error.
 * - `tts.style_too_long` 400: `style` is a parameter bound; 413 is kept for the payload limits.
 *
 * - `stt.call_unavailable` 409 (added): `POST /v1/calls` while calls are off or the trunk named
 *   is down (its registration failed, or it does not answer OPTIONS); the detail says which.
 *
 * Added to the specification's list: `tts.not_found` / `stt.not_found` (404) for a path or
 * method that is no endpoint, so that even those answers keep the envelope; `stt.unavailable`
 * (503), the recognition family's `*.unavailable` (spec 7), for an instance that is draining.
 */
export const ERROR_TABLE = {
  'tts.invalid_request': shared.invalid_request,
  'tts.text_required': { httpStatus: 400, message: 'The text field is required and must not be empty.', retryable: false },
  'tts.text_too_long': { httpStatus: 413, message: 'The text is longer than the limit.', retryable: false },
  'tts.unknown_voice': { httpStatus: 400, message: 'The voice is not known.', retryable: false },
  'tts.unknown_language': { httpStatus: 400, message: 'The language or dialect is not supported.', retryable: false },
  'tts.unsupported_format': { httpStatus: 400, message: 'The audio format or sample rate is not supported.', retryable: false },
  'tts.invalid_speed': { httpStatus: 400, message: 'The speed must be between 0.5 and 2.', retryable: false },
  'tts.style_too_long': { httpStatus: 400, message: 'The style is longer than the limit.', retryable: false },
  'tts.invalid_ssml': { httpStatus: 400, message: 'The markup document is invalid.', retryable: false },
  'tts.encode_failed': { httpStatus: 500, message: 'The audio could not be encoded.', retryable: true },
  'tts.unauthenticated': shared.unauthenticated,
  'tts.forbidden': shared.forbidden,
  'tts.not_found': shared.not_found,
  'tts.rate_limited': shared.rate_limited,
  'tts.capacity': shared.capacity,
  'tts.plan_limit_reached': shared.plan_limit_reached,
  'tts.entitlement_exhausted': shared.entitlement_exhausted,
  'tts.unavailable': { httpStatus: 503, message: 'Speech synthesis is temporarily unavailable.', retryable: true },
  'tts.timeout': shared.timeout,
  'tts.internal_error': shared.internal_error,
  'stt.invalid_request': shared.invalid_request,
  'stt.invalid_audio': { httpStatus: 400, message: 'The audio could not be decoded.', retryable: false },
  'stt.unsupported_format': { httpStatus: 415, message: 'The audio format is not supported; send WAV, Ogg Opus or FLAC.', retryable: false },
  'stt.audio_too_large': { httpStatus: 413, message: 'The audio is larger or longer than the limit.', retryable: false },
  'stt.unauthenticated': shared.unauthenticated,
  'stt.forbidden': shared.forbidden,
  'stt.not_found': shared.not_found,
  'stt.rate_limited': shared.rate_limited,
  'stt.capacity': shared.capacity,
  'stt.plan_limit_reached': shared.plan_limit_reached,
  'stt.entitlement_exhausted': shared.entitlement_exhausted,
  'stt.unavailable': { httpStatus: 503, message: 'Speech recognition is temporarily unavailable on this instance.', retryable: true },
  'stt.upstream_unavailable': { httpStatus: 503, message: 'Speech recognition is temporarily unavailable.', retryable: true },
  'stt.call_unavailable': { httpStatus: 409, message: 'The call cannot be placed now: calls are off or the trunk is down.', retryable: true },
  'stt.timeout': shared.timeout,
  'stt.internal_error': shared.internal_error,
} as const satisfies Record<string, ErrorDefinition>;

/** Every error code the service can answer with. */
export type ErrorCode = keyof typeof ERROR_TABLE;

/** Codes that exist in both families, written without the family prefix. */
export type FamilyErrorSuffix = {
  [C in ErrorCode]: C extends `tts.${infer S}` ? (`stt.${S}` extends ErrorCode ? S : never) : never;
}[ErrorCode];

/** Longest `detail` the specification allows (spec 8). */
export const MAX_DETAIL_LENGTH = 400;

/** Options that travel with an {@link ApiError}. */
export interface ApiErrorOptions {
  /** Seconds a client should wait; sent as `Retry-After` on 429 and 503. */
  readonly retryAfterSeconds?: number;
  /** Extra response headers (for example `X-Speech-Capacity-Reason`). */
  readonly headers?: Readonly<Record<string, string>>;
  readonly cause?: unknown;
}

/** The single error class: a code from {@link ERROR_TABLE} plus an optional explanation. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly httpStatus: number;
  readonly retryable: boolean;
  readonly detail: string | null;
  readonly retryAfterSeconds: number | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(code: ErrorCode, detail?: string | null, options: ApiErrorOptions = {}) {
    const definition = ERROR_TABLE[code];
    super(definition.message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ApiError';
    this.code = code;
    this.httpStatus = definition.httpStatus;
    this.retryable = definition.retryable;
    this.detail = detail == null ? null : truncateDetail(detail);
    this.retryAfterSeconds = options.retryAfterSeconds;
    this.headers = options.headers ?? {};
  }

  /** Builds the error of a family (`tts.capacity` or `stt.capacity`, …). */
  static of(family: ErrorFamily, suffix: FamilyErrorSuffix, detail?: string | null, options?: ApiErrorOptions): ApiError {
    return new ApiError(`${family}.${suffix}` as ErrorCode, detail, options);
  }

  /** The body of an HTTP error response (spec 7). */
  toBody(requestId: string | null): ErrorBody {
    return { error: { code: this.code, message: this.message, request_id: requestId, detail: this.detail } };
  }
}

/** Shape of every HTTP error body. */
export interface ErrorBody {
  error: { code: ErrorCode; message: string; request_id: string | null; detail: string | null };
}

function truncateDetail(detail: string): string {
  return detail.length <= MAX_DETAIL_LENGTH ? detail : `${detail.slice(0, MAX_DETAIL_LENGTH - 1)}…`;
}

/** The `errors` list of `GET /v1/capabilities`. */
export function errorCatalog(): Array<{ code: ErrorCode; http_status: number; message: string; retryable: boolean }> {
  return (Object.keys(ERROR_TABLE) as ErrorCode[]).map((code) => ({
    code,
    http_status: ERROR_TABLE[code].httpStatus,
    message: ERROR_TABLE[code].message,
    retryable: ERROR_TABLE[code].retryable,
  }));
}
