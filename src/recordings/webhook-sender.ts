/**
 * Delivers signed webhook calls: one JSON body POSTed until the receiver takes it, a
 * permanent refusal, or the last attempt.
 */
import type { Logger } from 'pino';
import type { WebhookTarget } from './recordings-config.js';
import { SIGNATURE_HEADER, signWebhook, TIMESTAMP_HEADER } from './webhook-signature.js';

/** Waits between attempts: five attempts in about 15 s, doubling (1, 2, 4, 8 s). */
export const RETRY_DELAYS_MS: readonly number[] = [1000, 2000, 4000, 8000];
/** How long one attempt may take, answer included. */
export const ATTEMPT_TIMEOUT_MS = 10_000;

/** How a delivery ended. */
export interface DeliveryOutcome {
  readonly delivered: boolean;
  readonly attempts: number;
  /** The last HTTP status, or `null` when the last attempt got no answer. */
  readonly status: number | null;
}

/** Timing of deliveries; tests shorten it. */
export interface SenderTiming {
  readonly retryDelaysMs?: readonly number[];
  readonly attemptTimeoutMs?: number;
  /** Unix time in seconds, for the signature. */
  readonly nowSeconds?: () => number;
}

/**
 * Whether a failed attempt may succeed when repeated: no answer (connection refused, reset,
 * timed out), a server error, or 429. Other statuses, redirects included (they are never
 * followed), will not change by trying again.
 */
function worthRetrying(status: number | null): boolean {
  return status === null || status === 429 || status >= 500;
}

/** Why a request got no answer, in a word: `ECONNREFUSED`, `TimeoutError`, `AbortError`… */
function reasonOf(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown } }).cause;
  return typeof cause?.code === 'string' ? cause.code : String((error as Error).name);
}

function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/** Sends webhook calls to one target. */
export class WebhookSender {
  private readonly retryDelaysMs: readonly number[];
  private readonly attemptTimeoutMs: number;
  private readonly nowSeconds: () => number;

  constructor(
    private readonly target: WebhookTarget,
    private readonly logger: Logger,
    timing: SenderTiming = {},
  ) {
    this.retryDelaysMs = timing.retryDelaysMs ?? RETRY_DELAYS_MS;
    this.attemptTimeoutMs = timing.attemptTimeoutMs ?? ATTEMPT_TIMEOUT_MS;
    this.nowSeconds = timing.nowSeconds ?? (() => Math.floor(Date.now() / 1000));
  }

  /**
   * POSTs `body` (already JSON) until a 2xx, a status not worth retrying, or the last attempt;
   * `signal` stops waiting and sending (at shutdown). Each attempt is signed afresh with its
   * own timestamp. Never throws; the outcome and every failed attempt are logged with `context`.
   */
  async deliver(body: string, context: Record<string, unknown>, signal: AbortSignal): Promise<DeliveryOutcome> {
    let status: number | null = null;
    let attempts = 0;
    for (;;) {
      attempts++;
      status = await this.attempt(body, context, attempts, signal);
      if (status !== null && status >= 200 && status < 300) {
        this.logger.info({ ...context, attempts, status }, 'webhook delivered');
        return { delivered: true, attempts, status };
      }
      const delay = this.retryDelaysMs[attempts - 1];
      if (!worthRetrying(status) || delay === undefined || signal.aborted) break;
      await wait(delay, signal);
      if (signal.aborted) break;
    }
    this.logger.warn({ ...context, attempts, status }, 'webhook given up');
    return { delivered: false, attempts, status };
  }

  /** One POST: the answer's status, or `null` when there was none. */
  private async attempt(body: string, context: Record<string, unknown>, attempt: number, signal: AbortSignal): Promise<number | null> {
    const timestamp = this.nowSeconds();
    try {
      const response = await fetch(this.target.url, {
        method: 'POST',
        headers: {
          'Content-Type': 'application/json',
          [TIMESTAMP_HEADER]: String(timestamp),
          [SIGNATURE_HEADER]: signWebhook(this.target.secret, timestamp, body),
        },
        body,
        redirect: 'manual',
        signal: AbortSignal.any([signal, AbortSignal.timeout(this.attemptTimeoutMs)]),
      });
      // The answer's body is of no interest; reading it to the end would only hold the socket.
      await response.body?.cancel().catch(() => undefined);
      if (response.status >= 300) this.logger.warn({ ...context, attempt, status: response.status }, 'webhook refused');
      return response.status;
    } catch (error) {
      this.logger.warn({ ...context, attempt, reason: reasonOf(error) }, 'webhook not reached');
      return null;
    }
  }
}
