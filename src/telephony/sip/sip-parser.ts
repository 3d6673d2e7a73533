/**
 * A tolerant, bounded SIP parser (RFC 3261 section 7, robustness per RFC 4475's spirit):
 * LF-only line ends, folded headers, compact forms and odd spacing are accepted; anything
 * that could make the stack misroute a response or hold memory is refused with a reason.
 * It never throws: the sockets it serves receive whatever the internet sends.
 */
import { SipHeaders, type SipMessage } from './sip-message.js';

/** Largest message (headers and body) the gateway reads. */
export const MAX_MESSAGE_BYTES = 64 * 1024;
/** Most header lines in one message. */
export const MAX_HEADERS = 256;

const TOKEN = /^[A-Za-z0-9\-.!%*_+`'~]+$/;
const REQUEST_LINE = /^([A-Za-z0-9\-.!%*_+`'~]+)[ \t]+(\S+)[ \t]+SIP\/(\d+\.\d+)[ \t]*$/;
const STATUS_LINE = /^SIP\/(\d+\.\d+)[ \t]+(\d{3})(?:[ \t]+(.*))?$/;
const CSEQ = /^(\d{1,10})[ \t]+([A-Za-z0-9\-.!%*_+`'~]+)$/;

/** Why a message was refused, with what could be read (enough to answer a request with 400). */
export interface ParseFailure {
  readonly ok: false;
  readonly reason: string;
  /** 400, or 505 for another SIP version, 413 for a body over the limit. */
  readonly status: 400 | 413 | 505;
  /** The request's method and headers when the start line and headers could be read. */
  readonly request?: { readonly method: string; readonly headers: SipHeaders };
}

export type ParseResult = { readonly ok: true; readonly message: SipMessage } | ParseFailure;

/** Where the header block ends: the index after the blank line, and the blank line's length. */
export function findHeaderEnd(data: Buffer, from = 0): { bodyStart: number } | null {
  for (let i = from; i < data.length - 1; i++) {
    if (data[i] !== 0x0a) continue;
    if (data[i + 1] === 0x0a) return { bodyStart: i + 2 };
    if (data[i + 1] === 0x0d && data[i + 2] === 0x0a) return { bodyStart: i + 3 };
  }
  return null;
}

/** Leading CRLFs (keep-alives between messages, RFC 5626) to skip. */
export function skipKeepAlive(data: Buffer, from = 0): number {
  let at = from;
  while (at < data.length && (data[at] === 0x0d || data[at] === 0x0a)) at++;
  return at;
}

/**
 * Parses one message. A missing Content-Length means the rest of the data is the body and a
 * shorter one truncates it (section 18.3, datagrams); on streams the framer has already cut
 * the message at its Content-Length.
 */
export function parseSipMessage(data: Buffer): ParseResult {
  if (data.length > MAX_MESSAGE_BYTES) return { ok: false, status: 413, reason: `message of ${data.length} bytes is over the ${MAX_MESSAGE_BYTES}-byte limit` };
  const start = skipKeepAlive(data);
  const end = findHeaderEnd(data, start);
  const headText = data.subarray(start, end ? end.bodyStart : data.length).toString('latin1');
  const rawLines = headText.split(/\r?\n/);
  while (rawLines.length > 0 && rawLines[rawLines.length - 1] === '') rawLines.pop();
  if (rawLines.length === 0) return { ok: false, status: 400, reason: 'empty message' };
  // Unfold continuation lines (section 7.3.1).
  const lines: string[] = [];
  for (const line of rawLines) {
    if ((line.startsWith(' ') || line.startsWith('\t')) && lines.length > 1) lines[lines.length - 1] += ` ${line.trim()}`;
    else lines.push(line);
  }
  if (lines.length - 1 > MAX_HEADERS) return { ok: false, status: 400, reason: `more than ${MAX_HEADERS} header lines` };
  const headers = new SipHeaders();
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon).trim() : '';
    if (!TOKEN.test(name)) return { ok: false, status: 400, reason: `malformed header line ${JSON.stringify(line.slice(0, 60))}` };
    // Header values are UTF-8 (display names, reason phrases); the head was read as latin1 to keep byte offsets.
    headers.append(name, Buffer.from(line.slice(colon + 1).trim(), 'latin1').toString('utf8'));
  }
  const startLine = lines[0]!;
  const body = end ? data.subarray(end.bodyStart) : Buffer.alloc(0);
  const request = REQUEST_LINE.exec(startLine);
  if (request) {
    const [, method, uri, version] = request as unknown as [string, string, string, string];
    const failure = (reason: string, status: 400 | 413 | 505 = 400): ParseFailure => ({
      ok: false,
      status,
      reason,
      request: { method: method.toUpperCase(), headers },
    });
    if (version !== '2.0') return failure(`SIP version ${version} is not supported`, 505);
    if (!end) return failure('the header block does not end with a blank line');
    const problem = checkCoreHeaders(headers, method.toUpperCase());
    if (problem) return failure(problem);
    const sized = sizeBody(headers, body);
    if (typeof sized === 'string') return failure(sized);
    return { ok: true, message: { kind: 'request', method: method.toUpperCase(), uri, headers, body: sized } };
  }
  const status = STATUS_LINE.exec(startLine);
  if (status) {
    const [, version, code, reason] = status as unknown as [string, string, string, string | undefined];
    if (version !== '2.0' || !end) return { ok: false, status: 400, reason: 'malformed response' };
    const statusCode = Number(code);
    if (statusCode < 100 || statusCode > 699) return { ok: false, status: 400, reason: `status ${code} is out of range` };
    const problem = checkCoreHeaders(headers, null);
    if (problem) return { ok: false, status: 400, reason: problem };
    const sized = sizeBody(headers, body);
    if (typeof sized === 'string') return { ok: false, status: 400, reason: sized };
    return { ok: true, message: { kind: 'response', status: statusCode, reason: reason ?? '', headers, body: sized } };
  }
  return { ok: false, status: 400, reason: `not a SIP start line: ${JSON.stringify(startLine.slice(0, 60))}` };
}

/** The headers every request and response needs to be matched to a transaction and dialog. */
function checkCoreHeaders(headers: SipHeaders, method: string | null): string | null {
  for (const name of ['Via', 'From', 'To', 'Call-ID', 'CSeq']) {
    if (!headers.has(name)) return `the ${name} header is missing`;
  }
  const cseq = CSEQ.exec(headers.get('CSeq')!.trim());
  if (!cseq) return `malformed CSeq ${JSON.stringify(headers.get('CSeq'))}`;
  if (Number(cseq[1]) > 2 ** 31 - 1) return 'CSeq number is over 2^31';
  if (method !== null && cseq[2]!.toUpperCase() !== method) return `CSeq method ${cseq[2]} does not match the request method ${method}`;
  const callId = headers.get('Call-ID')!;
  if (callId === '' || /\s/.test(callId)) return 'malformed Call-ID';
  return null;
}

/** The body cut to Content-Length, or why it cannot be. */
function sizeBody(headers: SipHeaders, body: Buffer): Buffer | string {
  const values = headers.getAll('Content-Length');
  if (values.length === 0) return body;
  if (values.length > 1 && new Set(values.map((value) => value.trim())).size > 1) return 'conflicting Content-Length headers';
  const text = values[0]!.trim();
  if (!/^\d{1,7}$/.test(text)) return `malformed Content-Length ${JSON.stringify(text.slice(0, 20))}`;
  const length = Number(text);
  if (length > body.length) return `Content-Length ${length} is more than the ${body.length} body bytes received`;
  return body.subarray(0, length);
}

/** The CSeq of a parsed message (the parser has checked its form). */
export function cseqOf(message: SipMessage): { readonly seq: number; readonly method: string } {
  const [seq, method] = message.headers
    .get('CSeq')!
    .trim()
    .split(/[ \t]+/) as [string, string];
  return { seq: Number(seq), method: method.toUpperCase() };
}
