import type { Principal } from '../auth/authenticate.js';
import { ApiError, type ErrorFamily } from '../api/errors.js';
import type { EntitlementCap } from '../entitlements/draw-plan.js';
import type { UsageKind } from '../store/store.js';

/** What a lease needs from the meter that opened it. */
export interface LeaseOwner {
  /** Seconds held right now by the key's other open leases in the same direction. */
  heldByOthers(lease: BudgetLease): number;
  /** Seconds held right now by the other open leases of the key's account (live work), both directions. */
  heldInAccount(lease: BudgetLease): number;
  /**
   * Writes the ledger entry and tells the other open leases of the key about it (its
   * synchronous part runs before the lease is released); `patient`: the write is tried again
   * while the store fails.
   */
  commit(lease: BudgetLease, kind: UsageKind, seconds: number, patient: boolean): Promise<void>;
  /** Forgets a lease that ended. */
  release(lease: BudgetLease): void;
  /** Seconds until the budget resets (midnight UTC). */
  secondsUntilReset(): number;
  /** Seconds this instance's claim on the key's budget leaves for more drawing (unbounded where one instance is the only one). */
  claimLeft(lease: BudgetLease): number;
  /** Claims (waiting for the shared store) until `seconds` more fit in this instance's claim, as far as the budget allows. */
  claimFor(lease: BudgetLease, seconds: number): Promise<void>;
  /** The lease drew, or was refused a draw: more is claimed in the background when little is left. */
  drew(lease: BudgetLease): void;
}

/** Nothing caps the account: it has no entitlements. */
const UNCAPPED: EntitlementCap = { seconds: Number.POSITIVE_INFINITY, cutsMidway: false, exhausted: null };

/**
 * The daily audio budget one request or session draws from while it runs (spec 8), and the
 * account's entitlements (spec 2.9). The audio is counted as it is produced or received, not
 * only when the request ends: the lease knows what the key had used when it opened, what its
 * other requests and sessions have recorded since, and what they hold now, so parallel work
 * under one key together stays within the budget; the same for the account's entitlements
 * (other keys of the account included). An evaluation allowance cuts work that reaches it; on
 * credit, work that started completes. Exact within one process (the ledger is written by
 * this process's meter); with a shared store, each instance also draws only within the part
 * of the key's budget it has claimed ({@link LeaseOwner.claimLeft}), so instances together
 * stay within it too.
 */
export class BudgetLease {
  /** Audio this lease has drawn so far. */
  private drawn = 0;
  /** Seconds other leases of the key have recorded since this one read the ledger. */
  recordedByOthers = 0;
  /** Seconds other leases of the account have recorded since this one read its entitlements. */
  recordedInAccount = 0;
  /** What the account's entitlements left when the lease opened. */
  private cap: EntitlementCap = UNCAPPED;
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

  /** Takes what the ledger held for the key today and what the account's entitlements leave (called once by the meter as it opens the lease). */
  readLedger(usedSeconds: number, cap: EntitlementCap = UNCAPPED): void {
    this.usedAtOpen = usedSeconds;
    this.cap = cap;
  }

  /** Seconds this lease has drawn. */
  get seconds(): number {
    return this.drawn;
  }

  /** Seconds still free for this lease now, with the key's other work counted. */
  get available(): number {
    const byLedger = this.limit - this.usedAtOpen - this.recordedByOthers - this.owner.heldByOthers(this) - this.drawn;
    return Math.max(0, Math.min(byLedger, this.owner.claimLeft(this)));
  }

  /**
   * Takes the account's entitlements as they stand now (the meter's minute check of work on
   * credit, which otherwise runs to its end): once they leave nothing for this lease, its next
   * draw is refused, so a realtime session on used-up credit ends within a minute.
   */
  recheck(cap: EntitlementCap): void {
    if (this.ended) return;
    // A fresh read includes what the account's other work has recorded since the lease opened.
    this.recordedInAccount = 0;
    this.cap = cap;
    if (this.entitled <= 0) this.cap = { ...cap, cutsMidway: true, exhausted: cap.exhausted ?? "the account's credit is used up" };
  }

  /** Seconds the account's entitlements leave for this lease now, with the account's other work counted. */
  get entitled(): number {
    return this.cap.seconds - this.recordedInAccount - this.owner.heldInAccount(this) - this.drawn;
  }

  /**
   * Checks that the work may start: something of the key's budget and of the account's
   * entitlements is left.
   * @throws ApiError `*.rate_limited` or `*.entitlement_exhausted` when not.
   */
  assertOpen(): void {
    if (this.entitled <= 0) throw this.unentitled();
    this.assertRoom(Number.MIN_VALUE);
  }

  /**
   * Checks that `seconds` more would still fit, without drawing them (for a request whose
   * length is known before its work starts).
   * @throws ApiError `*.rate_limited` (429, Retry-After until midnight UTC) or, under an
   *   evaluation allowance, `*.entitlement_exhausted` when they would not.
   */
  assertRoom(seconds: number): void {
    if (seconds > this.available) throw this.exhausted(seconds);
    if (this.cap.cutsMidway && seconds > this.entitled) throw this.unentitled();
  }

  /**
   * {@link assertRoom} for work whose length is known (or bounded) before it starts, once this
   * instance has claimed room for it: with a shared store, a long recording may need more than
   * is claimed.
   * @param claimSeconds how much to claim, when the work may draw more than `seconds` faster
   *   than claims are topped up as it draws (a synthesis of unknown length); as much as the
   *   budget leaves when it leaves less
   */
  async ensureRoom(seconds: number, claimSeconds = seconds): Promise<void> {
    await this.owner.claimFor(this, Math.max(seconds, claimSeconds));
    this.assertRoom(seconds);
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
    if (this.cap.cutsMidway && more > this.entitled) throw this.unentitled();
    this.drawn = totalSeconds;
    this.owner.drew(this);
  }

  /**
   * Records the finished work's audio in the ledger (once) and ends the lease. `seconds`
   * defaults to what was drawn. `patient`: the work is over and its client cannot be asked
   * again (a realtime session; a job says so), so a write the store fails is
   * tried again for about half a minute; a request still waiting for its answer gets the
   * failure instead.
   */
  async commit(kind: Omit<UsageKind, 'direction'>, seconds = this.drawn, patient = kind.mode === 'realtime'): Promise<void> {
    if (this.ended) return;
    this.ended = true;
    // Started before the lease leaves its owner: the owner moves what it drew from work in
    // progress to recorded work in one step (nothing awaited in between).
    const recording = seconds > 0 ? this.owner.commit(this, { ...kind, direction: this.direction }, seconds, patient) : Promise.resolve();
    this.owner.release(this);
    await recording;
  }

  /** Ends the lease without recording (the work failed: failed requests are not billed). */
  release(): void {
    if (this.ended) return;
    this.ended = true;
    this.owner.release(this);
  }

  private unentitled(): ApiError {
    const left = Math.max(0, this.entitled);
    const why =
      this.cap.exhausted ??
      (left > 0
        ? `the account's evaluation allowance has ${left.toFixed(1)} s left, less than this work needs`
        : `the account's entitlements are used up by the work in progress`);
    return ApiError.of(this.family, 'entitlement_exhausted', `${why}; ask the operator for more (sprachrohr entitlements add or top-up)`);
  }

  private exhausted(wanted: number): ApiError {
    // Perhaps only this instance's claim ran out: the owner claims more for the next draw.
    this.owner.drew(this);
    const left = Math.floor(this.available);
    return ApiError.of(
      this.family,
      'rate_limited',
      `the daily audio budget of ${this.limit} s for this key is used up (${left} s left, ${Math.ceil(wanted)} s more needed); it resets at midnight UTC`,
      { retryAfterSeconds: this.owner.secondsUntilReset() },
    );
  }
}
