/**
 * How metered audio is drawn from an account's entitlements (spec 2.9, 8), as pure functions
 * that every store applies inside the transaction that writes the ledger entry.
 *
 * Order: free minutes first (evaluation), then prepaid credit, then the commitment (trued up
 * afterwards, so it takes whatever is left); within a kind, the one that ends soonest first.
 * Audio beyond everything goes to the last entitlement in that order (a commitment's overage, or
 * the credit that work in progress finished on).
 *
 * An account without any entitlement is not capped (a deployment that sells nothing); an
 * account with entitlements can use only what they cover.
 */
import type { CreditRates, EntitlementRecord, UsageKind } from '../store/store.js';

/** The per-cent shares of a credit whose crossing sends a notice (spec 8). */
export const NOTICE_THRESHOLDS = [80, 95] as const;

const KIND_ORDER: Record<EntitlementRecord['kind'], number> = { evaluation: 0, credit: 1, committed: 2 };

/** Whether an entitlement can be drawn from at `at` for `direction`. */
function applies(entitlement: EntitlementRecord, direction: UsageKind['direction'], at: string): boolean {
  return (entitlement.direction === 'any' || entitlement.direction === direction) && (entitlement.validUntil === null || entitlement.validUntil > at);
}

/** The entitlements `direction` draws from at `at`, in drawing order. */
export function drawOrder(entitlements: readonly EntitlementRecord[], direction: UsageKind['direction'], at: string): EntitlementRecord[] {
  return entitlements
    .filter((entitlement) => applies(entitlement, direction, at))
    .sort((a, b) => KIND_ORDER[a.kind] - KIND_ORDER[b.kind] || (a.validUntil ?? '9999').localeCompare(b.validUntil ?? '9999') || a.id - b.id);
}

/** An entitlement's grant in its own unit (seconds, or credits for credit). */
export function grantOf(entitlement: EntitlementRecord): number {
  return (entitlement.kind === 'credit' ? entitlement.grantedCredits : entitlement.grantedSeconds) ?? 0;
}

/** What is left of an entitlement in its own unit, never below 0. */
export function remainingOf(entitlement: EntitlementRecord): number {
  return Math.max(0, grantOf(entitlement) - entitlement.used);
}

/** Units of an entitlement one audio second of `direction` costs. */
function unitsPerSecond(entitlement: EntitlementRecord, direction: UsageKind['direction'], rates: CreditRates): number {
  return entitlement.kind === 'credit' ? rates[direction] : 1;
}

/** One entitlement's share of a ledger entry, in the entitlement's unit. */
export interface Draw {
  readonly entitlement: EntitlementRecord;
  readonly amount: number;
}

/** How `seconds` of `direction` at `at` are drawn from `entitlements`; empty when none applies. */
export function planDraws(
  entitlements: readonly EntitlementRecord[],
  direction: UsageKind['direction'],
  seconds: number,
  rates: CreditRates,
  at: string,
): Draw[] {
  const ordered = drawOrder(entitlements, direction, at);
  const draws: Array<{ entitlement: EntitlementRecord; amount: number }> = [];
  let left = seconds;
  for (const entitlement of ordered) {
    if (left <= 0) break;
    const rate = unitsPerSecond(entitlement, direction, rates);
    const amount = Math.min(left * rate, remainingOf(entitlement));
    if (amount <= 0) continue;
    draws.push({ entitlement, amount });
    left -= amount / rate;
  }
  const last = ordered[ordered.length - 1];
  if (left > 1e-9 && last) {
    const overage = left * unitsPerSecond(last, direction, rates);
    const existing = draws.find((draw) => draw.entitlement === last);
    if (existing) existing.amount += overage;
    else draws.push({ entitlement: last, amount: overage });
  }
  return draws;
}

/** The per-cent thresholds a draw takes a credit across, not yet noticed. */
export function noticesCrossed(entitlement: EntitlementRecord, amount: number): number[] {
  const grant = grantOf(entitlement);
  if (entitlement.kind !== 'credit' || grant <= 0) return [];
  const after = ((entitlement.used + amount) / grant) * 100;
  return NOTICE_THRESHOLDS.filter((percent) => after >= percent && !entitlement.noticesSent.includes(percent));
}

/**
 * What an account may still use in one direction before its entitlements refuse (spec 2.9:
 * evaluation and hard credit refuse when used up; commitments and soft ones never do).
 */
export interface EntitlementCap {
  /** Audio seconds left; Infinity when nothing caps the direction. */
  readonly seconds: number;
  /**
   * Whether work is cut when it reaches the cap: an evaluation allowance is a hard cap, while
   * work in progress on credit completes (spec 2.9).
   */
  readonly cutsMidway: boolean;
  /** Why there is nothing left, for the refusal's detail; null while something is left. */
  readonly exhausted: string | null;
}

/** The cap of `direction` at `at` under `entitlements` (all of an account's, not removed). */
export function capOf(entitlements: readonly EntitlementRecord[], direction: UsageKind['direction'], rates: CreditRates, at: string): EntitlementCap {
  if (entitlements.length === 0) return { seconds: Number.POSITIVE_INFINITY, cutsMidway: false, exhausted: null };
  const ordered = drawOrder(entitlements, direction, at);
  if (ordered.some((entitlement) => entitlement.kind === 'committed' || entitlement.enforcement === 'soft')) {
    return { seconds: Number.POSITIVE_INFINITY, cutsMidway: false, exhausted: null };
  }
  const seconds = ordered.reduce((sum, entitlement) => sum + remainingOf(entitlement) / unitsPerSecond(entitlement, direction, rates), 0);
  const cutsMidway = !ordered.some((entitlement) => entitlement.kind === 'credit');
  let exhausted: string | null = null;
  if (ordered.length === 0) exhausted = `no entitlement of the account covers ${direction} now (expired, removed, or for the other direction)`;
  else if (seconds <= 0)
    exhausted = `the account's ${ordered.map((entitlement) => `${entitlement.kind} #${entitlement.id}`).join(', ')} ${ordered.length === 1 ? 'is' : 'are'} used up`;
  return { seconds, cutsMidway, exhausted };
}
