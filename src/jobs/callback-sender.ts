/**
 * Delivers job completion callbacks (spec 6.3): the Job as JSON, POSTed to its `callback_url`,
 * signed with the account's webhook secret — `X-Speech-Webhook-Timestamp` (Unix seconds) and
 * `X-Speech-Webhook-Signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<raw body>">`. Each
 * attempt resolves and checks the target again and connects to the address it checked; no
 * redirect is followed; an attempt gets {@link CALLBACK_TIMEOUT_MS}. A failure is tried again
 * after 2 s, 10 s, 1 min and 5 min; what each attempt did is kept in the job (`callback`), and
 * undelivered callbacks are taken up again after a restart. A callback is a courtesy: the
 * job endpoint stays authoritative.
 */
import type { Logger } from 'pino';
import type { AccountRepository, JobRecord, JobRepository } from '../store/store.js';
import { CallbackTargetError, checkCallbackTarget, systemResolver, type CallbackAllowList, type Resolver } from './callback-target.js';
import { jobView } from './job-view.js';
import { postWebhook, webhookSignatureHeaders } from './webhook-post.js';

/** Attempts before a callback is given up. */
export const CALLBACK_MAX_ATTEMPTS = 5;
/** Time one attempt may take, connection to answer. */
export const CALLBACK_TIMEOUT_MS = 10_000;
/** Waits before the second, third, … attempt. */
const DEFAULT_BACKOFF_MS = [2_000, 10_000, 60_000, 300_000];

/** What a sender works with. */
export interface CallbackSenderOptions {
  readonly jobs: JobRepository;
  readonly accounts: AccountRepository;
  readonly allow: CallbackAllowList;
  /** The public base address with `/v1`, for the audio url in the body (known once the server listens). */
  readonly baseUrl: () => string;
  readonly logger: Logger;
  readonly resolver?: Resolver;
  readonly backoffMs?: readonly number[];
  readonly timeoutMs?: number;
  readonly now?: () => Date;
}

/** Sends callbacks, and tries again on a timer. */
export class CallbackSender {
  private readonly timers = new Map<string, NodeJS.Timeout>();
  private readonly sending = new Set<Promise<void>>();
  private stopped = false;
  private readonly now: () => Date;

  constructor(private readonly options: CallbackSenderOptions) {
    this.now = options.now ?? (() => new Date());
  }

  /** Sends a finished job's callback now (if it has one). */
  send(job: JobRecord): void {
    if (job.callbackUrl !== null) this.later(job.id, 0);
  }

  /** Takes up the callbacks a stopped process left undelivered. */
  async resume(): Promise<void> {
    this.stopped = false;
    for (const job of await this.options.jobs.pendingCallbacks(CALLBACK_MAX_ATTEMPTS, 10_000)) this.later(job.id, 0);
  }

  /** Stops retrying and waits for attempts under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.all([...this.sending]);
  }

  /** Waits for attempts under way and due now (tests). */
  async settle(): Promise<void> {
    while (this.sending.size > 0) await Promise.all([...this.sending]);
  }

  private later(id: string, delayMs: number): void {
    if (this.stopped || this.timers.has(id)) return;
    const timer = setTimeout(() => {
      this.timers.delete(id);
      const attempt = this.attempt(id).finally(() => this.sending.delete(attempt));
      this.sending.add(attempt);
    }, delayMs);
    this.timers.set(id, timer);
  }

  private async attempt(id: string): Promise<void> {
    const job = await this.options.jobs.findById(id);
    if (!job || job.callbackUrl === null || job.callback.deliveredAt !== null || job.callback.attempts >= CALLBACK_MAX_ATTEMPTS) return;
    const attempts = job.callback.attempts + 1;
    const account = await this.options.accounts.findById(job.accountId);
    const body = JSON.stringify(jobView({ ...job, callback: { ...job.callback, attempts } }, this.options.baseUrl()));
    let error: string | null = null;
    try {
      if (!account) throw new Error('the job’s account no longer exists');
      const target = await checkCallbackTarget(job.callbackUrl, this.options.allow, this.options.resolver ?? systemResolver);
      const status = await postWebhook(
        target,
        body,
        { 'user-agent': 'sprachrohr-callback', ...webhookSignatureHeaders(account.webhookSecret, body, this.now()) },
        this.options.timeoutMs ?? CALLBACK_TIMEOUT_MS,
      );
      if (status < 200 || status > 299) error = status >= 300 && status < 400 ? `answered ${status}; redirects are not followed` : `answered ${status}`;
    } catch (caught) {
      error = caught instanceof CallbackTargetError ? caught.message : `could not be delivered: ${(caught as Error).message}`;
    }
    await this.options.jobs.recordCallback(id, { deliveredAt: error === null ? this.now().toISOString() : null, attempts, error });
    const logger = this.options.logger.child({ job: id, attempts });
    if (error === null) return void logger.info('job callback delivered');
    const backoff = this.options.backoffMs ?? DEFAULT_BACKOFF_MS;
    if (attempts >= CALLBACK_MAX_ATTEMPTS) return void logger.warn({ error }, 'job callback given up');
    logger.info({ error }, 'job callback failed; trying again');
    this.later(id, backoff[Math.min(attempts - 1, backoff.length - 1)]!);
  }
}
