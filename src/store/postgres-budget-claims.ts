/**
 * {@link BudgetClaims} in PostgreSQL (table `budget_claims`, a row per key, day, direction and
 * instance). A grow is one round trip of two statements in one implicit transaction: an
 * advisory lock on the slot, so grows for one slot take turns, then the grant computed from a
 * snapshot taken after the lock (the ledger's day totals and the claims of live instances, whose
 * locks are in `pg_locks`) and added to this instance's row. An instance records its work in
 * the ledger before it lowers its claim, so between the two the seconds count twice (and the
 * others are granted less), never not at all. The claims of an instance that died are not
 * counted; any instance's sweep removes their rows. Each instance keeps its own claims in
 * memory too, and writes them back when its lock is held again after a loss: meanwhile
 * another instance's sweep may have removed them while its calls and sessions went on.
 */
import { Semaphore } from 'async-mutex';
import pg from 'pg';
import type { BudgetClaims, BudgetSlot } from './budget-claims.js';
import { instanceAlive, type InstanceLock } from './postgres-instance-lock.js';
import { inTransaction } from './postgres-transaction.js';

/** The advisory lock namespace of budget slots ('SPRB'); the slot is hashed into the second key. */
const SLOT_LOCK_NAMESPACE = 0x53505242;
/** Weight of the write-back in the claims' turns: more than every grow and shrink at once. */
const ALONE = 1_000_000;

/** The SQL expression of a slot's advisory lock key, from three SQL text expressions. */
function slotLockKey(key: string, day: string, direction: string): string {
  return `hashtext(${key} || ' ' || ${day} || ' ' || ${direction})`;
}

/** Where a slot's claim is kept in memory. */
function slotName(slot: BudgetSlot): string {
  return `${slot.keyId} ${slot.day} ${slot.direction}`;
}

/** The claims of this instance, in the deployment's database. */
export class PostgresBudgetClaims implements BudgetClaims {
  /** This instance's claims, by slot: what its rows in the database should hold. */
  private readonly holding = new Map<string, { slot: BudgetSlot; seconds: number }>();
  /** Grows and shrinks run side by side; writing the claims back waits for them and runs alone. */
  private readonly turns = new Semaphore(ALONE);

  constructor(
    private readonly pool: pg.Pool,
    private readonly instance: InstanceLock,
  ) {
    instance.onRetaken(() => this.writeBack());
  }

  async grow(slot: BudgetSlot, limit: number, wanted: number): Promise<number> {
    if (!(wanted > 0)) return 0;
    const instance = await this.instance.number();
    return await this.turns.runExclusive(async () => {
      const granted = await this.claim(slot, limit, wanted, instance);
      if (granted > 0) this.hold(slot, granted);
      return granted;
    }, 1);
  }

  async shrink(returns: readonly { readonly slot: BudgetSlot; readonly seconds: number }[]): Promise<void> {
    const given = returns.filter((entry) => entry.seconds > 0);
    if (given.length === 0) return;
    const instance = await this.instance.number();
    await this.turns.runExclusive(async () => {
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
      for (const entry of given) this.hold(entry.slot, -entry.seconds);
    }, 1);
  }

  /** Removes the claims of instances that died, and the empty ones (the limit counters' sweep runs it). */
  async sweep(client: pg.PoolClient): Promise<void> {
    await client.query(`DELETE FROM budget_claims WHERE seconds = 0 OR NOT ${instanceAlive('instance')}`);
  }

  /** Adds `seconds` (less when negative) to what this instance holds of `slot`. */
  private hold(slot: BudgetSlot, seconds: number): void {
    const name = slotName(slot);
    const left = (this.holding.get(name)?.seconds ?? 0) + seconds;
    if (left > 1e-9) this.holding.set(name, { slot, seconds: left });
    else this.holding.delete(name);
  }

  /**
   * Writes this instance's claims back as it holds them, each under its slot's lock so that no
   * grant elsewhere is computed without them; runs alone, between grows and shrinks.
   */
  private async writeBack(): Promise<void> {
    await this.turns.runExclusive(async () => {
      const instance = await this.instance.number();
      const claims = [...this.holding.values()].sort((a, b) => (slotName(a.slot) < slotName(b.slot) ? -1 : 1));
      await inTransaction(this.pool, async (client) => {
        await client.query(
          `SELECT pg_advisory_xact_lock(${SLOT_LOCK_NAMESPACE}, ${slotLockKey('k', 'd', 'r')})
           FROM unnest($1::text[], $2::text[], $3::text[]) WITH ORDINALITY AS s(k, d, r, n) ORDER BY n`,
          [claims.map((claim) => claim.slot.keyId), claims.map((claim) => claim.slot.day), claims.map((claim) => claim.slot.direction)],
        );
        await client.query('DELETE FROM budget_claims WHERE instance = $1', [instance]);
        await client.query(
          `INSERT INTO budget_claims (key_id, day, direction, instance, seconds)
           SELECT k, d, r, $5, s FROM unnest($1::text[], $2::text[], $3::text[], $4::float8[]) AS c(k, d, r, s)`,
          [
            claims.map((claim) => claim.slot.keyId),
            claims.map((claim) => claim.slot.day),
            claims.map((claim) => claim.slot.direction),
            claims.map((claim) => claim.seconds),
            instance,
          ],
        );
      });
    }, ALONE);
  }

  /** The grant for one grow, added to this instance's row. */
  private async claim(slot: BudgetSlot, limit: number, wanted: number, instance: number): Promise<number> {
    const key = pg.escapeLiteral(slot.keyId);
    const day = pg.escapeLiteral(slot.day);
    const direction = pg.escapeLiteral(slot.direction);
    // Literals, not parameters: the simple protocol runs both statements in one round trip and
    // one transaction, which holds the lock until the grant is written.
    const results = (await this.pool.query(`
      SELECT pg_advisory_xact_lock(${SLOT_LOCK_NAMESPACE}, ${slotLockKey(key, day, direction)});
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
}
