/**
 * SIP digest authentication (RFC 3261 section 22, RFC 8760 for SHA-256, `-sess` and qop
 * `auth` from RFC 7616): the parameters of a challenge or an answer, the response hash, and
 * the client's answer to a challenge (a registrar's 401, a proxy's 407).
 */
import { createHash, randomBytes } from 'node:crypto';

/** The algorithms we answer, strongest first (the order a client chooses in). */
export const DIGEST_ALGORITHMS = ['SHA-256', 'SHA-256-sess', 'MD5', 'MD5-sess'] as const;
export type DigestAlgorithm = (typeof DIGEST_ALGORITHMS)[number];

/** The parameters of a `Digest …` header value (names lower-cased, quotes and escapes removed). */
export function authParams(text: string): Map<string, string> {
  const params = new Map<string, string>();
  for (const match of text.replace(/^\s*digest\s+/i, '').matchAll(/([A-Za-z0-9-]+)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^,\s]*))/g)) {
    params.set(match[1]!.toLowerCase(), match[2] !== undefined ? match[2].replace(/\\(.)/g, '$1') : match[3]!);
  }
  return params;
}

/** What the response hash is computed over. */
export interface DigestInput {
  readonly algorithm: DigestAlgorithm;
  readonly username: string;
  readonly realm: string;
  readonly password: string;
  readonly method: string;
  readonly uri: string;
  readonly nonce: string;
  /** `auth`, or null for a challenge without qop (RFC 2069 style). */
  readonly qop: 'auth' | null;
  /** Nonce count, eight hex digits; with qop only. */
  readonly nc: string;
  /** Client nonce; with qop or a `-sess` algorithm. */
  readonly cnonce: string;
}

/** The `response` value: hex of H(HA1:nonce[:nc:cnonce:qop]:HA2). */
export function digestResponse(input: DigestInput): string {
  const hashName = input.algorithm.startsWith('SHA-256') ? 'sha256' : 'md5';
  const hash = (text: string): string => createHash(hashName).update(text).digest('hex');
  let ha1 = hash(`${input.username}:${input.realm}:${input.password}`);
  if (input.algorithm.endsWith('-sess')) ha1 = hash(`${ha1}:${input.nonce}:${input.cnonce}`);
  const ha2 = hash(`${input.method}:${input.uri}`);
  return input.qop ? hash(`${ha1}:${input.nonce}:${input.nc}:${input.cnonce}:${input.qop}:${ha2}`) : hash(`${ha1}:${input.nonce}:${ha2}`);
}

/** A challenge we can answer. */
export interface DigestChallenge {
  readonly realm: string;
  readonly nonce: string;
  readonly algorithm: DigestAlgorithm;
  readonly qop: 'auth' | null;
  readonly opaque: string | null;
  /** The server knew our credentials but the nonce had expired: answer again, no need to doubt the password. */
  readonly stale: boolean;
}

/**
 * The challenge to answer among a response's `WWW-Authenticate` or `Proxy-Authenticate` values:
 * the strongest algorithm we know, with qop `auth` when offered. Null when none is a digest
 * challenge we can answer (an unknown algorithm, only `auth-int`).
 */
export function chooseChallenge(values: readonly string[]): DigestChallenge | null {
  let best: DigestChallenge | null = null;
  for (const value of values) {
    if (!/^\s*digest\s/i.test(value)) continue;
    const params = authParams(value);
    const algorithm = DIGEST_ALGORITHMS.find((name) => name.toLowerCase() === (params.get('algorithm') ?? 'MD5').toLowerCase());
    const nonce = params.get('nonce');
    if (!algorithm || nonce === undefined) continue;
    const offered = params
      .get('qop')
      ?.split(',')
      .map((option) => option.trim().toLowerCase());
    // A server that asks for qop but not `auth` (only auth-int) cannot be answered here.
    if (offered && !offered.includes('auth')) continue;
    const challenge: DigestChallenge = {
      realm: params.get('realm') ?? '',
      nonce,
      algorithm,
      qop: offered ? 'auth' : null,
      opaque: params.get('opaque') ?? null,
      stale: (params.get('stale') ?? '').toLowerCase() === 'true',
    };
    if (!best || DIGEST_ALGORITHMS.indexOf(algorithm) < DIGEST_ALGORITHMS.indexOf(best.algorithm)) best = challenge;
  }
  return best;
}

/** Credentials of a trunk account. */
export interface DigestCredentials {
  readonly username: string;
  readonly password: string;
}

const quoted = (text: string): string => `"${text.replace(/["\\]/g, (char) => `\\${char}`)}"`;

/**
 * The `Authorization` (or `Proxy-Authorization`) value that answers `challenge` for a request
 * of `method` to `uri`. `nc` counts the requests made with this nonce (1 for the first).
 */
export function digestAuthorization(challenge: DigestChallenge, credentials: DigestCredentials, method: string, uri: string, nc = 1): string {
  const cnonce = randomBytes(12).toString('hex');
  const count = nc.toString(16).padStart(8, '0');
  // Only the user and password come from the credentials: the realm is the challenge's.
  const response = digestResponse({ ...challenge, username: credentials.username, password: credentials.password, method, uri, nc: count, cnonce });
  const parts = [
    `username=${quoted(credentials.username)}`,
    `realm=${quoted(challenge.realm)}`,
    `nonce=${quoted(challenge.nonce)}`,
    `uri=${quoted(uri)}`,
    `response=${quoted(response)}`,
    `algorithm=${challenge.algorithm}`,
  ];
  if (challenge.qop) parts.push(`qop=${challenge.qop}`, `nc=${count}`, `cnonce=${quoted(cnonce)}`);
  if (challenge.opaque !== null) parts.push(`opaque=${quoted(challenge.opaque)}`);
  return `Digest ${parts.join(', ')}`;
}
