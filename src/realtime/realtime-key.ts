import type { IncomingHttpHeaders } from 'node:http';

/** The subprotocol every realtime session speaks. */
export const REALTIME_SUBPROTOCOL = 'speech.v1';
/** How a key rides in `Sec-WebSocket-Protocol` (browsers cannot set headers on a WebSocket). */
const KEY_PROTOCOL_PREFIX = 'key.';

/** The subprotocols a client offered, in order. */
export function offeredProtocols(headers: IncomingHttpHeaders): string[] {
  const header = headers['sec-websocket-protocol'];
  return (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((protocol) => protocol.trim())
    .filter(Boolean);
}

/**
 * The API key a WebSocket upgrade presents (spec 4.6): the `X-API-Key` header, else a
 * `key.<KEY>` subprotocol beside `speech.v1`, else the `api_key` query parameter.
 */
export function presentedRealtimeKey(headers: IncomingHttpHeaders, url: string): string | undefined {
  const header = headers['x-api-key'];
  if (typeof header === 'string' && header !== '') return header;
  const fromProtocol = offeredProtocols(headers).find((protocol) => protocol.startsWith(KEY_PROTOCOL_PREFIX));
  if (fromProtocol) return fromProtocol.slice(KEY_PROTOCOL_PREFIX.length);
  return new URL(url, 'http://localhost').searchParams.get('api_key') ?? undefined;
}
