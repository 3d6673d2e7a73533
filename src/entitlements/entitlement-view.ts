/** An entitlement as `GET /v1/usage` and the CLI show it (spec 2.9 `entitlements[]`). */
import type { EntitlementRecord } from '../store/store.js';
import { grantOf, remainingOf } from './draw-plan.js';

const thousandths = (value: number): number => Math.round(value * 1000) / 1000;

interface CommonView {
  readonly id: number;
  readonly kind: EntitlementRecord['kind'];
  readonly direction: EntitlementRecord['direction'];
  readonly valid_until: string | null;
  readonly enforcement: EntitlementRecord['enforcement'];
}

/** Seconds for evaluation and committed, credits for credit (spec 2.9). */
export type EntitlementView =
  | (CommonView & { readonly granted_seconds: number; readonly used_seconds: number; readonly remaining_seconds: number })
  | (CommonView & {
      readonly unit: 'credits';
      readonly granted_credits: number;
      readonly used_credits: number;
      readonly remaining_credits: number;
      readonly used_percent: number | null;
    });

/** The spec's view of an entitlement: used and remaining to the thousandth. */
export function entitlementView(entitlement: EntitlementRecord): EntitlementView {
  const common: CommonView = {
    id: entitlement.id,
    kind: entitlement.kind,
    direction: entitlement.direction,
    valid_until: entitlement.validUntil,
    enforcement: entitlement.enforcement,
  };
  const granted = grantOf(entitlement);
  if (entitlement.kind !== 'credit') {
    return { ...common, granted_seconds: granted, used_seconds: thousandths(entitlement.used), remaining_seconds: thousandths(remainingOf(entitlement)) };
  }
  return {
    ...common,
    unit: 'credits',
    granted_credits: granted,
    used_credits: thousandths(entitlement.used),
    remaining_credits: thousandths(remainingOf(entitlement)),
    used_percent: granted > 0 ? Math.min(100, Math.round((entitlement.used / granted) * 1000) / 10) : null,
  };
}
