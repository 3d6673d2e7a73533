/** The metering ledger in the PostgreSQL store (tables `usage_ledger`, `usage_daily`, `entitlement_draws`). */
import { randomInt } from 'node:crypto';
import type pg from 'pg';
import { noticesCrossed, planDraws } from '../entitlements/draw-plan.js';
import type { PostgresEntitlementRepository } from './postgres-entitlement-repository.js';
import { inTransaction } from './postgres-transaction.js';
import type { CreditRates, EntitlementNotice, LedgerEntry, RecordOutcome, UsageKind, UsageRepository, UsageSummaryRow, UsageTotals } from './store.js';
import { type LedgerRow, type SummaryRow, ledgerFromRow, summaryFromRow } from './store-rows.js';

/** Rows a key's day totals are spread over (migration 6): what one key records at once does not wait for one row. */
const DAY_TOTAL_SHARDS = 16;

/**
 * The ledger in PostgreSQL, as in the embedded store: an entry per request id, the key's day
 * totals beside it, and for live traffic the draws from the account's entitlements, all in one
 * transaction. The account's entitlement rows are locked for it, so instances that record for
 * the same account at once take turns and every draw sees the use before it.
 */
export class PostgresUsageRepository implements UsageRepository {
  constructor(
    private readonly pool: pg.Pool,
    private readonly entitlements: PostgresEntitlementRepository,
  ) {}

  async record(entry: LedgerEntry, rates: CreditRates): Promise<RecordOutcome> {
    return inTransaction(this.pool, async (client) => {
      const inserted = await client.query(
        `INSERT INTO usage_ledger (request_id, account_id, key_id, environment, direction, mode, recorded_at, audio_seconds)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (request_id) DO NOTHING`,
        [entry.requestId, entry.accountId, entry.keyId, entry.environment, entry.direction, entry.mode, entry.recordedAt, entry.audioSeconds],
      );
      if (inserted.rowCount === 0) return { recorded: false, notices: [] };
      await client.query(
        `INSERT INTO usage_daily (key_id, environment, day, direction, mode, shard, requests, audio_seconds) VALUES ($1, $2, $3, $4, $5, $7, 1, $6)
         ON CONFLICT (key_id, day, direction, mode, shard)
         DO UPDATE SET requests = usage_daily.requests + 1, audio_seconds = usage_daily.audio_seconds + excluded.audio_seconds`,
        // One of the key's DAY_TOTAL_SHARDS rows, so that entries of one key recorded at once do not queue for one row.
        [entry.keyId, entry.environment, entry.recordedAt.slice(0, 10), entry.direction, entry.mode, entry.audioSeconds, randomInt(DAY_TOTAL_SHARDS)],
      );
      if (entry.environment !== 'live') return { recorded: true, notices: [] };
      const notices: EntitlementNotice[] = [];
      const held = await this.entitlements.activeOf(client, entry.accountId, true);
      for (const { entitlement, amount } of planDraws(held, entry.direction, entry.audioSeconds, rates, entry.recordedAt)) {
        await client.query('INSERT INTO entitlement_draws (request_id, entitlement_id, amount) VALUES ($1, $2, $3)', [entry.requestId, entitlement.id, amount]);
        const crossed = noticesCrossed(entitlement, amount);
        const noticesSent = [...entitlement.noticesSent, ...crossed];
        await this.entitlements.draw(client, entitlement.id, amount, noticesSent);
        // One notice for the highest threshold crossed: a draw past 95 % says so once.
        if (crossed.length > 0) notices.push({ entitlement: { ...entitlement, used: entitlement.used + amount, noticesSent }, percent: Math.max(...crossed) });
      }
      return { recorded: true, notices };
    });
  }

  async dayTotals(keyId: string, day: string, direction: UsageKind['direction']): Promise<UsageTotals> {
    const { rows } = await this.pool.query<{ requests: number; audio_seconds: number }>(
      `SELECT COALESCE(SUM(requests), 0)::float8 AS requests, COALESCE(SUM(audio_seconds), 0)::float8 AS audio_seconds
       FROM usage_daily WHERE key_id = $1 AND day = $2 AND direction = $3`,
      [keyId, day, direction],
    );
    return { requests: rows[0]?.requests ?? 0, audioSeconds: rows[0]?.audio_seconds ?? 0 };
  }

  async summary(accountId: string, from: string, to: string): Promise<UsageSummaryRow[]> {
    const { rows } = await this.pool.query<SummaryRow>(
      `SELECT substr(recorded_at, 1, 10) AS day, environment, direction, mode, SUM(requests)::float8 AS requests, SUM(audio_seconds)::float8 AS audio_seconds
       FROM usage_ledger WHERE account_id = $1 AND recorded_at >= $2 AND recorded_at < $3
       GROUP BY 1, environment, direction, mode ORDER BY 1, environment, direction, mode`,
      [accountId, from, to],
    );
    return rows.map(summaryFromRow);
  }

  async findByRequestId(requestId: string): Promise<LedgerEntry | undefined> {
    const { rows } = await this.pool.query<LedgerRow>('SELECT * FROM usage_ledger WHERE request_id = $1', [requestId]);
    const row = rows[0];
    return row && ledgerFromRow(row);
  }
}
