/**
 * The structured headers the stack reads: Via (where responses go), name-addr headers (From,
 * To, Contact, Route: a URI, a display name, parameters such as `tag`) and SIP URIs; and the
 * random identifiers it makes (tags, branches, Call-IDs).
 */
import { randomBytes } from 'node:crypto';

/** The magic cookie that marks an RFC 3261 branch. */
export const BRANCH_COOKIE = 'z9hG4bK';

/** A parsed Via header value. */
export interface Via {
  /** `UDP`, `TCP`, `TLS`, … (upper case). */
  readonly transport: string;
  readonly host: string;
  /** Port in sent-by, when written. */
  readonly port: number | null;
  readonly params: ReadonlyMap<string, string | null>;
  readonly branch: string | null;
}

/** Parameters `;a=b;c` into a map (names lower case, values unquoted). */
export function parseParams(text: string): Map<string, string | null> {
  const params = new Map<string, string | null>();
  for (const part of text.split(';')) {
    const trimmed = part.trim();
    if (trimmed === '') continue;
    const equals = trimmed.indexOf('=');
    if (equals < 0) params.set(trimmed.toLowerCase(), null);
    else
      params.set(
        trimmed.slice(0, equals).trim().toLowerCase(),
        trimmed
          .slice(equals + 1)
          .trim()
          .replace(/^"(.*)"$/, '$1'),
      );
  }
  return params;
}

const VIA = /^SIP[ \t]*\/[ \t]*2\.0[ \t]*\/[ \t]*([A-Za-z]+)[ \t]+(\[[0-9A-Fa-f:.]+\]|[^\s;:]+)(?:[ \t]*:[ \t]*(\d{1,5}))?[ \t]*(;.*)?$/;

/** Parses one Via value; null when it is malformed. */
export function parseVia(value: string): Via | null {
  const match = VIA.exec(value.trim());
  if (!match) return null;
  const params = parseParams(match[4] ?? '');
  const port = match[3] === undefined ? null : Number(match[3]);
  if (port !== null && (port < 1 || port > 65535)) return null;
  return { transport: match[1]!.toUpperCase(), host: match[2]!, port, params, branch: params.get('branch') ?? null };
}

/** A name-addr or addr-spec header value: `"Anna" <sip:anna@host>;tag=1`. */
export interface NameAddress {
  readonly displayName: string | null;
  readonly uri: string;
  /** Header parameters (after the URI), such as `tag` and `expires`. */
  readonly params: ReadonlyMap<string, string | null>;
}

/** Parses a name-addr or addr-spec; null when it is malformed. */
export function parseNameAddress(value: string): NameAddress | null {
  const text = value.trim();
  const open = text.indexOf('<');
  if (open >= 0) {
    const close = text.indexOf('>', open);
    if (close < 0) return null;
    const display = text
      .slice(0, open)
      .trim()
      .replace(/^"(.*)"$/, '$1');
    return { displayName: display === '' ? null : display, uri: text.slice(open + 1, close).trim(), params: parseParams(text.slice(close + 1)) };
  }
  // addr-spec: parameters after the URI belong to the header (section 20.10).
  const semicolon = text.indexOf(';');
  const uri = semicolon < 0 ? text : text.slice(0, semicolon);
  if (uri === '' || /\s/.test(uri)) return null;
  return { displayName: null, uri, params: parseParams(semicolon < 0 ? '' : text.slice(semicolon)) };
}

/** A SIP or SIPS URI. */
export interface SipUri {
  readonly scheme: 'sip' | 'sips';
  readonly user: string | null;
  readonly host: string;
  readonly port: number | null;
  readonly params: ReadonlyMap<string, string | null>;
}

const SIP_URI = /^(sips?):(?:([^@]*)@)?(\[[0-9A-Fa-f:.]+\]|[^;:?]+)(?::(\d{1,5}))?((?:;[^?]*)?)(?:\?.*)?$/i;

/** Parses a SIP URI; null for another scheme or a malformed one. */
export function parseSipUri(uri: string): SipUri | null {
  const match = SIP_URI.exec(uri.trim());
  if (!match) return null;
  const userPart = match[2] === undefined ? null : match[2].split(':')[0]!;
  const port = match[4] === undefined ? null : Number(match[4]);
  if (port !== null && (port < 1 || port > 65535)) return null;
  return {
    scheme: match[1]!.toLowerCase() as 'sip' | 'sips',
    user: userPart === null ? null : decodeUser(userPart),
    host: match[3]!.toLowerCase(),
    port,
    params: parseParams(match[5] ?? ''),
  };
}

function decodeUser(user: string): string {
  try {
    return decodeURIComponent(user);
  } catch {
    return user;
  }
}

/** A fresh tag for From/To (section 19.3: at least 32 bits of randomness). */
export function newTag(): string {
  return randomBytes(8).toString('hex');
}

/** A fresh branch for a request we send (section 8.1.1.7). */
export function newBranch(): string {
  return `${BRANCH_COOKIE}${randomBytes(10).toString('hex')}`;
}

/** A fresh Call-ID. */
export function newCallId(host: string): string {
  return `${randomBytes(12).toString('hex')}@${host}`;
}

/** Adds a parameter to a header value (`;name=value`). */
export function withParam(value: string, name: string, paramValue: string): string {
  return `${value};${name}=${paramValue}`;
}

/** The host as written in SIP (IPv6 in brackets). */
export function sipHost(address: string): string {
  return address.includes(':') && !address.startsWith('[') ? `[${address}]` : address;
}

/** Longest reason text put in a Reason header; the rest is cut (it is for logs, not for people). */
const REASON_TEXT_MAX = 120;

/**
 * An RFC 3326 Reason header value for a BYE of ours: `Q.850;cause=16;text="…"` (16 is Normal
 * call clearing). The text loses control characters (no header injection), is cut to
 * {@link REASON_TEXT_MAX} characters and has its backslashes and quotes escaped.
 */
export function q850Reason(text: string): string {
  const clean = text
    .replace(/[\u0000-\u001f\u007f]+/g, ' ')
    .trim()
    .slice(0, REASON_TEXT_MAX);
  return `Q.850;cause=16;text="${clean.replace(/[\\"]/g, (char) => `\\${char}`)}"`;
}
