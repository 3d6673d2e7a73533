/**
 * A signed webhook POST (spec 6.3), for job callbacks and call status events alike: JSON to a
 * checked target, with `X-Speech-Webhook-Timestamp` (Unix seconds) and
 * `X-Speech-Webhook-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`. The
 * connection goes to the address that was checked; no redirect is followed.
 */
import { createHmac } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import type { CallbackTarget } from './callback-target.js';

/** The content type and signature headers of `body`, signed with `secret` at `now`. */
export function webhookSignatureHeaders(secret: string, body: string, now: Date): Record<string, string> {
  const timestamp = String(Math.floor(now.getTime() / 1000));
  const signature = createHmac('sha256', secret).update(`${timestamp}.${body}`).digest('hex');
  return { 'content-type': 'application/json', 'x-speech-webhook-timestamp': timestamp, 'x-speech-webhook-signature': `sha256=${signature}` };
}

/** POSTs `body` to the checked address of `target`; resolves with the status. */
export function postWebhook(target: CallbackTarget, body: string, headers: Record<string, string>, timeoutMs: number): Promise<number> {
  // The connection goes to the address that was checked, whatever the name resolves to now.
  const lookup = ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options.all) callback(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  }) as unknown as LookupFunction;
  const client = target.url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const request = client.request(
      target.url,
      { method: 'POST', headers: { ...headers, 'content-length': String(Buffer.byteLength(body)) }, lookup, timeout: timeoutMs, agent: false },
      (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
        response.on('error', reject);
      },
    );
    request.on('timeout', () => request.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    request.on('error', reject);
    request.end(body);
  });
}
