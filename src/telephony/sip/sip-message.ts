/**
 * SIP messages as the stack handles them (RFC 3261 section 7): a start line, headers in the
 * order they arrived (names kept as written, looked up case-insensitively and by compact
 * form), and a body of bytes.
 */

/** Compact header forms (RFC 3261 section 7.3.3 and the extensions that register one). */
const COMPACT_FORMS: Readonly<Record<string, string>> = {
  v: 'via',
  f: 'from',
  t: 'to',
  i: 'call-id',
  m: 'contact',
  l: 'content-length',
  c: 'content-type',
  e: 'content-encoding',
  k: 'supported',
  s: 'subject',
  o: 'event',
  r: 'refer-to',
  u: 'allow-events',
};

/** The lookup key of a header name: lower case, compact forms expanded. */
export function headerKey(name: string): string {
  const lower = name.toLowerCase();
  return COMPACT_FORMS[lower] ?? lower;
}

/** Headers whose values may be combined in one line, comma-separated (section 7.3.1). */
const LIST_HEADERS = new Set(['via', 'contact', 'route', 'record-route', 'allow', 'supported', 'require', 'accept']);

/** Splits a header value at commas outside quotes and angle brackets. */
export function splitList(value: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let quoted = false;
  let start = 0;
  for (let i = 0; i < value.length; i++) {
    const char = value[i];
    if (char === '\\' && quoted) i++;
    else if (char === '"') quoted = !quoted;
    else if (!quoted && char === '<') depth++;
    else if (!quoted && char === '>') depth = Math.max(0, depth - 1);
    else if (!quoted && depth === 0 && char === ',') {
      parts.push(value.slice(start, i).trim());
      start = i + 1;
    }
  }
  parts.push(value.slice(start).trim());
  return parts.filter((part) => part !== '');
}

/** An ordered, case-insensitive header list. */
export class SipHeaders {
  private readonly entries: Array<{ name: string; value: string }> = [];

  constructor(entries: Iterable<readonly [string, string]> = []) {
    for (const [name, value] of entries) this.append(name, value);
  }

  append(name: string, value: string): this {
    this.entries.push({ name, value });
    return this;
  }

  /** Replaces every header of this name with one value (at the first one's place). */
  set(name: string, value: string): this {
    const key = headerKey(name);
    const index = this.entries.findIndex((entry) => headerKey(entry.name) === key);
    this.delete(name);
    if (index < 0) this.entries.push({ name, value });
    else this.entries.splice(index, 0, { name, value });
    return this;
  }

  delete(name: string): this {
    const key = headerKey(name);
    for (let i = this.entries.length - 1; i >= 0; i--) if (headerKey(this.entries[i]!.name) === key) this.entries.splice(i, 1);
    return this;
  }

  has(name: string): boolean {
    const key = headerKey(name);
    return this.entries.some((entry) => headerKey(entry.name) === key);
  }

  /** The first value of a header, or undefined. For list headers, the first list element. */
  get(name: string): string | undefined {
    return this.getAll(name)[0];
  }

  /** Every value of a header in order; list headers are split at their commas. */
  getAll(name: string): string[] {
    const key = headerKey(name);
    const values: string[] = [];
    for (const entry of this.entries) {
      if (headerKey(entry.name) !== key) continue;
      if (LIST_HEADERS.has(key)) values.push(...splitList(entry.value));
      else values.push(entry.value);
    }
    return values;
  }

  /** The header lines as they will be written. */
  lines(): ReadonlyArray<{ readonly name: string; readonly value: string }> {
    return this.entries;
  }

  clone(): SipHeaders {
    return new SipHeaders(this.entries.map((entry) => [entry.name, entry.value] as const));
  }
}

/** A SIP request. */
export interface SipRequest {
  readonly kind: 'request';
  readonly method: string;
  readonly uri: string;
  readonly headers: SipHeaders;
  readonly body: Buffer;
}

/** A SIP response. */
export interface SipResponse {
  readonly kind: 'response';
  readonly status: number;
  readonly reason: string;
  readonly headers: SipHeaders;
  readonly body: Buffer;
}

export type SipMessage = SipRequest | SipResponse;

/** Standard reason phrases for the responses this gateway sends. */
export const REASON_PHRASES: Readonly<Record<number, string>> = {
  100: 'Trying',
  180: 'Ringing',
  183: 'Session Progress',
  200: 'OK',
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  408: 'Request Timeout',
  413: 'Request Entity Too Large',
  415: 'Unsupported Media Type',
  416: 'Unsupported URI Scheme',
  420: 'Bad Extension',
  481: 'Call/Transaction Does Not Exist',
  482: 'Loop Detected',
  483: 'Too Many Hops',
  486: 'Busy Here',
  487: 'Request Terminated',
  488: 'Not Acceptable Here',
  491: 'Request Pending',
  500: 'Server Internal Error',
  501: 'Not Implemented',
  503: 'Service Unavailable',
  505: 'Version Not Supported',
  603: 'Decline',
};

/** Writes a message to bytes; Content-Length is always set from the body's byte length. */
export function serializeMessage(message: SipMessage): Buffer {
  const start = message.kind === 'request' ? `${message.method} ${message.uri} SIP/2.0` : `SIP/2.0 ${message.status} ${message.reason}`;
  const lines = [start];
  for (const { name, value } of message.headers.lines()) {
    if (headerKey(name) === 'content-length') continue;
    lines.push(`${name}: ${value}`);
  }
  lines.push(`Content-Length: ${message.body.length}`, '', '');
  const head = Buffer.from(lines.join('\r\n'), 'utf8');
  return message.body.length > 0 ? Buffer.concat([head, message.body]) : head;
}
