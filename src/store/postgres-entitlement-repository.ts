/** Entitlements in the PostgreSQL store (table `entitlements`, migration 1). */
import type pg from 'pg';
import type { EntitlementRecord, EntitlementRepository, NewEntitlement } from './store.js';
import { type EntitlementRow, entitlementFromRow } from './store-rows.js';

/** Anything that runs a query: the pool, or the connection of a transaction. */
type Queryable = Pick<pg.Pool, 'query'>;

/** Entitlements in PostgreSQL; the ledger's repository draws from them inside its own transactions. */
export class PostgresEntitlementRepository implements EntitlementRepository {
  constructor(private readonly pool: pg.Pool) {}

  async insert(entitlement: NewEntitlement): Promise<EntitlementRecord> {
    const { rows } = await this.pool.query<EntitlementRow>(
      `INSERT INTO entitlements (account_id, kind, direction, granted_seconds, granted_credits, valid_until, enforcement, created_at)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING *`,
      [
        entitlement.accountId,
        entitlement.kind,
        entitlement.direction,
        entitlement.grantedSeconds,
        entitlement.grantedCredits,
        entitlement.validUntil,
        entitlement.enforcement,
        entitlement.createdAt,
      ],
    );
    return entitlementFromRow(rows[0]!);
  }

  async findById(id: number): Promise<EntitlementRecord | undefined> {
    const { rows } = await this.pool.query<EntitlementRow>('SELECT * FROM entitlements WHERE id = $1 AND removed_at IS NULL', [id]);
    return rows[0] && entitlementFromRow(rows[0]);
  }

  async list(accountId: string): Promise<EntitlementRecord[]> {
    return this.activeOf(this.pool, accountId, false);
  }

  async topUp(id: number, credits: number): Promise<void> {
    await this.pool.query(`UPDATE entitlements SET granted_credits = granted_credits + $1 WHERE id = $2 AND kind = 'credit'`, [credits, id]);
  }

  async remove(id: number): Promise<boolean> {
    const result = await this.pool.query('UPDATE entitlements SET removed_at = $1 WHERE id = $2 AND removed_at IS NULL', [new Date().toISOString(), id]);
    return (result.rowCount ?? 0) > 0;
  }

  /**
   * The account's entitlements; with `lock`, their rows stay locked until the transaction of
   * `client` ends, so that two instances drawing for one account take turns and neither draws
   * from a use the other is changing.
   */
  async activeOf(client: Queryable, accountId: string, lock: boolean): Promise<EntitlementRecord[]> {
    const { rows } = await client.query<EntitlementRow>(
      `SELECT * FROM entitlements WHERE account_id = $1 AND removed_at IS NULL ORDER BY id${lock ? ' FOR UPDATE' : ''}`,
      [accountId],
    );
    return rows.map(entitlementFromRow);
  }

  /** Adds to an entitlement's use and writes the notices sent (inside a ledger transaction). */
  async draw(client: Queryable, id: number, amount: number, noticesSent: readonly number[]): Promise<void> {
    await client.query('UPDATE entitlements SET used = used + $1, notices_sent = $2 WHERE id = $3', [amount, JSON.stringify(noticesSent), id]);
  }
}
