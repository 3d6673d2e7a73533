import { loadClientConfig } from '../config.js';
import type { Env } from '../config-values.js';
import { UsageError } from './usage-error.js';

/** An error answer of the API, as the CLI reports it. */
export class ApiClientError extends Error {
  override name = 'ApiClientError';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly detail: string | null,
    readonly requestId: string | null,
  ) {
    super(`${code}${status ? ` (${status})` : ''}: ${message}${detail ? ` — ${detail}` : ''}${requestId ? ` [${requestId}]` : ''}`);
  }
}

/** Options every client command shares. */
export interface ClientFlags {
  readonly url?: string | undefined;
  readonly key?: string | undefined;
}

/**
 * Calls the API (at the address and with the key of the flags, else of `env`) and returns the
 * response, turning error envelopes into {@link ApiClientError}.
 */
export async function callApi(flags: ClientFlags, path: string, init: RequestInit, env: Env): Promise<Response> {
  const config = loadClientConfig(env);
  const baseUrl = (flags.url ?? config.baseUrl).replace(/\/+$/, '');
  const key = flags.key ?? config.apiKey;
  if (!key) throw new UsageError('an API key is needed: pass --key or set SPRACHROHR_API_KEY');
  let response: Response;
  try {
    response = await fetch(`${baseUrl}${path}`, { ...init, headers: { ...(init.headers as Record<string, string>), 'X-API-Key': key } });
  } catch (error) {
    throw new UsageError(
      `cannot reach ${baseUrl}: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`,
    );
  }
  if (response.ok) return response;
  const text = await response.text();
  try {
    const body = JSON.parse(text) as { error?: { code: string; message: string; detail: string | null; request_id: string | null } };
    if (body.error) throw new ApiClientError(response.status, body.error.code, body.error.message, body.error.detail, body.error.request_id);
  } catch (error) {
    if (error instanceof ApiClientError) throw error;
  }
  throw new ApiClientError(response.status, 'unexpected_response', text.slice(0, 200), null, null);
}

/** Client flags for `parseArgs`. */
export const CLIENT_OPTIONS = {
  url: { type: 'string' },
  key: { type: 'string' },
} as const;

/** The client part of every client command's help. */
export const CLIENT_HELP = `  --url URL      API base address with /v1 (default $SPRACHROHR_URL or http://127.0.0.1:8080/v1)
  --key KEY      API key (default $SPRACHROHR_API_KEY)`;
