/**
 * {@link BudgetClaims} in PostgreSQL (table `budget_claims`, a row per key, day, direction and
 * instance). A grow is one round trip of two statements in one implicit transaction: an
 * advisory lock on the slot, so grows for one slot take turns, then the grant computed from a
 * snapshot taken after the lock (the ledger's day totals and the claims of live instances, whose
 * locks are in `pg_locks`) and added to this instance's row. An instance records its work in
 * the ledger before it lowers its claim, so between the two the seconds count twice (and the
 * others are granted less), never not at all. The claims of an instance that died are not
 * counted; any instance's sweep removes their rows.
 */
import pg from 'pg';
import type { BudgetClaims, BudgetSlot } from './budget-claims.js';
import { instanceAlive, type InstanceLock } from './postgres-instance-lock.js';

/** The advisory lock namespace of budget slots ('SPRB'); the slot is hashed into the second key. */
const SLOT_LOCK_NAMESPACE = 0x53505242;

/** The claims of this instance, in the deployment's database. */
export class PostgresBudgetClaims implements BudgetClaims {
  constructor(
    private readonly pool: pg.Pool,
    private readonly instance: InstanceLock,
  ) {}

  async grow(slot: BudgetSlot, limit: number, wanted: number): Promise<number> {
    if (!(wanted > 0)) return 0;
    const instance = await this.instance.number();
    const [key, day, direction] = [slot.keyId, slot.day, slot.direction].map((value) => pg.escapeLiteral(value));
    // Literals, not parameters: the simple protocol runs both statements in one round trip and
    // one transaction, which holds the lock until the grant is written.
    const results = (await this.pool.query(`
      SELECT pg_advisory_xact_lock(${SLOT_LOCK_NAMESPACE}, hashtext(${key} || ' ' || ${day} || ' ' || ${direction}));
      WITH room AS (
        SELECT GREATEST(0, LEAST(${Number(wanted)}::float8, ${Number(limit)}::float8
          - COALESCE((SELECT sum(audio_seconds) FROM usage_daily WHERE key_id = ${key} AND day = ${day} AND direction = ${direction}), 0)
          - COALESCE((SELECT sum(seconds) FROM budget_claims
                      WHERE key_id = ${key} AND day = ${day} AND direction = ${direction} AND ${instanceAlive('instance')}), 0))) AS granted
      ), claimed AS (
        INSERT INTO budget_claims AS c (key_id, day, direction, instance, seconds)
        SELECT ${key}, ${day}, ${direction}, ${instance}, granted FROM room WHERE granted > 0
        ON CONFLICT (key_id, day, direction, instance) DO UPDATE SET seconds = c.seconds + excluded.seconds
      )
      SELECT granted FROM room`)) as unknown as pg.QueryResult<{ granted: number }>[];
    return results[1]?.rows[0]?.granted ?? 0;
  }

  async shrink(returns: readonly { readonly slot: BudgetSlot; readonly seconds: number }[]): Promise<void> {
    const given = returns.filter((entry) => entry.seconds > 0);
    if (given.length === 0) return;
    const instance = await this.instance.number();
    // One statement for every slot an instance gives back in a second.
    await this.pool.query(
      `UPDATE budget_claims c SET seconds = GREATEST(0, c.seconds - r.seconds)
       FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[]) AS r(key_id, day, direction, seconds)
       WHERE c.key_id = r.key_id AND c.day = r.day AND c.direction = r.direction AND c.instance = $5`,
      [
        given.map((entry) => entry.slot.keyId),
        given.map((entry) => entry.slot.day),
        given.map((entry) => entry.slot.direction),
        given.map((entry) => entry.seconds),
        instance,
      ],
    );
  }

  /** Removes the claims of instances that died, and the empty ones (the limit counters' sweep runs it). */
  async sweep(client: pg.PoolClient): Promise<void> {
    await client.query(`DELETE FROM budget_claims WHERE seconds = 0 OR NOT ${instanceAlive('instance')}`);
  }
}
