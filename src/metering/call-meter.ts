/**
 * Phone calls as metered traffic: a call counts for its dialplan file's account (`account:`,
 * else the default one) as realtime use, with the seconds it synthesised (tts) and recognised
 * (stt), written to the ledger once when it ends (tried again while the store fails); calls on the synthetic engines count as
 * sandbox traffic. A live call draws the account's entitlements: it may start only while they
 * leave something in both directions, and is checked again each minute with its own use so far.
 */
import { capOf } from '../entitlements/draw-plan.js';
import type { AccountRepository, CreditRates, EntitlementNotice, EntitlementRepository, Environment, UsageRepository } from '../store/store.js';
import { DEFAULT_ACCOUNT_ID } from '../store/store.js';
import { LEDGER_RETRY_PAUSES_MS, PendingLedgerWrites, recordPatiently } from './patient-ledger.js';

/** What a call has used so far. */
export interface CallUse {
  readonly ttsSeconds: number;
  readonly sttSeconds: number;
}

/** What a call is metered as: which call, on which route of which account, on which engines. */
export interface MeteredCall {
  readonly callId: string;
  /** The route's called number: the call's ledger entries name it as their key (`phone:<number>`). */
  readonly routeNumber: string;
  /** The dialplan file's account name; undefined: the default account. */
  readonly account: string | undefined;
  readonly synthetic: boolean;
  /**
   * A call placed through `POST /v1/calls`: the key that ordered it, whose account it is
   * metered for and whose usage it shows in (instead of the dialplan file's account and `phone:`).
   */
  readonly orderedBy?: { readonly accountId: string; readonly keyId: string };
}

/** One call's standing with its account. */
export interface CallAllowance {
  /** Why the call may not go on with `use` (the account's entitlements are used up), or null. */
  check(use: CallUse): Promise<string | null>;
  /** Writes the call's use to the ledger (once). */
  finish(use: CallUse): Promise<void>;
}

/** Opens calls' allowances; what the telephony side is given. */
export interface CallMetering {
  /** @throws UnknownCallAccountError when the dialplan names an account that does not exist */
  open(call: MeteredCall): Promise<CallAllowance>;
}

/** A dialplan names an account the store does not have. */
export class UnknownCallAccountError extends Error {
  override readonly name = 'UnknownCallAccountError';
}

/** What a {@link CallMeter} works with. */
export interface CallMeterOptions {
  readonly accounts: AccountRepository;
  readonly entitlements: EntitlementRepository;
  readonly usage: UsageRepository;
  readonly rates: CreditRates;
  readonly onNotices?: (notices: readonly EntitlementNotice[]) => void;
  readonly now?: () => Date;
  /** Pauses before each new try of a ledger write that failed (tests shorten them). */
  readonly retryPausesMs?: readonly number[];
}

/** Meters calls in the store the HTTP API meters in. */
export class CallMeter implements CallMetering {
  private readonly now: () => Date;
  private readonly retryPausesMs: readonly number[];
  /** Ledger writes under way, waited for before the store closes. */
  private readonly pending = new PendingLedgerWrites();

  constructor(private readonly options: CallMeterOptions) {
    this.now = options.now ?? (() => new Date());
    this.retryPausesMs = options.retryPausesMs ?? LEDGER_RETRY_PAUSES_MS;
  }

  /** Resolves once the calls' ledger writes under way have landed or given up: the server waits for it before it closes the store. */
  async settled(): Promise<void> {
    await this.pending.settled();
  }

  async open(call: MeteredCall): Promise<CallAllowance> {
    const account = call.orderedBy?.accountId ?? (call.account === undefined ? DEFAULT_ACCOUNT_ID : (await this.options.accounts.findByName(call.account))?.id);
    if (!account)
      throw new UnknownCallAccountError(`the dialplan names the account ${JSON.stringify(call.account)}, which does not exist (sprachrohr accounts list)`);
    const environment: Environment = call.synthetic ? 'sandbox' : 'live';
    let finished = false;
    return {
      check: async (use) => (environment === 'live' ? this.shortfall(account, use) : null),
      finish: async (use) => {
        if (finished) return;
        finished = true;
        for (const [direction, seconds] of [
          ['tts', use.ttsSeconds],
          ['stt', use.sttSeconds],
        ] as const) {
          if (seconds <= 0) continue;
          const outcome = await this.pending.track(
            recordPatiently(
              this.options.usage,
              {
                requestId: `call_${call.callId}_${direction}`,
                accountId: account,
                keyId: call.orderedBy?.keyId ?? `phone:${call.routeNumber}`,
                environment,
                direction,
                mode: 'realtime',
                recordedAt: this.now().toISOString(),
                audioSeconds: Math.round(seconds * 1000) / 1000,
              },
              this.options.rates,
              this.retryPausesMs,
            ),
          );
          if (outcome.notices.length > 0) this.options.onNotices?.(outcome.notices);
        }
      },
    };
  }

  /**
   * Why the account's entitlements do not cover `use`, or null. A direction the call has not
   * used does not end it (an announcement line needs no recognition); a call that could use
   * neither direction cannot start.
   */
  private async shortfall(accountId: string, use: CallUse): Promise<string | null> {
    const entitlements = await this.options.entitlements.list(accountId);
    const at = this.now().toISOString();
    const reasons = (
      [
        ['tts', use.ttsSeconds],
        ['stt', use.sttSeconds],
      ] as const
    ).map(([direction, seconds]) => {
      const cap = capOf(entitlements, direction, this.options.rates, at);
      const reason = cap.exhausted ?? (cap.seconds - seconds <= 0 ? `the account's entitlements for ${direction} are used up by this call` : null);
      return { used: seconds > 0, reason };
    });
    const ending = reasons.find(({ used, reason }) => used && reason !== null);
    if (ending) return ending.reason;
    return reasons.every(({ reason }) => reason !== null) ? reasons[0]!.reason : null;
  }
}
