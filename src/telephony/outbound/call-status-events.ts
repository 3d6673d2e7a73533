/**
 * Status events of outbound calls to their `status_url`: `ringing`, `answered`, `completed`
 * and `failed`, each the call as `GET /v1/calls/{id}` shows it then, POSTed and signed like job
 * callbacks (the account's webhook secret). A call's events go out in order, each tried three
 * times (at once, after 1 s and 5 s); the target is checked again for each attempt. Events are
 * a courtesy: `GET /v1/calls/{id}` stays authoritative.
 */
import type { Logger } from 'pino';
import { CallbackTargetError, checkCallbackTarget, systemResolver, type CallbackAllowList, type Resolver } from '../../jobs/callback-target.js';
import { postWebhook, webhookSignatureHeaders } from '../../jobs/webhook-post.js';
import type { PlacedCallView } from './placed-call-record.js';

/** The events a call reports. */
export type CallStatusEvent = 'ringing' | 'answered' | 'completed' | 'failed';

/** What the sender works with. */
export interface CallStatusSenderOptions {
  readonly allow: CallbackAllowList;
  /** The webhook secret of an account; null when it no longer exists. */
  readonly secretOf: (accountId: string) => Promise<string | null>;
  readonly logger: Logger;
  readonly resolver?: Resolver;
  readonly retryDelaysMs?: readonly number[];
  readonly timeoutMs?: number;
}

const DEFAULT_RETRY_DELAYS_MS = [1_000, 5_000];

/** Sends calls' status events. */
export class CallStatusSender {
  /** Each call's events in flight, chained so that they arrive in order. */
  private readonly queues = new Map<string, Promise<void>>();
  private stopped = false;

  constructor(private readonly options: CallStatusSenderOptions) {}

  /** Queues `event` for the call's `status_url`. */
  send(url: string, accountId: string, event: CallStatusEvent, call: PlacedCallView): void {
    if (this.stopped) return;
    const body = JSON.stringify({ event, call });
    const previous = this.queues.get(call.id) ?? Promise.resolve();
    const next = previous.then(() => this.deliver(url, accountId, event, call.id, body));
    this.queues.set(call.id, next);
    void next.finally(() => {
      if (this.queues.get(call.id) === next) this.queues.delete(call.id);
    });
  }

  /** Waits for the events under way (tests, shutdown). */
  async settle(): Promise<void> {
    while (this.queues.size > 0) await Promise.all([...this.queues.values()]);
  }

  /** Sends what is queued without further retries. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.settle();
  }

  private async deliver(url: string, accountId: string, event: CallStatusEvent, callId: string, body: string): Promise<void> {
    const delays = this.options.retryDelaysMs ?? DEFAULT_RETRY_DELAYS_MS;
    const logger = this.options.logger.child({ call: callId, event });
    for (let attempt = 0; ; attempt += 1) {
      const error = await this.attempt(url, accountId, body);
      if (error === null) return void logger.debug('call status event delivered');
      if (attempt >= delays.length || this.stopped) return void logger.warn({ error }, 'call status event given up');
      logger.info({ error }, 'call status event failed; trying again');
      await new Promise((resolve) => setTimeout(resolve, delays[attempt]));
    }
  }

  /** One attempt: null when delivered, else why not. */
  private async attempt(url: string, accountId: string, body: string): Promise<string | null> {
    try {
      const secret = await this.options.secretOf(accountId);
      if (secret === null) return 'the call’s account no longer exists';
      const target = await checkCallbackTarget(url, this.options.allow, this.options.resolver ?? systemResolver, 'status_url');
      const status = await postWebhook(
        target,
        body,
        { 'user-agent': 'sprachrohr-call-status', ...webhookSignatureHeaders(secret, body, new Date()) },
        this.options.timeoutMs ?? 10_000,
      );
      if (status >= 200 && status < 300) return null;
      return status >= 300 && status < 400 ? `answered ${status}; redirects are not followed` : `answered ${status}`;
    } catch (caught) {
      return caught instanceof CallbackTargetError ? caught.message : `could not be delivered: ${(caught as Error).message}`;
    }
  }
}
