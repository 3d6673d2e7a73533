import { createHmac, randomBytes } from 'node:crypto';
import type { Environment } from '../store/store.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
/** Random characters in a key: 32 of 62 symbols is about 190 bits. */
const SECRET_LENGTH = 32;

/** Prefix of keys per environment (spec 5). */
export const KEY_PREFIX: Record<Environment, string> = { live: 'sv_', sandbox: 'sv_test_' };

function randomToken(length: number): string {
  // Rejection sampling keeps every symbol equally likely (256 is not a multiple of 62).
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62];
    }
  }
  return out;
}

/** Generates a new secret API key for an environment. */
export function generateApiKey(environment: Environment): string {
  return KEY_PREFIX[environment] + randomToken(SECRET_LENGTH);
}

/** Generates a public key id, safe to log and show. */
export function generateKeyId(): string {
  return `key_${randomToken(16)}`;
}

/** The environment a key's prefix claims, or `undefined` for something that is no key. */
export function environmentOfKey(key: string): Environment | undefined {
  if (!/^sv_[A-Za-z0-9_]{8,200}$/.test(key)) return undefined;
  return key.startsWith(KEY_PREFIX.sandbox) ? 'sandbox' : 'live';
}

/** The keyed fingerprint under which a key is stored (HMAC-SHA256, hex). */
export function fingerprintKey(secret: string, key: string): string {
  return createHmac('sha256', secret).update(key).digest('hex');
}

/** What a listing shows of a key: its prefix and first four secret characters. */
export function displayPrefix(key: string, environment: Environment): string {
  return `${key.slice(0, KEY_PREFIX[environment].length + 4)}…`;
}
