/**
 * A call's standing with its account's entitlements while it runs: checked when it starts and
 * then every minute with its own use so far (`CallMeter`); when nothing is left, the call is
 * told so and ended.
 */
import type { Logger } from 'pino';
import type { CallAllowance, CallUse } from '../../metering/call-meter.js';

/** How often a running call is checked against its account's entitlements. */
export const CALL_ALLOWANCE_CHECK_MS = 60_000;

/** Checks a call's allowance on a timer until stopped; calls `onUsedUp` once when nothing is left. */
export class CallAllowanceWatch {
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(
    private readonly allowance: CallAllowance,
    private readonly use: () => CallUse,
    private readonly onUsedUp: (reason: string) => void,
    private readonly logger: Logger,
    private readonly intervalMs = CALL_ALLOWANCE_CHECK_MS,
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.check(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async check(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      const reason = await this.allowance.check(this.use());
      if (reason !== null && this.timer !== null) {
        this.stop();
        this.onUsedUp(reason);
      }
    } catch (error) {
      // The store failing is no reason to cut a caller off: the next check tries again.
      this.logger.error({ err: error }, 'the call could not be checked against its entitlements');
    } finally {
      this.checking = false;
    }
  }
}
