/** The signature of webhook bodies (spec 6.3): what a receiver recomputes to trust a call. */
import { createHmac } from 'node:crypto';

/** Header carrying the unix time (seconds) the signature was made at. */
export const TIMESTAMP_HEADER = 'X-Speech-Webhook-Timestamp';
/** Header carrying `sha256=<hex>`. */
export const SIGNATURE_HEADER = 'X-Speech-Webhook-Signature';

/**
 * `sha256=` and the hex HMAC-SHA256 of `<timestamp>.<raw body>` under `secret`. The timestamp
 * is signed with the body so that a receiver can refuse an old request replayed.
 */
export function signWebhook(secret: string, timestamp: number, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex')}`;
}
