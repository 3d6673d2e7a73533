/**
 * The parts of drachtio-srf's (5.0.29) requests and responses the adapter uses, typed by what
 * they are at run time (its shipped typings miss some and mistype others), and the two
 * translations between them and ours: header lists and message bodies.
 */
import type { SessionBody } from '../call/call-dialog.js';

/** Headers as drachtio-srf takes them: one value per name. */
export type DrachtioHeaders = Record<string, string>;

/** What `res.send` takes besides the status. */
export interface DrachtioSendOptions {
  readonly headers?: DrachtioHeaders;
  readonly body?: string;
}

/** A request drachtio-srf hands us: the INVITE, or one inside the dialog. */
export interface DrachtioRequest {
  /** The body as text ('' without one). */
  readonly body: string;
  /** `network` for what a caller sent; `application` for what drachtio-server made itself. */
  readonly source: string;
  get(name: string): string | undefined;
}

/** The response object that goes with a request. */
export interface DrachtioResponse {
  send(status: number, options?: DrachtioSendOptions): void;
}

/**
 * Our headers for drachtio-srf. It keeps one value per name, but drachtio-server reads the
 * header block line by line, so a repeated header (two `WWW-Authenticate` challenges) travels
 * as further lines inside the first one's value.
 */
export function drachtioHeaders(headers: Iterable<readonly [string, string]>): DrachtioHeaders {
  const result: DrachtioHeaders = {};
  const names = new Map<string, string>();
  for (const [name, value] of headers) {
    const known = names.get(name.toLowerCase());
    if (known === undefined) {
      names.set(name.toLowerCase(), name);
      result[name] = value;
    } else {
      result[known] += `\r\n${known}: ${value}`;
    }
  }
  return result;
}

/** A request's body with its content type, or null when it has none. */
export function bodyOfRequest(request: DrachtioRequest): SessionBody | null {
  if (!request.body) return null;
  const contentType = (request.get('Content-Type') ?? 'application/octet-stream').split(';')[0]!.trim().toLowerCase();
  return { contentType, body: Buffer.from(request.body, 'utf8') };
}
