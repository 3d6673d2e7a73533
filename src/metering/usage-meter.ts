import type { Principal } from '../auth/authenticate.js';
import { ApiError, type ErrorFamily } from '../errors.js';
import type { UsageKind, UsageRepository } from '../store/store.js';

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
 * whose budget is spent gets 429 `*.rate_limited` until midnight UTC. Sandbox keys have their
 * own budget and are recorded as unbilled sandbox traffic.
 */
export class UsageMeter {
  constructor(
    private readonly usage: UsageRepository,
    private readonly budgets: DailyBudgets,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** Today's use of a key in one direction. */
  async today(principal: Principal, direction: UsageKind['direction']): Promise<DayUsage> {
    const totals = await this.usage.dayTotals(principal.keyId, utcDay(this.now()), direction);
    const limit = this.budgets[principal.environment];
    const used = Math.ceil(totals.audioSeconds);
    return { used, limit, available: Math.max(0, limit - used) };
  }

  /** @throws ApiError `*.rate_limited` when the key's daily audio budget is spent. */
  async assertBudget(principal: Principal, direction: UsageKind['direction'], family: ErrorFamily): Promise<void> {
    const day = await this.today(principal, direction);
    if (day.available > 0) return;
    const wait = secondsUntilUtcMidnight(this.now());
    throw ApiError.of(family, 'rate_limited', `the daily audio budget of ${day.limit} s for this key is used up; it resets at midnight UTC`, {
      retryAfterSeconds: wait,
    });
  }

  /** Records one successful request. */
  async record(principal: Principal, kind: UsageKind, audioSeconds: number): Promise<void> {
    await this.usage.record({
      keyId: principal.keyId,
      environment: principal.environment,
      day: utcDay(this.now()),
      direction: kind.direction,
      mode: kind.mode,
      audioSeconds,
    });
  }
}
