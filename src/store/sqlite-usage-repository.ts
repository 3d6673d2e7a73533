import type Database from 'better-sqlite3';
import { noticesCrossed, planDraws } from '../entitlements/draw-plan.js';
import type { SqliteEntitlementRepository } from './sqlite-entitlement-repository.js';
import type { CreditRates, EntitlementNotice, LedgerEntry, RecordOutcome, UsageKind, UsageRepository, UsageSummaryRow, UsageTotals } from './store.js';
import { type LedgerRow, type SummaryRow, ledgerFromRow, summaryFromRow } from './store-rows.js';

/**
 * The ledger in SQLite: an entry per request id (`INSERT OR IGNORE`), and in the same
 * transaction the key's day totals in `usage_daily`, which the budget check reads on every
 * request (a sum over the day's entries would grow with the traffic), and for live traffic the
 * draws from the account's entitlements.
 */
export class SqliteUsageRepository implements UsageRepository {
  private readonly insertEntry;
  private readonly addToDay;
  private readonly totals;
  private readonly summaryRows;
  private readonly byRequestId;
  private readonly recordAll;
  private readonly insertDraw;

  constructor(
    db: Database.Database,
    private readonly entitlements: SqliteEntitlementRepository,
  ) {
    this.insertEntry = db.prepare(
      `INSERT OR IGNORE INTO usage_ledger (request_id, account_id, key_id, environment, direction, mode, recorded_at, audio_seconds)
       VALUES (@requestId, @accountId, @keyId, @environment, @direction, @mode, @recordedAt, @audioSeconds)`,
    );
    this.addToDay = db.prepare(
      `INSERT INTO usage_daily (key_id, environment, day, direction, mode, requests, audio_seconds)
       VALUES (@keyId, @environment, @day, @direction, @mode, 1, @audioSeconds)
       ON CONFLICT (key_id, day, direction, mode)
       DO UPDATE SET requests = requests + 1, audio_seconds = audio_seconds + excluded.audio_seconds`,
    );
    this.totals = db.prepare<[string, string, string], { requests: number | null; audio_seconds: number | null }>(
      `SELECT SUM(requests) AS requests, SUM(audio_seconds) AS audio_seconds
       FROM usage_daily WHERE key_id = ? AND day = ? AND direction = ?`,
    );
    this.summaryRows = db.prepare<[string, string, string], SummaryRow>(
      `SELECT substr(recorded_at, 1, 10) AS day, environment, direction, mode, SUM(requests) AS requests, SUM(audio_seconds) AS audio_seconds
       FROM usage_ledger WHERE account_id = ? AND recorded_at >= ? AND recorded_at < ?
       GROUP BY day, environment, direction, mode ORDER BY day, environment, direction, mode`,
    );
    this.byRequestId = db.prepare<[string], LedgerRow>('SELECT * FROM usage_ledger WHERE request_id = ?');
    this.insertDraw = db.prepare<[string, number, number]>('INSERT INTO entitlement_draws (request_id, entitlement_id, amount) VALUES (?, ?, ?)');
    this.recordAll = db.transaction((entry: LedgerEntry, rates: CreditRates): RecordOutcome => {
      if (this.insertEntry.run(entry).changes === 0) return { recorded: false, notices: [] };
      this.addToDay.run({ ...entry, day: entry.recordedAt.slice(0, 10) });
      if (entry.environment !== 'live') return { recorded: true, notices: [] };
      const notices: EntitlementNotice[] = [];
      const held = this.entitlements.activeOf(entry.accountId);
      for (const { entitlement, amount } of planDraws(held, entry.direction, entry.audioSeconds, rates, entry.recordedAt)) {
        this.insertDraw.run(entry.requestId, entitlement.id, amount);
        this.entitlements.draw(entitlement.id, amount);
        const crossed = noticesCrossed(entitlement, amount);
        if (crossed.length === 0) continue;
        const noticesSent = [...entitlement.noticesSent, ...crossed];
        this.entitlements.markNotices(entitlement.id, noticesSent);
        // One notice for the highest threshold crossed: a draw past 95 % says so once.
        notices.push({ entitlement: { ...entitlement, used: entitlement.used + amount, noticesSent }, percent: Math.max(...crossed) });
      }
      return { recorded: true, notices };
    });
  }

  async record(entry: LedgerEntry, rates: CreditRates): Promise<RecordOutcome> {
    return this.recordAll(entry, rates);
  }

  async dayTotals(keyId: string, day: string, direction: UsageKind['direction']): Promise<UsageTotals> {
    const row = this.totals.get(keyId, day, direction);
    return { requests: row?.requests ?? 0, audioSeconds: row?.audio_seconds ?? 0 };
  }

  async summary(accountId: string, from: string, to: string): Promise<UsageSummaryRow[]> {
    return this.summaryRows.all(accountId, from, to).map(summaryFromRow);
  }

  async findByRequestId(requestId: string): Promise<LedgerEntry | undefined> {
    const row = this.byRequestId.get(requestId);
    return row && ledgerFromRow(row);
  }
}
