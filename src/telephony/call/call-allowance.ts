/**
 * A call's standing with its account's entitlements while it runs: the allowance is opened
 * when the call starts (an unknown account, or nothing left, ends it at once), checked every
 * minute with the call's own use so far (`CallMeter`), and written to the ledger when the call
 * is over. When nothing is left, the steps stop, the caller is told so in the call's language,
 * and the call is hung up.
 */
import type { Logger } from 'pino';
import { usedUpPrompt } from '../../dialplan/dialplan-defaults.js';
import type { CallVoice, PromptRequest } from '../../dialplan/steps/step-context.js';
import { UnknownCallAccountError, type CallAllowance, type CallMetering, type CallUse, type MeteredCall } from '../../metering/call-meter.js';

/** How often a running call is checked against its account's entitlements. */
export const CALL_ALLOWANCE_CHECK_MS = 60_000;

/** What the guard needs of its call. */
export interface GuardedCall {
  readonly metered: MeteredCall;
  readonly logger: Logger;
  /** What the call has synthesised and recognised so far. */
  use(): CallUse;
  voice(): CallVoice;
  /** Stops the call's steps (not the call). */
  stopSteps(): void;
  say(prompt: PromptRequest, signal: AbortSignal): Promise<unknown>;
  hangup(reason: string): Promise<void>;
  /** Calls `listener` when the caller leaves; returns how to stop listening. */
  onCallerGone(listener: () => void): () => void;
}

/** Holds one call to its account's entitlements, from its start to its metering. */
export class CallAllowanceGuard {
  private allowance: CallAllowance | null = null;
  private timer: NodeJS.Timeout | null = null;
  private checking = false;
  private ending: Promise<void> | null = null;

  constructor(
    private readonly metering: CallMetering | null | undefined,
    private readonly call: GuardedCall,
    private readonly checkMs = CALL_ALLOWANCE_CHECK_MS,
  ) {}

  /**
   * Opens the call's allowance and starts the minute checks.
   * @returns false when the call may not run (it has been ended: unknown account, or nothing left)
   */
  async open(): Promise<boolean> {
    if (!this.metering) return true;
    try {
      this.allowance = await this.metering.open(this.call.metered);
    } catch (error) {
      if (!(error instanceof UnknownCallAccountError)) throw error;
      this.call.logger.error(error.message);
      await this.call.hangup('unknown_account');
      return false;
    }
    const reason = await this.allowance.check(this.call.use());
    if (reason !== null) {
      // Nothing left at the start: told so, and not metered.
      await this.endUsedUp(reason);
      this.allowance = null;
      return false;
    }
    this.timer = setInterval(() => void this.check(), this.checkMs);
    this.timer.unref();
    return true;
  }

  /** Stops the checks and waits for a used-up ending under way (before the call hangs up). */
  async settle(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.ending;
  }

  /** Writes the ended call's use to the ledger. */
  async finish(): Promise<void> {
    const use = this.call.use();
    await this.allowance?.finish(use).catch((error: unknown) => this.call.logger.error({ err: error, ...use }, 'the call could not be metered'));
  }

  private async check(): Promise<void> {
    if (this.checking || !this.allowance) return;
    this.checking = true;
    try {
      const reason = await this.allowance.check(this.call.use());
      if (reason !== null && this.timer !== null) {
        clearInterval(this.timer);
        this.timer = null;
        void this.endUsedUp(reason);
      }
    } catch (error) {
      // The store failing is no reason to cut a caller off: the next check tries again.
      this.call.logger.error({ err: error }, 'the call could not be checked against its entitlements');
    } finally {
      this.checking = false;
    }
  }

  /** Stops the steps, tells the caller the credit is used up, and hangs up (once). */
  private endUsedUp(reason: string): Promise<void> {
    this.ending ??= (async () => {
      const call = this.call;
      call.logger.warn({ reason }, "the account's entitlements are used up: the caller is told so and the call ends");
      call.stopSteps();
      // The notice has a signal of its own, which only the caller leaving ends.
      const notice = new AbortController();
      const stopListening = call.onCallerGone(() => notice.abort());
      try {
        const voice = call.voice();
        await call.say({ ...voice, dialectText: false, text: usedUpPrompt(voice.language), bargeIn: false }, notice.signal);
      } catch (error) {
        if (!notice.signal.aborted) call.logger.error({ err: error }, 'the used-up notice could not be spoken');
      } finally {
        stopListening();
      }
      await call.hangup('entitlement_exhausted');
    })();
    return this.ending;
  }
}
