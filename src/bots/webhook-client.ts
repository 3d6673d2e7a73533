/**
 * The HTTP side of a webhook bot: one JSON turn POSTed, signed like every webhook of the
 * deployment (spec 6.3: `X-Speech-Webhook-Signature: sha256=HMAC(<timestamp>.<body>)`), with a
 * timeout, retried only when the bot could not be reached at all (a bot that answered, even
 * badly, has seen the turn and must not see it twice). Node's fetch keeps connections alive, so
 * a call's turns after the first cost no new TCP or TLS handshake.
 */
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from '../recordings/webhook-signature.js';

/** How one turn is sent. */
export interface TurnPost {
  readonly url: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly timeoutMs: number;
  /** Further attempts after a connection failure. */
  readonly retries: number;
  /** The deployment's webhook secret; unsigned without one. */
  readonly secret: string | null;
}

/** What came back: the bot's JSON answer, or why there is none. */
export type TurnReply = { readonly answer: unknown; readonly status: number } | { readonly failure: string };

/** POSTs `body` and reads the JSON answer. */
export async function postTurn(post: TurnPost, body: unknown, signal: AbortSignal): Promise<TurnReply> {
  const text = JSON.stringify(body);
  let last = 'not sent';
  for (let attempt = 0; attempt <= post.retries; attempt++) {
    if (signal.aborted) return { failure: 'the call ended' };
    const timestamp = Math.floor(Date.now() / 1000);
    const headers: Record<string, string> = { 'Content-Type': 'application/json', Accept: 'application/json' };
    for (const [name, value] of post.headers) headers[name] = value;
    if (post.secret !== null) {
      headers[TIMESTAMP_HEADER] = String(timestamp);
      headers[SIGNATURE_HEADER] = signWebhook(post.secret, timestamp, text);
    }
    let response: Response;
    try {
      response = await fetch(post.url, {
        method: 'POST',
        headers,
        body: text,
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(post.timeoutMs)]),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: unknown } }).cause;
      const name = (error as Error).name;
      if (name === 'TimeoutError') return { failure: `no answer within ${post.timeoutMs} ms` };
      last = typeof cause?.code === 'string' ? cause.code : name;
      continue;
    }
    if (response.status < 200 || response.status > 299) {
      await response.body?.cancel();
      return { failure: `the bot answered ${response.status}` };
    }
    try {
      return { answer: await response.json(), status: response.status };
    } catch {
      return { failure: 'the answer is not JSON' };
    }
  }
  return { failure: `the bot cannot be reached (${last})` };
}
