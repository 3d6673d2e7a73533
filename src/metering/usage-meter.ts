import type { Principal } from '../auth/authenticate.js';
import type { ErrorFamily } from '../api/errors.js';
import { capOf } from '../entitlements/draw-plan.js';
import type { CreditRates, EntitlementNotice, EntitlementRecord, EntitlementRepository, UsageKind, UsageRepository, UsageSummaryRow } from '../store/store.js';
import type { UsageWindow } from '../usage/usage-window.js';
import type { BudgetClaims, BudgetSlot } from '../store/budget-claims.js';
import { BudgetLease, type LeaseOwner } from './budget-lease.js';
import { CLAIM_CHUNK_SECONDS, InstanceClaims, type ClaimTiming } from './instance-claims.js';
import { LEDGER_RETRY_PAUSES_MS, PendingLedgerWrites, recordPatiently } from './patient-ledger.js';

/** Daily audio budgets per key, in audio seconds. */
export interface DailyBudgets {
  readonly live: number;
  readonly sandbox: number;
}

/** The UTC day of a moment, `YYYY-MM-DD`. */
export function utcDay(at: Date): string {
  return at.toISOString().slice(0, 10);
}

function secondsUntilUtcMidnight(at: Date): number {
  const midnight = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate() + 1);
  return Math.ceil((midnight - at.getTime()) / 1000);
}

/** What a key has used today and may still use (spec 2.7 `usage_today`). */
export interface DayUsage {
  readonly used: number;
  readonly limit: number;
  readonly available: number;
}

/** What a {@link UsageMeter} works with. */
export interface UsageMeterOptions {
  readonly usage: UsageRepository;
  readonly entitlements: EntitlementRepository;
  readonly budgets: DailyBudgets;
  /** Credits an audio second costs per direction, for credit entitlements. */
  readonly rates: CreditRates;
  /** Gets the notices a ledger entry made due (credit 80 % and 95 % used). */
  readonly onNotices?: (notices: readonly EntitlementNotice[]) => void;
  readonly now?: () => Date;
  /** How often work on credit is checked against the account's entitlements again (default a minute). */
  readonly recheckMs?: number;
  /** Where this instance claims parts of the keys' budgets, when instances share the store; absent or null: this process is the only one. */
  readonly claims?: BudgetClaims | null;
  /** When claims go back (tests shorten it). */
  readonly claimTiming?: ClaimTiming;
  /** Pauses before each new try of a patient ledger write that failed (tests shorten them). */
  readonly retryPausesMs?: readonly number[];
}

/** How often work that is not cut at its cap (credit) is checked again: long sessions end within this once the credit is gone. */
export const ENTITLEMENT_RECHECK_MS = 60_000;

/**
 * Meters audio seconds per key and day and enforces the daily audio budget (spec 8) and the
 * account's entitlements (spec 2.9): a key whose budget is spent gets 429 `*.rate_limited`
 * until midnight UTC, an account whose entitlements are used up 429 `*.entitlement_exhausted`.
 * Work draws through a {@link BudgetLease} as its audio is produced or received, so one long
 * request or session cannot run past the budget or an evaluation allowance. Sandbox keys have
 * their own budget, are recorded as unbilled sandbox traffic and draw no entitlement.
 */
export class UsageMeter implements LeaseOwner {
  /** Open leases per key and direction. */
  private readonly open = new Map<string, Set<BudgetLease>>();
  /** Open live leases per account. */
  private readonly openInAccount = new Map<string, Set<BudgetLease>>();
  /** The minute checks of open leases on credit. */
  private readonly rechecks = new Map<BudgetLease, NodeJS.Timeout>();
  /** This instance's claims on the keys' budgets (null: one instance, nothing to claim)… */
  private readonly claims: InstanceClaims | null;
  /** …and the budget slot each open lease draws from. */
  private readonly slots = new Map<BudgetLease, BudgetSlot>();
  private readonly usage: UsageRepository;
  private readonly entitlements: EntitlementRepository;
  /** Ledger writes under way, waited for before the store closes. */
  private readonly pending = new PendingLedgerWrites();
  private readonly budgets: DailyBudgets;
  private readonly now: () => Date;

  constructor(private readonly options: UsageMeterOptions) {
    this.usage = options.usage;
    this.entitlements = options.entitlements;
    this.budgets = options.budgets;
    this.now = options.now ?? (() => new Date());
    this.claims = options.claims ? new InstanceClaims(options.claims, options.claimTiming) : null;
  }

  /** Today's use of a key in one direction (recorded work; work in progress is not counted). */
  async today(principal: Principal, direction: UsageKind['direction']): Promise<DayUsage> {
    const totals = await this.usage.dayTotals(principal.keyId, utcDay(this.now()), direction);
    const limit = this.budgets[principal.environment];
    const used = Math.ceil(totals.audioSeconds);
    return { used, limit, available: Math.max(0, limit - used) };
  }

  /** An account's entitlements as they stand (spec 2.9). */
  entitlementsOf(accountId: string): Promise<EntitlementRecord[]> {
    return this.entitlements.list(accountId);
  }

  /** An account's ledger summed per day, environment, direction and mode over `window` (spec 4.12). */
  async summary(accountId: string, window: UsageWindow): Promise<UsageSummaryRow[]> {
    return this.usage.summary(accountId, window.from.toISOString(), window.to.toISOString());
  }

  /**
   * Opens a lease on the key's budget for one request or session; `requestId` names its ledger
   * entry (one per id, however often the work is committed).
   * @throws ApiError `*.rate_limited` when nothing of the budget is left.
   */
  async lease(principal: Principal, direction: UsageKind['direction'], family: ErrorFamily, requestId: string): Promise<BudgetLease> {
    const slot = slotOf(principal, direction);
    const limit = this.budgets[principal.environment];
    const lease = new BudgetLease(this, principal, direction, family, limit, requestId);
    // The lease joins the key's open leases before the ledger is read: whatever another lease
    // records from now on reaches it, whatever was recorded before is in what it reads.
    this.leasesOf(this.open, slot).add(lease);
    const live = principal.environment === 'live';
    if (live) this.leasesOf(this.openInAccount, principal.accountId).add(lease);
    const now = this.now();
    const budgetSlot: BudgetSlot = { keyId: principal.keyId, day: utcDay(now), direction };
    this.slots.set(lease, budgetSlot);
    this.claims?.busy(budgetSlot);
    try {
      const [totals, entitlements] = await Promise.all([
        this.usage.dayTotals(principal.keyId, utcDay(now), direction),
        live ? this.entitlements.list(principal.accountId) : Promise.resolve([]),
        // Room for the work to start (more is claimed as it draws).
        this.claimFor(lease, CLAIM_CHUNK_SECONDS / 2),
      ]);
      const cap = capOf(entitlements, direction, this.options.rates, now.toISOString());
      lease.readLedger(totals.audioSeconds, cap);
      // Refused when no second is left; how much the work needs is checked as it runs.
      lease.assertOpen();
      if (Number.isFinite(cap.seconds) && !cap.cutsMidway) this.recheckEvery(lease);
    } catch (error) {
      lease.release();
      throw error;
    }
    return lease;
  }

  /** Checks a lease on credit against the account's entitlements again, every {@link UsageMeterOptions.recheckMs}, until it ends. */
  private recheckEvery(lease: BudgetLease): void {
    const timer = setInterval(() => {
      void this.entitlements
        .list(lease.principal.accountId)
        .then((entitlements) => lease.recheck(capOf(entitlements, lease.direction, this.options.rates, this.now().toISOString())))
        // A store that cannot be read now is read at the next check.
        .catch(() => undefined);
    }, this.options.recheckMs ?? ENTITLEMENT_RECHECK_MS);
    timer.unref();
    this.rechecks.set(lease, timer);
  }

  /** Resolves once the ledger writes under way have landed or given up: the server waits for it before it closes the store. */
  async settled(): Promise<void> {
    await this.pending.settled();
  }

  /** {@inheritDoc LeaseOwner.heldByOthers} */
  heldByOthers(lease: BudgetLease): number {
    let held = 0;
    for (const other of this.open.get(slotOf(lease.principal, lease.direction)) ?? []) if (other !== lease) held += other.seconds;
    return held;
  }

  /** {@inheritDoc LeaseOwner.heldInAccount} */
  heldInAccount(lease: BudgetLease): number {
    let held = 0;
    for (const other of this.openInAccount.get(lease.principal.accountId) ?? []) if (other !== lease) held += other.seconds;
    return held;
  }

  /** {@inheritDoc LeaseOwner.commit} */
  async commit(lease: BudgetLease, kind: UsageKind, seconds: number, patient: boolean): Promise<void> {
    for (const other of this.open.get(slotOf(lease.principal, lease.direction)) ?? []) if (other !== lease) other.recordedByOthers += seconds;
    if (lease.principal.environment === 'live') {
      for (const other of this.openInAccount.get(lease.principal.accountId) ?? []) if (other !== lease) other.recordedInAccount += seconds;
    }
    const recording = this.record(lease.principal, lease.requestId, kind, seconds, patient);
    const budgetSlot = this.slots.get(lease);
    if (budgetSlot) this.claims?.recorded(budgetSlot, seconds, recording);
    await recording;
  }

  /** {@inheritDoc LeaseOwner.claimLeft} */
  claimLeft(lease: BudgetLease): number {
    const budgetSlot = this.slots.get(lease);
    if (!this.claims || !budgetSlot) return Number.POSITIVE_INFINITY;
    return this.claims.left(budgetSlot, this.drawnInSlot(lease));
  }

  /** {@inheritDoc LeaseOwner.claimFor} */
  async claimFor(lease: BudgetLease, seconds: number): Promise<void> {
    const budgetSlot = this.slots.get(lease);
    if (this.claims && budgetSlot) await this.claims.ensure(budgetSlot, lease.limit, this.drawnInSlot(lease), seconds);
  }

  /** {@inheritDoc LeaseOwner.drew} */
  drew(lease: BudgetLease): void {
    const budgetSlot = this.slots.get(lease);
    if (this.claims && budgetSlot) this.claims.topUp(budgetSlot, lease.limit, this.drawnInSlot(lease));
  }

  /** What the open leases of the lease's key and direction have drawn together. */
  private drawnInSlot(lease: BudgetLease): number {
    let drawn = 0;
    for (const open of this.open.get(slotOf(lease.principal, lease.direction)) ?? []) drawn += open.seconds;
    return drawn;
  }

  /** {@inheritDoc LeaseOwner.release} */
  release(lease: BudgetLease): void {
    clearInterval(this.rechecks.get(lease));
    this.rechecks.delete(lease);
    forget(this.open, slotOf(lease.principal, lease.direction), lease);
    forget(this.openInAccount, lease.principal.accountId, lease);
    const budgetSlot = this.slots.get(lease);
    this.slots.delete(lease);
    if (budgetSlot && !this.open.has(slotOf(lease.principal, lease.direction))) this.claims?.quiet(budgetSlot);
  }

  /** {@inheritDoc LeaseOwner.secondsUntilReset} */
  secondsUntilReset(): number {
    return secondsUntilUtcMidnight(this.now());
  }

  private leasesOf(map: Map<string, Set<BudgetLease>>, slot: string): Set<BudgetLease> {
    let leases = map.get(slot);
    if (!leases) map.set(slot, (leases = new Set()));
    return leases;
  }

  /** Writes one finished piece of work to the ledger, to the millisecond of audio; `patient`: tried again while the store fails. */
  private async record(principal: Principal, requestId: string, kind: UsageKind, audioSeconds: number, patient: boolean): Promise<void> {
    const outcome = await this.pending.track(
      recordPatiently(
        this.usage,
        {
          requestId,
          accountId: principal.accountId,
          keyId: principal.keyId,
          environment: principal.environment,
          recordedAt: this.now().toISOString(),
          direction: kind.direction,
          mode: kind.mode,
          audioSeconds: Math.round(audioSeconds * 1000) / 1000,
        },
        this.options.rates,
        patient ? (this.options.retryPausesMs ?? LEDGER_RETRY_PAUSES_MS) : [],
      ),
    );
    if (outcome.notices.length > 0) this.options.onNotices?.(outcome.notices);
  }
}

/** Removes a lease from its set, and the set once empty. */
function forget(map: Map<string, Set<BudgetLease>>, slot: string, lease: BudgetLease): void {
  const leases = map.get(slot);
  leases?.delete(lease);
  if (leases?.size === 0) map.delete(slot);
}

function slotOf(principal: Principal, direction: UsageKind['direction']): string {
  return `${principal.keyId}\u0000${direction}`;
}
