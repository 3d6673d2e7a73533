import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, type ErrorCode, type ErrorFamily } from './errors.js';
import { familyOf, setSpeechHeaders } from './request-context.js';
import type { FieldErrorCodes } from './schemas.js';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How schema failures of this route's body map to error codes. */
    fieldErrors?: FieldErrorCodes;
  }
}

interface ValidationIssue {
  keyword: string;
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
  /** With Ajv's `verbose`: the failing value. */
  data?: unknown;
}

function describeValue(value: unknown): string {
  const text = JSON.stringify(value);
  return text === undefined ? String(value) : text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** Turns the first schema failure into the error code and detail a client can act on. */
function fromValidation(issues: ValidationIssue[], family: ErrorFamily, table: FieldErrorCodes | undefined): ApiError {
  const issue = issues[0]!;
  const field = issue.instancePath;
  const name = field.replace(/^\//, '').replace(/\//g, '.');
  let detail: string;
  if (issue.keyword === 'required') {
    detail = `${String(issue.params['missingProperty'])} is required`;
  } else if (issue.keyword === 'additionalProperties') {
    detail = `unknown field "${String(issue.params['additionalProperty'])}"${name ? ` in ${name}` : ''}`;
  } else if (field === '' && issue.keyword === 'type') {
    detail = 'the body must be a JSON object';
  } else if (issue.keyword === 'enum' && Array.isArray(issue.params['allowedValues'])) {
    detail = `${name} must be one of ${(issue.params['allowedValues'] as unknown[]).join(', ')}; got ${describeValue(issue.data)}`;
  } else {
    detail = `${name} ${issue.message ?? 'is invalid'}${'data' in issue ? `; got ${describeValue(issue.data)}` : ''}`;
  }
  // A list's items share one entry: `/phrases/12` is looked up as `/phrases/*` too.
  const codes = table?.[field] ?? table?.[field.replace(/\/\d+(?=\/|$)/g, '/*')];
  // A missing field is looked up by name first (`required:text`), then as any missing field.
  const byName = issue.keyword === 'required' ? codes?.[`required:${String(issue.params['missingProperty'])}`] : undefined;
  const code: ErrorCode = byName ?? codes?.[issue.keyword] ?? codes?.['*'] ?? (`${family}.invalid_request` as ErrorCode);
  return new ApiError(code, detail);
}

/** Maps framework errors (bad JSON, wrong content type, oversize body…) to the envelope. */
function fromFramework(error: FastifyError, family: ErrorFamily): ApiError {
  switch (error.code) {
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return ApiError.of(family, 'invalid_request', `the body is not valid JSON: ${error.message}`);
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_INVALID_MULTIPART_CONTENT_TYPE':
      return ApiError.of(
        family,
        'invalid_request',
        family === 'stt' ? 'send the audio as multipart/form-data with a part named audio' : 'send the request body as application/json',
      );
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
    case 'FST_REQ_FILE_TOO_LARGE':
      return family === 'stt'
        ? new ApiError('stt.audio_too_large', 'the upload is larger than 25 MB (26214400 bytes)')
        : new ApiError('tts.text_too_long', 'the request body is larger than the limit; text is limited to 8000 characters');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return ApiError.of(family, 'invalid_request', 'the Content-Length header does not match the body');
    case 'FST_FILES_LIMIT':
    case 'FST_PARTS_LIMIT':
    case 'FST_FIELDS_LIMIT':
      return ApiError.of(family, 'invalid_request', 'send one audio file and at most the lang and vocabulary fields');
    default:
      break;
  }
  if (typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500) {
    return ApiError.of(family, 'invalid_request', error.message);
  }
  return ApiError.of(family, 'internal_error', null, { cause: error });
}

/** How long a refused request's unread body may go on arriving after the answer. */
const UNREAD_BODY_LINGER_MS = 2000;

/** The code each refused or failed request was answered with, for the metrics of its answer. */
const answeredCodes = new WeakMap<FastifyRequest, ErrorCode>();

/** The error code a request was answered with, if it was answered with the envelope. */
export function answeredErrorCode(request: FastifyRequest): ErrorCode | undefined {
  return answeredCodes.get(request);
}

/** Sends an {@link ApiError} as the spec's envelope, with its retry headers. */
export function sendApiError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  answeredCodes.set(request, error.code);
  setSpeechHeaders(request, reply);
  // A refusal before the body was read: Node discards what the client still sends, but a slow
  // sender would hold the connection for as long as it trickles. It gets a moment after the
  // answer (closing at once, with unread bytes, resets the connection, and a client still
  // writing then loses the answer), and the connection is dropped if the body has not ended.
  if (request.raw.complete === false) {
    reply.raw.once('finish', () => setTimeout(() => request.raw.complete || request.raw.socket?.destroy(), UNREAD_BODY_LINGER_MS).unref());
  }
  if (error.retryAfterSeconds !== undefined) reply.header('Retry-After', String(Math.max(1, Math.ceil(error.retryAfterSeconds))));
  for (const [name, value] of Object.entries(error.headers)) reply.header(name, value);
  return reply.status(error.httpStatus).type('application/json; charset=utf-8').send(error.toBody(request.id));
}

/**
 * Installs the error and not-found handlers: every failure leaves as the spec's envelope,
 * never a stack trace, an HTML page or the framework's own error shape.
 */
export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((raw: FastifyError | ApiError, request, reply) => {
    const family = familyOf(request);
    let error: ApiError;
    if (raw instanceof ApiError) error = raw;
    else if (raw.validation) error = fromValidation(raw.validation as ValidationIssue[], family, request.routeOptions.config?.fieldErrors);
    else error = fromFramework(raw, family);
    if (error.httpStatus >= 500) request.log.error({ err: raw, code: error.code }, 'request failed');
    else request.log.info({ code: error.code, detail: error.detail }, 'request refused');
    return sendApiError(request, reply, error);
  });
  app.setNotFoundHandler((request, reply) => {
    const family = familyOf(request);
    const path = request.url.split('?')[0];
    return sendApiError(
      request,
      reply,
      ApiError.of(family, 'not_found', `no endpoint ${request.method} ${path}; the API is described at GET /v1/openapi.json`),
    );
  });
}

/** The family of a request known only by its raw request line (before fastify has a request). */
function familyOfPath(url: string | undefined): ErrorFamily {
  return url !== undefined && /^\/v1\/stt(\/|$|\?)/.test(url) ? 'stt' : 'tts';
}

/**
 * Answers what Node's HTTP parser refuses before a request exists (fastify's
 * `clientErrorHandler`): headers too large, a malformed request line or header, a
 * Content-Length that is not a number, a request that took too long. The envelope, then the
 * connection closes; nothing else is told about the parser's state.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  // No request line was understood, so its path is unknown: the default family answers.
  const family: ErrorFamily = 'tts';
  let apiError: ApiError;
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT' || error.code === 'ERR_HTTP_HEADERS_TIMEOUT') {
    apiError = ApiError.of(family, 'timeout', 'the request did not arrive in time; the connection is closed');
  } else if (error.code === 'HPE_HEADER_OVERFLOW') {
    apiError = ApiError.of(family, 'invalid_request', 'the request headers are too large (16 KB at most)');
  } else if (error.code === 'HPE_INVALID_CONTENT_LENGTH' || error.code === 'HPE_UNEXPECTED_CONTENT_LENGTH') {
    apiError = ApiError.of(family, 'invalid_request', 'the Content-Length header is not valid');
  } else if (error.code === 'HPE_INVALID_EOF_STATE') {
    apiError = ApiError.of(family, 'invalid_request', 'the connection ended before the whole request (its Content-Length) arrived');
  } else {
    apiError = ApiError.of(family, 'invalid_request', 'the request is not valid HTTP/1.1');
  }
  if (socket.writable) {
    const body = JSON.stringify(apiError.toBody(null));
    socket.write(
      `HTTP/1.1 ${apiError.httpStatus} ${STATUS_CODES[apiError.httpStatus] ?? ''}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

/**
 * Answers what fastify's router refuses before a route runs (`frameworkErrors`): a URL whose
 * percent-encoding cannot be decoded, a parameter that is too long.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const family = familyOfPath(request.raw.url);
  const detail = error.code === 'FST_ERR_BAD_URL' ? 'the URL is not valid: check its percent-encoding' : 'the URL is not valid';
  void sendApiError(request, reply, ApiError.of(family, 'invalid_request', detail));
}
