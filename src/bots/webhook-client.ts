/**
 * The HTTP side of a webhook bot: one JSON turn POSTed (or PUT), signed like every webhook of the
 * deployment (spec 6.3: `X-Speech-Webhook-Signature: sha256=HMAC(<timestamp>.<body>)`), with a
 * timeout, retried only when the bot could not be reached at all (a bot that answered, even
 * badly, has seen the turn and must not see it twice). Connections are kept alive, so a call's
 * turns after the first cost no new TCP or TLS handshake.
 *
 * Sent with node:http(s) rather than fetch: the answer is on the caller's critical path (the
 * bot's answer → the reply's first packet), and fetch (its web streams and body mixins) took
 * 0.17–0.21 ms from the bot's answer to the parsed JSON on loopback, node:http 0.07–0.09 ms.
 */
import http from 'node:http';
import https from 'node:https';
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from '../recordings/webhook-signature.js';

/** How one turn is sent. */
export interface TurnPost {
  readonly url: string;
  /** The turn is the JSON body with either. */
  readonly method: 'POST' | 'PUT';
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly timeoutMs: number;
  /** Further attempts after a connection failure. */
  readonly retries: number;
  /** The deployment's webhook secret; unsigned without one. */
  readonly secret: string | null;
}

/** What came back: the bot's JSON answer, or why there is none. */
export type TurnReply = { readonly answer: unknown; readonly status: number } | { readonly failure: string };

/** Connections to the bots, kept open between turns. */
const AGENTS = { 'http:': new http.Agent({ keepAlive: true }), 'https:': new https.Agent({ keepAlive: true }) } as const;

/** How one attempt ended: an answer (its body null when it broke off), a timeout, or no answer at all (why). */
type Attempt = { readonly status: number; readonly body: Buffer | null } | { readonly timedOut: true } | { readonly unreachable: string };

/** Sends `body` with the post's method and reads the JSON answer. */
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
    const outcome = await send(post, headers, text, signal);
    if ('timedOut' in outcome) return { failure: `no answer within ${post.timeoutMs} ms` };
    if ('unreachable' in outcome) {
      last = outcome.unreachable;
      continue;
    }
    if (outcome.status < 200 || outcome.status > 299) return { failure: `the bot answered ${outcome.status}` };
    try {
      if (outcome.body === null) throw new Error('the answer broke off');
      // UTF-8, a byte order mark dropped (as a browser's response.json() reads it).
      const answer: unknown = JSON.parse(outcome.body.toString('utf8').replace(/^\uFEFF/, ''));
      return { answer, status: outcome.status };
    } catch {
      return { failure: 'the answer is not JSON' };
    }
  }
  return { failure: `the bot cannot be reached (${last})` };
}

/** One request carrying `text`: its answer's status and body, read to the end. Redirects are answers like any other. */
function send({ url, method, timeoutMs }: TurnPost, headers: Record<string, string>, text: string, signal: AbortSignal): Promise<Attempt> {
  return new Promise((resolve) => {
    let settled = false;
    let request: http.ClientRequest | null = null;
    /** The answer's status once its head came: a connection that breaks after it broke an answer, not the bot's reachability. */
    let answered = 0;
    const finish = (outcome: Attempt): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', abort);
      resolve(outcome);
    };
    const timer = setTimeout(() => {
      finish({ timedOut: true });
      request?.destroy();
    }, timeoutMs);
    const abort = (): void => {
      finish({ unreachable: 'AbortError' });
      request?.destroy();
    };
    signal.addEventListener('abort', abort, { once: true });
    let target: URL;
    try {
      target = new URL(url);
      if (target.protocol !== 'http:' && target.protocol !== 'https:') throw new TypeError(`${target.protocol} is not http or https`);
    } catch (error) {
      return finish({ unreachable: (error as Error).name });
    }
    const client = target.protocol === 'https:' ? https : http;
    request = client.request(
      target,
      { method, headers: { ...headers, 'Content-Length': String(Buffer.byteLength(text)) }, agent: AGENTS[target.protocol] },
      (response) => {
        const status = response.statusCode ?? 0;
        answered = status;
        if (status < 200 || status > 299) {
          // Not read: the socket goes back to the pool once the rest has been drained.
          response.resume();
          return finish({ status, body: null });
        }
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => finish({ status, body: response.complete ? Buffer.concat(chunks) : null }));
        response.on('error', () => finish({ status, body: null }));
        response.on('close', () => finish({ status, body: null }));
      },
    );
    request.on('error', (error: NodeJS.ErrnoException) =>
      finish(answered ? { status: answered, body: null } : { unreachable: typeof error.code === 'string' ? error.code : error.name }),
    );
    request.end(text);
  });
}
