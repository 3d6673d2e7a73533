/**
 * Sends the credit notices (spec 8: 80 % and 95 % used) to the account's addresses through the
 * configured SMTP server. A notice is marked sent when the ledger entry that made it due is
 * written, so it goes out once; delivery is tried three times, then the failure is logged.
 * Without an SMTP server, or for an account without addresses, the notice is only logged.
 */
import nodemailer, { type Transporter } from 'nodemailer';
import type { Logger } from 'pino';
import type { AccountRepository, EntitlementNotice } from '../store/store.js';
import { entitlementView } from './entitlement-view.js';
import type { NoticeConfig } from './notice-config.js';

/** Waits between delivery attempts: the SMTP server may be restarting. */
const RETRY_DELAYS_MS = [1000, 5000];

/** The text of a notice. */
function compose(accountName: string, notice: EntitlementNotice): { subject: string; text: string } {
  const view = entitlementView(notice.entitlement);
  const credits = 'unit' in view ? view : null;
  const subject = `sprachrohr: ${notice.percent} % of the credit of ${accountName} is used`;
  const lines = [
    `The prepaid credit #${view.id} of the account ${accountName} is ${credits?.used_percent ?? notice.percent} % used.`,
    '',
    ...(credits ? [`Granted: ${credits.granted_credits} credits`, `Used: ${credits.used_credits} credits`, `Left: ${credits.remaining_credits} credits`] : []),
    '',
    view.enforcement === 'hard'
      ? 'When it is used up, new requests are refused (429 entitlement_exhausted) until it is topped up; work in progress completes.'
      : 'Its enforcement is soft: requests go on when it is used up, and the use beyond it is recorded.',
    'Ask your operator to top it up (sprachrohr entitlements top-up).',
  ];
  return { subject, text: lines.join('\n') };
}

/** Delivers notices by e-mail, or logs them. */
export class NoticeMailer {
  private readonly transport: Transporter | null;
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly config: NoticeConfig,
    private readonly accounts: AccountRepository,
    private readonly logger: Logger,
  ) {
    this.transport = config.smtpUrl ? nodemailer.createTransport(config.smtpUrl) : null;
  }

  /** Sends each notice in the background; {@link settle} waits for them. */
  notify(notices: readonly EntitlementNotice[]): void {
    for (const notice of notices) {
      const delivery = this.deliver(notice).finally(() => this.pending.delete(delivery));
      this.pending.add(delivery);
    }
  }

  /** Waits for the deliveries under way (at shutdown, and in tests). */
  async settle(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  /** Waits for deliveries, then closes the SMTP connections. */
  async close(): Promise<void> {
    await this.settle();
    this.transport?.close();
  }

  private async deliver(notice: EntitlementNotice): Promise<void> {
    const { entitlement, percent } = notice;
    const fields = { account: entitlement.accountId, entitlement: entitlement.id, percent };
    const account = await this.accounts.findById(entitlement.accountId);
    const to = account?.emails ?? [];
    if (!this.transport || to.length === 0) {
      const why = this.transport ? 'the account has no addresses (sprachrohr accounts set-emails)' : 'no SPRACHROHR_SMTP_URL';
      this.logger.info(fields, `credit entitlement #${entitlement.id} is ${percent} % used; no e-mail: ${why}`);
      return;
    }
    const message = { from: this.config.from, to: [...to], ...compose(account!.name, notice) };
    for (let attempt = 0; ; attempt++) {
      try {
        await this.transport.sendMail(message);
        this.logger.info({ ...fields, to }, `credit notice (${percent} %) sent`);
        return;
      } catch (error) {
        const delay = RETRY_DELAYS_MS[attempt];
        if (delay === undefined) {
          this.logger.error({ ...fields, err: error }, `credit notice (${percent} %) could not be sent`);
          return;
        }
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}
