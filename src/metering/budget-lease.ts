import type { Principal } from '../auth/authenticate.js';
import { ApiError, type ErrorFamily } from '../api/errors.js';
import type { UsageKind } from '../store/store.js';

/** What a lease needs from the meter that opened it. */
export interface LeaseOwner {
  /** Seconds held right now by the key's other open leases in the same direction. */
  heldByOthers(lease: BudgetLease): number;
  /** Writes the ledger entry and tells the other open leases of the key about it. */
  commit(lease: BudgetLease, kind: UsageKind, seconds: number): Promise<void>;
  /** Forgets a lease that ended. */
  release(lease: BudgetLease): void;
  /** Seconds until the budget resets (midnight UTC). */
  secondsUntilReset(): number;
}

/**
 * The daily audio budget one request or session draws from while it runs (spec 8). The audio
 * is counted as it is produced or received, not only when the request ends: the lease knows
 * what the key had used when it opened, what its other requests and sessions have recorded
 * since, and what they hold now, so parallel work under one key together stays within the
 * budget. Exact within one process (the ledger is written by this process's meter).
 */
export class BudgetLease {
  /** Audio this lease has drawn so far. */
  private drawn = 0;
  /** Seconds other leases of the key have recorded since this one read the ledger. */
  recordedByOthers = 0;
  private ended = false;

  constructor(
    private readonly owner: LeaseOwner,
    readonly principal: Principal,
    readonly direction: UsageKind['direction'],
    private readonly family: ErrorFamily,
    /** Seconds the key may use today. */
    readonly limit: number,
    /** The request, job or session whose ledger entry the lease writes. */
    readonly requestId: string,
  ) {}

  /** Seconds the ledger held for the key today when the lease opened. */
  private usedAtOpen = 0;

  /** Takes what the ledger held for the key today (called once by the meter as it opens the lease). */
  readLedger(usedSeconds: number): void {
    this.usedAtOpen = usedSeconds;
  }

  /** Seconds this lease has drawn. */
  get seconds(): number {
    return this.drawn;
  }

  /** Seconds still free for this lease now, with the key's other work counted. */
  get available(): number {
    return Math.max(0, this.limit - this.usedAtOpen - this.recordedByOthers - this.owner.heldByOthers(this) - this.drawn);
  }

  /**
   * Checks that `seconds` more would still fit, without drawing them (for a request whose
   * length is known before its work starts).
   * @throws ApiError `*.rate_limited` (429, Retry-After until midnight UTC) when they would not.
   */
  assertRoom(seconds: number): void {
    if (seconds > this.available) throw this.exhausted(seconds);
  }

  /**
   * Draws audio as it is produced or received: `totalSeconds` is the lease's whole audio so
   * far (not an increment), so a caller passes what its encoder or reader counts.
   * @throws ApiError `*.rate_limited` when the budget would be overdrawn; nothing is drawn then.
   */
  drawTo(totalSeconds: number): void {
    if (totalSeconds <= this.drawn) return;
    const more = totalSeconds - this.drawn;
    if (more > this.available) throw this.exhausted(more);
    this.drawn = totalSeconds;
  }

  /**
   * Records the finished work's audio in the ledger (once) and ends the lease. `seconds`
   * defaults to what was drawn.
   */
  async commit(kind: Omit<UsageKind, 'direction'>, seconds = this.drawn): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    this.owner.release(this);
    if (seconds > 0) await this.owner.commit(this, { ...kind, direction: this.direction }, seconds);
  }

  /** Ends the lease without recording (the work failed: failed requests are not billed). */
  release(): void {
    if (this.ended) return;
    this.ended = true;
    this.owner.release(this);
  }

  private exhausted(wanted: number): ApiError {
    const left = Math.floor(this.available);
    return ApiError.of(
      this.family,
      'rate_limited',
      `the daily audio budget of ${this.limit} s for this key is used up (${left} s left, ${Math.ceil(wanted)} s more needed); it resets at midnight UTC`,
      { retryAfterSeconds: this.owner.secondsUntilReset() },
    );
  }
}
