import type { Principal } from '../auth/authenticate.js';
import type { ErrorFamily } from '../api/errors.js';
import type { UsageKind, UsageRepository, UsageSummaryRow } from '../store/store.js';
import type { UsageWindow } from '../usage/usage-window.js';
import { BudgetLease, type LeaseOwner } from './budget-lease.js';

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

/**
 * Meters audio seconds per key and day and enforces the daily audio budget (spec 8): a key
 * whose budget is spent gets 429 `*.rate_limited` until midnight UTC. Work draws from the
 * budget through a {@link BudgetLease} as its audio is produced or received, so one long
 * request or session cannot run past the budget. Sandbox keys have their own budget and are
 * recorded as unbilled sandbox traffic.
 */
export class UsageMeter implements LeaseOwner {
  /** Open leases per key and direction. */
  private readonly open = new Map<string, Set<BudgetLease>>();

  constructor(
    private readonly usage: UsageRepository,
    private readonly budgets: DailyBudgets,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Today's use of a key in one direction (recorded work; work in progress is not counted). */
  async today(principal: Principal, direction: UsageKind['direction']): Promise<DayUsage> {
    const totals = await this.usage.dayTotals(principal.keyId, utcDay(this.now()), direction);
    const limit = this.budgets[principal.environment];
    const used = Math.ceil(totals.audioSeconds);
    return { used, limit, available: Math.max(0, limit - used) };
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
    this.leasesOf(slot).add(lease);
    try {
      const totals = await this.usage.dayTotals(principal.keyId, utcDay(this.now()), direction);
      lease.readLedger(totals.audioSeconds);
      // Refused when no second is left; how much the work needs is checked as it runs.
      lease.assertRoom(Number.MIN_VALUE);
    } catch (error) {
      lease.release();
      throw error;
    }
    return lease;
  }

  /** {@inheritDoc LeaseOwner.heldByOthers} */
  heldByOthers(lease: BudgetLease): number {
    let held = 0;
    for (const other of this.open.get(slotOf(lease.principal, lease.direction)) ?? []) if (other !== lease) held += other.seconds;
    return held;
  }

  /** {@inheritDoc LeaseOwner.commit} */
  async commit(lease: BudgetLease, kind: UsageKind, seconds: number): Promise<void> {
    for (const other of this.open.get(slotOf(lease.principal, lease.direction)) ?? []) if (other !== lease) other.recordedByOthers += seconds;
    await this.record(lease.principal, lease.requestId, kind, seconds);
  }

  /** {@inheritDoc LeaseOwner.release} */
  release(lease: BudgetLease): void {
    const slot = slotOf(lease.principal, lease.direction);
    const leases = this.open.get(slot);
    leases?.delete(lease);
    if (leases?.size === 0) this.open.delete(slot);
  }

  /** {@inheritDoc LeaseOwner.secondsUntilReset} */
  secondsUntilReset(): number {
    return secondsUntilUtcMidnight(this.now());
  }

  private leasesOf(slot: string): Set<BudgetLease> {
    let leases = this.open.get(slot);
    if (!leases) this.open.set(slot, (leases = new Set()));
    return leases;
  }

  /** Writes one finished piece of work to the ledger, to the millisecond of audio. */
  private async record(principal: Principal, requestId: string, kind: UsageKind, audioSeconds: number): Promise<void> {
    await this.usage.record({
      requestId,
      accountId: principal.accountId,
      keyId: principal.keyId,
      environment: principal.environment,
      recordedAt: this.now().toISOString(),
      direction: kind.direction,
      mode: kind.mode,
      audioSeconds: Math.round(audioSeconds * 1000) / 1000,
    });
  }
}

function slotOf(principal: Principal, direction: UsageKind['direction']): string {
  return `${principal.keyId}\u0000${direction}`;
}
