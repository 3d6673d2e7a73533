/**
 * The settings of voicemail recordings, read and checked once at start with the rest of the
 * configuration (`SPRACHROHR_RECORDINGS_*`, `SPRACHROHR_WEBHOOK_SECRET`).
 */
import { ConfigError, integer, type Env } from '../config-values.js';

/** Where a new recording is announced, and the secret its body is signed with. */
export interface WebhookTarget {
  readonly url: string;
  readonly secret: string;
}

/** How long recordings are kept and who hears of new ones. */
export interface RecordingsConfig {
  /** Days a recording is kept after it was made; 0 keeps recordings until they are deleted. */
  readonly retentionDays: number;
  /** Where `recording.created` is POSTed, or `null` for nowhere. */
  readonly webhook: WebhookTarget | null;
  /** The deployment's webhook secret (`SPRACHROHR_WEBHOOK_SECRET`): it also signs the requests of webhook bots. */
  readonly secret: string | null;
}

/** Shortest webhook secret accepted: the same bar as the key secret's. */
const MIN_SECRET_LENGTH = 32;

/**
 * Reads the recordings settings.
 * @throws ConfigError naming the variable: a retention out of range, a webhook address that is
 *   not http(s) or carries credentials, a missing or short secret while an address is set.
 */
export function loadRecordingsConfig(env: Env): RecordingsConfig {
  const retentionDays = integer(env, 'SPRACHROHR_RECORDINGS_RETENTION_DAYS', 30, 0, 36_500);
  const secret = env['SPRACHROHR_WEBHOOK_SECRET'] || null;
  if (secret !== null && secret.length < MIN_SECRET_LENGTH) {
    throw new ConfigError('SPRACHROHR_WEBHOOK_SECRET', `must be at least ${MIN_SECRET_LENGTH} characters long`);
  }
  const url = env['SPRACHROHR_RECORDINGS_WEBHOOK_URL'] || null;
  if (url === null) return { retentionDays, webhook: null, secret };
  checkWebhookUrl(url);
  // An unsigned announcement could be forged by anyone who finds the receiver's address.
  if (secret === null) throw new ConfigError('SPRACHROHR_WEBHOOK_SECRET', 'is required when SPRACHROHR_RECORDINGS_WEBHOOK_URL is set');
  return { retentionDays, webhook: { url, secret }, secret };
}

function checkWebhookUrl(url: string): void {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError('SPRACHROHR_RECORDINGS_WEBHOOK_URL', `must be an http(s) address, got ${JSON.stringify(url)}`);
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') {
    throw new ConfigError('SPRACHROHR_RECORDINGS_WEBHOOK_URL', `must be an http(s) address, got ${JSON.stringify(url)}`);
  }
  // Credentials in the address would end up in logs and proxies; the signature authenticates.
  if (parsed.username || parsed.password) {
    throw new ConfigError('SPRACHROHR_RECORDINGS_WEBHOOK_URL', 'must not carry credentials; the receiver checks the signature instead');
  }
}

/** The variables {@link loadRecordingsConfig} reads, for `--help` and the README. */
export const RECORDINGS_CONFIG_VARIABLES: ReadonlyArray<readonly [name: string, meaning: string]> = [
  ['SPRACHROHR_RECORDINGS_RETENTION_DAYS', 'days a voicemail recording is kept (default 30; 0 keeps them until deleted)'],
  ['SPRACHROHR_RECORDINGS_WEBHOOK_URL', 'http(s) address that is POSTed a signed recording.created event for each new voicemail'],
  ['SPRACHROHR_WEBHOOK_SECRET', 'HMAC-SHA256 secret of webhook signatures, ≥ 32 characters (required with a webhook address)'],
];
