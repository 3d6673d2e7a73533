/**
 * The parts of keys' daily audio budgets that instances of a shared deployment hold for their
 * work in progress. An instance draws only within what it has claimed, and a claim is granted
 * only while the day's recorded audio and every live instance's claims together stay within
 * the budget: so two instances under one key never draw more than one could.
 */
import type { UsageKind } from './store.js';

/** One key's budget on one UTC day in one direction. */
export interface BudgetSlot {
  readonly keyId: string;
  /** `YYYY-MM-DD`, UTC. */
  readonly day: string;
  readonly direction: UsageKind['direction'];
}

/** This instance's claims, kept where every instance sees them. */
export interface BudgetClaims {
  /**
   * Raises this instance's claim on `slot` by up to `wanted` seconds: as much as `limit` leaves
   * after the slot's recorded audio (the ledger's day totals) and every live instance's claims.
   * @returns the seconds granted, from 0 to `wanted`
   */
  grow(slot: BudgetSlot, limit: number, wanted: number): Promise<number>;
  /** Lowers this instance's claims, each slot's by its `seconds` (recorded in the ledger since, or no longer needed), at once. */
  shrink(returns: readonly { readonly slot: BudgetSlot; readonly seconds: number }[]): Promise<void>;
}
