/**
 * Opening a `stream` bot's WebSocket: the gateway is the client. The upgrade request is signed
 * like every webhook of the deployment when a secret is set (`X-Speech-Webhook-Timestamp`, and
 * `X-Speech-Webhook-Signature: sha256=HMAC(<timestamp>.<url>)`: no body, so the URL is what is
 * signed), so the bot can refuse connections that do not come from us.
 */
import WebSocket from 'ws';
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from '../recordings/webhook-signature.js';

/** The largest message a bot may send: 64 s of µ-law in base64, with room for the JSON around it. */
export const MAX_BOT_MESSAGE_BYTES = 1024 * 1024;

/** Where and how to connect. */
export interface BotConnection {
  readonly url: string;
  readonly headers: ReadonlyArray<readonly [string, string]>;
  readonly secret: string | null;
  readonly timeoutMs: number;
}

/** Connects; resolves with the open socket, or with why there is none (refused, timed out, not a WebSocket, the call ended). */
export function connectBot(connection: BotConnection, signal: AbortSignal): Promise<WebSocket | { readonly failure: string }> {
  const headers: Record<string, string> = {};
  for (const [name, value] of connection.headers) headers[name] = value;
  if (connection.secret !== null) {
    const timestamp = Math.floor(Date.now() / 1000);
    headers[TIMESTAMP_HEADER] = String(timestamp);
    headers[SIGNATURE_HEADER] = signWebhook(connection.secret, timestamp, connection.url);
  }
  return new Promise((resolve) => {
    if (signal.aborted) return resolve({ failure: 'the call ended' });
    const socket = new WebSocket(connection.url, {
      headers,
      handshakeTimeout: connection.timeoutMs,
      maxPayload: MAX_BOT_MESSAGE_BYTES,
      perMessageDeflate: false,
      followRedirects: false,
    });
    // Errors after a bridge let go of the socket (a reset while closing) are of no interest,
    // but an 'error' event nobody listens to would end the process.
    socket.on('error', () => undefined);
    const settle = (result: WebSocket | { readonly failure: string }): void => {
      signal.removeEventListener('abort', onAbort);
      socket.off('open', onOpen);
      socket.off('error', onError);
      socket.off('unexpected-response', onResponse);
      resolve(result);
    };
    const onOpen = (): void => settle(socket);
    const onError = (error: Error): void => {
      const code = (error as { code?: unknown }).code;
      settle({ failure: `the bot cannot be reached (${typeof code === 'string' ? code : error.message})` });
    };
    const onResponse = (_request: unknown, response: { statusCode?: number; resume(): void }): void => {
      response.resume();
      socket.terminate();
      settle({ failure: `the bot answered ${response.statusCode ?? 'without a status'} instead of a WebSocket` });
    };
    const onAbort = (): void => {
      socket.terminate();
      settle({ failure: 'the call ended' });
    };
    socket.on('open', onOpen);
    socket.on('error', onError);
    socket.on('unexpected-response', onResponse);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** Close codes that mean the bot is done with the call, not that it failed: normal, going away, or no code at all. */
export function closedNormally(code: number): boolean {
  return code === 1000 || code === 1001 || code === 1005;
}
