/**
 * This instance's claims on keys' daily budgets, when instances share a store
 * ({@link BudgetClaims}): the usage meter lets its leases draw only within what the instance
 * has claimed. Claims are taken a minute of audio at a time, topped up in the background when
 * less than half a minute is left, lowered once the work is in the ledger (gathered, once a
 * second) and given back when a key has had no work in progress for five seconds.
 */
import type { BudgetClaims, BudgetSlot } from '../store/budget-claims.js';

/** Seconds claimed at a time. */
export const CLAIM_CHUNK_SECONDS = 60;
/** Below this much claimed and not drawn, more is claimed in the background. */
const LOW_WATER_SECONDS = 30;
/** How long draws do not ask for more after the budget granted less than asked. */
const SPENT_PAUSE_MS = 1000;

/** When claims go back to the database (tests shorten them). */
export interface ClaimTiming {
  /** A key's claim is given back after this long without work in progress. */
  readonly idleReturnMs: number;
  /** How often what the ledger now holds is taken off the claims in the database. */
  readonly shrinkEveryMs: number;
}

/** Five seconds idle, returns gathered for a second. */
const CLAIM_TIMING: ClaimTiming = { idleReturnMs: 5000, shrinkEveryMs: 1000 };

interface SlotClaim {
  readonly slot: BudgetSlot;
  readonly limit: number;
  /** Seconds this instance may draw for the slot's work in progress, as far as it knows. */
  claimed: number;
  /** Seconds to take off the database's row (recorded or given back), not sent yet. */
  toReturn: number;
  growing: Promise<void> | null;
  idle: NodeJS.Timeout | null;
  /** After a grow that got less than it asked for, draws do not ask again before this (`performance.now()`). */
  spentUntil: number;
  /** Whether the slot has open leases (claims of an idle slot go back after a while). */
  active: boolean;
}

/** The claims of one instance, by budget slot. */
export class InstanceClaims {
  private readonly slots = new Map<string, SlotClaim>();
  private shrinker: NodeJS.Timeout | null = null;

  constructor(
    private readonly claims: BudgetClaims,
    private readonly timing: ClaimTiming = CLAIM_TIMING,
  ) {}

  /** Seconds claimed for `slot` beyond `drawn`, what its open leases have drawn together. */
  left(slot: BudgetSlot, drawn: number): number {
    return (this.slots.get(nameOf(slot))?.claimed ?? 0) - drawn;
  }

  /**
   * Claims until `needed` seconds are left beyond `drawn` (and a little more), or the budget
   * has nothing more to grant. Waits for the database.
   */
  async ensure(slot: BudgetSlot, limit: number, drawn: number, needed: number): Promise<void> {
    const claim = this.claimOf(slot, limit);
    this.busy(slot);
    for (let attempt = 0; attempt < 3 && claim.claimed - drawn < needed; attempt++) {
      if (claim.growing) {
        await claim.growing;
        continue;
      }
      const before = claim.claimed;
      await this.grow(claim, Math.max(CLAIM_CHUNK_SECONDS, needed - (claim.claimed - drawn) + LOW_WATER_SECONDS));
      if (claim.claimed === before) return;
    }
  }

  /** Claims more in the background when little is left beyond `drawn`. */
  topUp(slot: BudgetSlot, limit: number, drawn: number): void {
    const claim = this.claimOf(slot, limit);
    this.busy(slot);
    if (claim.growing || claim.claimed - drawn >= LOW_WATER_SECONDS || performance.now() < claim.spentUntil) return;
    // A failed top-up is tried again at the next draw; the leases draw within what is claimed meanwhile.
    void this.grow(claim, CLAIM_CHUNK_SECONDS).catch(() => undefined);
  }

  /**
   * Work of `slot` went into the ledger (`recording` settles once it is there): the claim is
   * lowered here at once, and in the database only once the ledger holds it, so the seconds
   * are never counted nowhere.
   */
  recorded(slot: BudgetSlot, seconds: number, recording: Promise<unknown>): void {
    const claim = this.slots.get(nameOf(slot));
    if (!claim || seconds <= 0) return;
    const taken = Math.min(seconds, claim.claimed);
    claim.claimed -= taken;
    void recording.finally(() => this.giveBack(claim, taken)).catch(() => undefined);
  }

  /** The slot has work in progress again: its claim stays. */
  busy(slot: BudgetSlot): void {
    const claim = this.slots.get(nameOf(slot));
    if (!claim) return;
    claim.active = true;
    if (claim.idle) clearTimeout(claim.idle);
    claim.idle = null;
  }

  /** The slot's last open lease ended: its claim is given back unless work comes again soon. */
  quiet(slot: BudgetSlot): void {
    const claim = this.slots.get(nameOf(slot));
    if (!claim) return;
    claim.active = false;
    if (claim.idle) return;
    claim.idle = setTimeout(() => {
      claim.idle = null;
      if (claim.active) return;
      // A claim still being granted is given back once it is there.
      if (claim.growing) {
        void claim.growing.finally(() => this.quiet(slot)).catch(() => undefined);
        return;
      }
      this.giveBack(claim, claim.claimed);
      claim.claimed = 0;
    }, this.timing.idleReturnMs).unref();
  }

  private claimOf(slot: BudgetSlot, limit: number): SlotClaim {
    const name = nameOf(slot);
    let claim = this.slots.get(name);
    if (!claim) this.slots.set(name, (claim = { slot, limit, claimed: 0, toReturn: 0, growing: null, idle: null, spentUntil: 0, active: false }));
    return claim;
  }

  private grow(claim: SlotClaim, wanted: number): Promise<void> {
    claim.growing = this.claims
      .grow(claim.slot, claim.limit, wanted)
      .then((granted) => {
        claim.claimed += granted;
        // The budget is nearly spent: a lease drawing every frame must not ask every frame.
        if (granted < wanted) claim.spentUntil = performance.now() + SPENT_PAUSE_MS;
      })
      .finally(() => {
        claim.growing = null;
      });
    return claim.growing;
  }

  private giveBack(claim: SlotClaim, seconds: number): void {
    if (seconds <= 0) return;
    // The slot may have been forgotten (or made anew) since: the seconds go with whatever stands for it now.
    const name = nameOf(claim.slot);
    const current = this.slots.get(name) ?? claim;
    this.slots.set(name, current);
    current.toReturn += seconds;
    this.shrinker ??= setTimeout(() => void this.sendReturns(), this.timing.shrinkEveryMs).unref();
  }

  private async sendReturns(): Promise<void> {
    this.shrinker = null;
    const sending = [...this.slots.values()].filter((claim) => claim.toReturn > 0).map((claim) => ({ claim, seconds: claim.toReturn }));
    for (const { claim } of sending) claim.toReturn = 0;
    try {
      await this.claims.shrink(sending.map(({ claim, seconds }) => ({ slot: claim.slot, seconds })));
    } catch {
      // Sent again with the next returns: until then the others are granted less, never more.
      for (const { claim, seconds } of sending) this.giveBack(claim, seconds);
    }
    for (const [name, claim] of this.slots) {
      if (claim.claimed <= 0 && claim.toReturn === 0 && !claim.growing && !claim.idle && !claim.active) this.slots.delete(name);
    }
  }
}

function nameOf(slot: BudgetSlot): string {
  return `${slot.keyId}\u0000${slot.day}\u0000${slot.direction}`;
}
