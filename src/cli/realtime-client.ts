/**
 * The CLI's side of the realtime endpoints: opens a session socket with the same address and
 * key the HTTP commands use, and turns a refused handshake into the API's error.
 */
import WebSocket from 'ws';
import { loadClientConfig } from '../config.js';
import type { Env } from '../config-values.js';
import { ApiClientError, type ClientFlags } from './api-client.js';
import { UsageError } from './usage-error.js';

/** Opens `path` (`/tts/stream`, `/stt/stream`) as a WebSocket session (address and key: the flags', else `env`'s). */
export function openRealtime(flags: ClientFlags, path: string, env: Env): Promise<WebSocket> {
  const config = loadClientConfig(env);
  const baseUrl = (flags.url ?? config.baseUrl).replace(/\/+$/, '');
  const key = flags.key ?? config.apiKey;
  if (!key) throw new UsageError('an API key is needed: pass --key or set SPRACHROHR_API_KEY');
  const url = `${baseUrl.replace(/^http/, 'ws')}${path}`;
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, ['speech.v1'], { headers: { 'X-API-Key': key } });
    socket.once('open', () => resolve(socket));
    socket.once('unexpected-response', (request, response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () => {
        request.destroy();
        try {
          const body = JSON.parse(text) as { error: { code: string; message: string; detail: string | null; request_id: string | null } };
          reject(new ApiClientError(response.statusCode ?? 0, body.error.code, body.error.message, body.error.detail, body.error.request_id));
        } catch {
          reject(new ApiClientError(response.statusCode ?? 0, 'unexpected_response', text.slice(0, 200), null, null));
        }
      });
    });
    socket.once('error', (error) => reject(new UsageError(`cannot reach ${url}: ${error.message}`)));
  });
}

/** An error frame of either protocol (nested on tts/stream, flat on stt/stream) as the CLI reports it. */
export function errorFrameToError(frame: Record<string, unknown>): ApiClientError {
  const body = (frame['error'] ?? frame) as { code: string; message: string; detail: string | null; request_id: string | null };
  return new ApiClientError(0, body.code, body.message, body.detail, body.request_id);
}
