/**
 * The settings of the SIP/RTP side, read and checked once at start with the rest of the
 * configuration (`SPRACHROHR_SIP_*`, `SPRACHROHR_DRACHTIO*`, `SPRACHROHR_RTP_PORTS`,
 * `SPRACHROHR_DIALPLANS_DIR`).
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ConfigError, integer, text, type Env } from '../config-values.js';

/** A codec the gateway may agree on, in preference order. */
export type CallCodec = 'PCMU' | 'PCMA' | 'opus';

export interface TelephonyConfig {
  /** Whether the process answers calls at all. */
  readonly enabled: boolean;
  readonly host: string;
  /** UDP and TCP port of SIP (0 picks a free one). */
  readonly port: number;
  /** TLS listener, when a certificate and key are configured. */
  readonly tls: { readonly port: number; readonly certFile: string; readonly keyFile: string } | null;
  /** Address written into SDP and Contact when it differs from `host` (a public address). */
  readonly advertisedAddress: string | null;
  /** Sources allowed to call (CIDR). */
  readonly allow: readonly string[];
  readonly digest: { readonly realm: string; readonly user: string; readonly password: string } | null;
  readonly maxCalls: number;
  readonly maxCallsPerSource: number;
  /** What requests from outside the allow-list get: one stateless 403, or nothing. */
  readonly refuse: '403' | 'drop';
  /** SIP over TCP/TLS: connections open at once from one source address. */
  readonly maxConnectionsPerSource: number;
  /** RTP ports: even numbers in this range carry RTP, the odd one above each its RTCP. */
  readonly rtpPorts: { readonly min: number; readonly max: number };
  readonly codecs: readonly CallCodec[];
  readonly dialplansDir: string;
  /**
   * The drachtio-server that does the SIP signalling instead of the embedded endpoint, when
   * set; the SIP listener settings then go unused (media stays ours).
   */
  readonly drachtio: DrachtioConfig | null;
  /** Outbound calls (`POST /v1/calls`) one key may start per second, and have up at once. */
  readonly outbound: { readonly callsPerSecond: number; readonly callsPerKey: number };
}

/** Where the drachtio-server listens for applications (its admin port) and its shared secret. */
export interface DrachtioConfig {
  readonly host: string;
  readonly port: number;
  readonly secret: string;
}

const CODECS: readonly CallCodec[] = ['PCMU', 'PCMA', 'opus'];

/** `SPRACHROHR_SIP_REFUSE`: `403` (default) or `drop`. */
function sipRefusal(env: Env): '403' | 'drop' {
  const value = text(env, 'SPRACHROHR_SIP_REFUSE', '403');
  if (value !== '403' && value !== 'drop') throw new ConfigError('SPRACHROHR_SIP_REFUSE', `must be 403 or drop, got ${JSON.stringify(value)}`);
  return value;
}

/**
 * Reads the telephony settings.
 * @throws ConfigError naming the first bad variable.
 */
export function loadTelephonyConfig(env: Env): TelephonyConfig {
  const enabledText = text(env, 'SPRACHROHR_SIP', 'on');
  if (enabledText !== 'on' && enabledText !== 'off') throw new ConfigError('SPRACHROHR_SIP', `must be on or off, got ${JSON.stringify(enabledText)}`);
  const certFile = env['SPRACHROHR_SIP_TLS_CERT'] || null;
  const keyFile = env['SPRACHROHR_SIP_TLS_KEY'] || null;
  if ((certFile === null) !== (keyFile === null))
    throw new ConfigError(certFile ? 'SPRACHROHR_SIP_TLS_KEY' : 'SPRACHROHR_SIP_TLS_CERT', 'TLS needs both a certificate and its key');
  const user = env['SPRACHROHR_SIP_DIGEST_USER'] || null;
  const password = env['SPRACHROHR_SIP_DIGEST_PASSWORD'] || null;
  if ((user === null) !== (password === null))
    throw new ConfigError(user ? 'SPRACHROHR_SIP_DIGEST_PASSWORD' : 'SPRACHROHR_SIP_DIGEST_USER', 'digest authentication needs both a user and a password');
  const range = text(env, 'SPRACHROHR_RTP_PORTS', '20000-29999');
  const match = /^(\d{1,5})-(\d{1,5})$/.exec(range.trim());
  const min = match ? Number(match[1]) : NaN;
  const max = match ? Number(match[2]) : NaN;
  if (!match || min < 1024 || max > 65534 || max - min < 3)
    throw new ConfigError('SPRACHROHR_RTP_PORTS', `must be a range like 20000-29999 within 1024-65534, got ${JSON.stringify(range)}`);
  const codecs = text(env, 'SPRACHROHR_SIP_CODECS', 'PCMU,PCMA,opus')
    .split(',')
    .map((codec) => codec.trim());
  for (const codec of codecs)
    if (!(CODECS as readonly string[]).includes(codec))
      throw new ConfigError('SPRACHROHR_SIP_CODECS', `knows ${CODECS.join(', ')}, got ${JSON.stringify(codec)}`);
  return {
    enabled: enabledText === 'on',
    host: text(env, 'SPRACHROHR_SIP_HOST', text(env, 'SPRACHROHR_HOST', '127.0.0.1')),
    port: integer(env, 'SPRACHROHR_SIP_PORT', 5060, 0, 65535),
    tls:
      certFile && keyFile
        ? { port: integer(env, 'SPRACHROHR_SIP_TLS_PORT', 5061, 0, 65535), certFile: path.resolve(certFile), keyFile: path.resolve(keyFile) }
        : null,
    advertisedAddress: env['SPRACHROHR_SIP_ADVERTISED_ADDRESS'] || null,
    allow: text(env, 'SPRACHROHR_SIP_ALLOW', '127.0.0.0/8,::1')
      .split(',')
      .map((entry) => entry.trim())
      .filter((entry) => entry !== ''),
    digest: user && password ? { realm: text(env, 'SPRACHROHR_SIP_REALM', 'sprachrohr'), user, password } : null,
    maxCalls: integer(env, 'SPRACHROHR_SIP_MAX_CALLS', 200, 1, 100_000),
    maxCallsPerSource: integer(env, 'SPRACHROHR_SIP_MAX_CALLS_PER_SOURCE', 200, 1, 100_000),
    refuse: sipRefusal(env),
    maxConnectionsPerSource: integer(env, 'SPRACHROHR_SIP_MAX_CONNECTIONS_PER_SOURCE', 16, 1, 100_000),
    rtpPorts: { min: min + (min % 2), max },
    codecs: codecs as CallCodec[],
    dialplansDir: env['SPRACHROHR_DIALPLANS_DIR'] ? path.resolve(env['SPRACHROHR_DIALPLANS_DIR']) : shippedDialplans(),
    drachtio: loadDrachtio(env),
    outbound: {
      callsPerSecond: integer(env, 'SPRACHROHR_CALLS_PER_SECOND', 5, 1, 10_000),
      callsPerKey: integer(env, 'SPRACHROHR_CALLS_PER_KEY', 20, 1, 100_000),
    },
  };
}

/** drachtio-server's default admin port. */
const DRACHTIO_PORT = 9022;

/**
 * `SPRACHROHR_DRACHTIO` (`host:port`, `[v6]:port`, or a host alone for port 9022) with its
 * secret, which is required: drachtio-server's built-in default secret is public knowledge.
 */
function loadDrachtio(env: Env): DrachtioConfig | null {
  const target = (env['SPRACHROHR_DRACHTIO'] ?? '').trim();
  if (target === '') return null;
  const match = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s\[\]]+))(?::(\d{1,5}))?$/.exec(target);
  const port = match?.[3] === undefined ? DRACHTIO_PORT : Number(match[3]);
  if (!match || port < 1 || port > 65535)
    throw new ConfigError('SPRACHROHR_DRACHTIO', `must be host:port of a drachtio-server (like 127.0.0.1:9022), got ${JSON.stringify(target)}`);
  const secret = env['SPRACHROHR_DRACHTIO_SECRET'] ?? '';
  if (secret === '')
    throw new ConfigError('SPRACHROHR_DRACHTIO_SECRET', 'is needed with SPRACHROHR_DRACHTIO: the secret drachtio-server expects from applications');
  // drachtio's wire protocol separates fields with | and ends the leader at a line break.
  if (/[|\r\n]/.test(secret)) throw new ConfigError('SPRACHROHR_DRACHTIO_SECRET', 'must not contain | or line breaks (drachtio-server could never match it)');
  return { host: (match[1] ?? match[2])!, port, secret };
}

/** The `dialplans/` folder that ships with the package (from the sources or from `dist/`). */
export function shippedDialplans(): string {
  const candidates = ['../../dialplans', '../../../dialplans'].map((relative) => fileURLToPath(new URL(relative, import.meta.url)));
  return candidates.find((candidate) => existsSync(candidate)) ?? candidates[0]!;
}

/** The variables {@link loadTelephonyConfig} reads, for `--help` and the README. */
export const TELEPHONY_CONFIG_VARIABLES: ReadonlyArray<readonly [name: string, meaning: string]> = [
  ['SPRACHROHR_SIP', 'on (default) or off: answer phone calls over SIP'],
  ['SPRACHROHR_SIP_HOST', 'SIP listening address (default SPRACHROHR_HOST)'],
  ['SPRACHROHR_SIP_PORT', 'SIP port for UDP and TCP (default 5060; 0 picks a free one)'],
  ['SPRACHROHR_SIP_TLS_CERT', 'PEM certificate file: enables SIP over TLS'],
  ['SPRACHROHR_SIP_TLS_KEY', 'PEM key file of the certificate'],
  ['SPRACHROHR_SIP_TLS_PORT', 'SIP TLS port (default 5061)'],
  ['SPRACHROHR_SIP_ADVERTISED_ADDRESS', 'address written into SDP and Contact when callers reach us at another one (NAT)'],
  ['SPRACHROHR_SIP_ALLOW', 'sources allowed to call, CIDR list (default 127.0.0.0/8,::1); others get 403'],
  ['SPRACHROHR_SIP_REFUSE', 'requests from outside the allow-list: 403 (answered once, never retransmitted; default) or drop (no answer)'],
  ['SPRACHROHR_SIP_MAX_CONNECTIONS_PER_SOURCE', 'SIP over TCP/TLS: connections open at once from one source address (default 16)'],
  ['SPRACHROHR_SIP_DIGEST_USER', 'SIP digest user; with the password, callers must authenticate'],
  ['SPRACHROHR_SIP_DIGEST_PASSWORD', 'SIP digest password'],
  ['SPRACHROHR_SIP_REALM', 'digest realm (default sprachrohr)'],
  ['SPRACHROHR_SIP_MAX_CALLS', 'calls at once in the process, answered and placed (default 200); more get 503'],
  ['SPRACHROHR_SIP_MAX_CALLS_PER_SOURCE', 'calls at once per source address (default 200)'],
  ['SPRACHROHR_SIP_CODECS', 'codecs in preference order (default PCMU,PCMA,opus)'],
  ['SPRACHROHR_RTP_PORTS', 'RTP port range (default 20000-29999)'],
  ['SPRACHROHR_DIALPLANS_DIR', 'folder of dialplans (default: the dialplans/ shipped with sprachrohr)'],
  ['SPRACHROHR_DRACHTIO', 'host:port of a drachtio-server (admin port, default 9022) that does the SIP signalling instead of the embedded endpoint'],
  [
    'SPRACHROHR_CALLS_PER_SECOND',
    'outbound calls (POST /v1/calls) one key may start per second (default 5; its 600 requests a minute bound it to 10); more get 429',
  ],
  ['SPRACHROHR_CALLS_PER_KEY', 'outbound calls one key may have queued, ringing or up at once (default 20); more get 429'],
  ['SPRACHROHR_DRACHTIO_SECRET', 'the shared secret of that drachtio-server (required with SPRACHROHR_DRACHTIO)'],
];
