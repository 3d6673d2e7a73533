/**
 * {@link LimitCounters} in PostgreSQL, shared by every instance of a deployment: a key's
 * request rate, its calls per second and what it has in flight are counted once for all of
 * them. Each take is one statement whose row lock makes the decision exact: a bucket's row
 * (`rate_buckets`, refilled by the database's clock, so the instances' clocks do not matter)
 * or a limit's count (`slot_counts`) beside the share of each instance (`slot_holders`). The
 * share of an instance that died (its lock in `pg_locks` is gone) is given back by the next
 * sweep of any instance, every {@link SWEEP_MS}.
 */
import type pg from 'pg';
import type { BucketShape, LimitCounters, SlotRelease, TokenTake } from './limit-counters.js';
import { instanceAlive, type InstanceLock } from './postgres-instance-lock.js';

/** How often an instance gives back the slots of dead instances and retries its failed releases. */
const SWEEP_MS = 30_000;
/** The advisory lock ('SPRL', 1) one sweeping instance holds, so two never sweep at once. */
const SWEEP_LOCK = [0x5350524c, 1] as const;

/**
 * The level of the bucket row `b` now, by the database's clock: what it held plus what it
 * refilled since, up to its capacity; `shape` names where capacity and refill come from.
 */
function level(shape: 'b' | 'excluded'): string {
  return `LEAST(${shape}.capacity, b.tokens + GREATEST(0, extract(epoch FROM clock_timestamp() - b.updated_at)::float8) * ${shape}.refill_per_s)`;
}

const TAKE_TOKEN = `
  WITH took AS (
    INSERT INTO rate_buckets AS b (name, tokens, capacity, refill_per_s, updated_at)
    VALUES ($1, $2::float8 - 1, $2, $3, clock_timestamp())
    ON CONFLICT (name) DO UPDATE SET
      tokens = ${level('excluded')} - 1,
      capacity = excluded.capacity, refill_per_s = excluded.refill_per_s, updated_at = clock_timestamp()
    WHERE ${level('excluded')} >= 1
    RETURNING b.tokens
  )
  SELECT true AS taken, tokens FROM took
  UNION ALL
  SELECT false, ${level('b')} FROM rate_buckets b WHERE b.name = $1 AND NOT EXISTS (SELECT 1 FROM took)`;

// The count's row is locked first and the instance's share second, in every statement that
// touches both, so that no two statements wait for each other.
const TAKE_SLOT = `
  WITH counted AS (
    INSERT INTO slot_counts AS c (name, held) VALUES ($1, 1)
    ON CONFLICT (name) DO UPDATE SET held = c.held + 1 WHERE c.held < $2
    RETURNING c.held
  ), mine AS (
    INSERT INTO slot_holders AS h (name, instance, held) SELECT $1, $3, 1 FROM counted
    ON CONFLICT (name, instance) DO UPDATE SET held = h.held + 1
    RETURNING h.held
  )
  SELECT count(*)::int AS taken FROM mine`;

const RELEASE_SLOT = `
  WITH counted AS (
    UPDATE slot_counts SET held = held - 1
    WHERE name = $1 AND held > 0 AND EXISTS (SELECT 1 FROM slot_holders WHERE name = $1 AND instance = $2 AND held > 0)
    RETURNING 1
  )
  UPDATE slot_holders SET held = held - 1 WHERE name = $1 AND instance = $2 AND held > 0 AND EXISTS (SELECT 1 FROM counted)`;

const RETURN_DEAD_SHARES = `
  WITH dead AS (
    DELETE FROM slot_holders WHERE NOT ${instanceAlive('instance')} RETURNING name, held
  ), gone AS (
    SELECT name, sum(held)::int AS held FROM dead GROUP BY name
  )
  UPDATE slot_counts c SET held = GREATEST(0, c.held - gone.held) FROM gone WHERE c.name = gone.name`;

/** The counters of a deployment, in its database. */
export class PostgresLimitCounters implements LimitCounters {
  /** Releases that did not reach the database, tried again at each sweep. */
  private readonly unsent: { name: string; instance: number }[] = [];
  private sweeper: NodeJS.Timeout | null = null;

  /**
   * @param alsoSweep more of the deployment's tidying that runs in the same sweep (the budget
   *   claims of dead instances), inside its transaction
   */
  constructor(
    private readonly pool: pg.Pool,
    private readonly instance: InstanceLock,
    private readonly alsoSweep: readonly ((client: pg.PoolClient) => Promise<void>)[] = [],
    private readonly sweepMs = SWEEP_MS,
  ) {}

  async takeToken(name: string, shape: BucketShape): Promise<TokenTake> {
    const { rows } = await this.pool.query<{ taken: boolean; tokens: number }>(TAKE_TOKEN, [name, shape.capacity, shape.refillPerSecond]);
    const row = rows[0];
    // No row: refused by a bucket that a take at the same moment made, after this statement's snapshot.
    if (!row) return { taken: false, tokens: 0 };
    // A refusal's level is read a moment after the decision and may have refilled past one since.
    return { taken: row.taken, tokens: row.taken ? row.tokens : Math.min(row.tokens, 1 - Number.EPSILON) };
  }

  async takeSlot(name: string, limit: number): Promise<SlotRelease | null> {
    if (limit < 1) return null;
    const instance = await this.instance.number();
    const { rows } = await this.pool.query<{ taken: number }>(TAKE_SLOT, [name, limit, instance]);
    if (rows[0]?.taken !== 1) return null;
    this.sweeper ??= setInterval(() => void this.sweep().catch(() => undefined), this.sweepMs).unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      void this.release(name, instance);
    };
  }

  async slotsTaken(name: string): Promise<number> {
    const { rows } = await this.pool.query<{ held: number }>('SELECT held FROM slot_counts WHERE name = $1', [name]);
    return rows[0]?.held ?? 0;
  }

  /**
   * Gives back the slots of instances that died, sends the releases that failed, and forgets
   * full buckets and unused counts (and what `alsoSweep` tidies). Runs every {@link SWEEP_MS}
   * once a slot was taken; one instance at a time.
   */
  async sweep(): Promise<void> {
    for (const pending of this.unsent.splice(0)) await this.release(pending.name, pending.instance);
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1, $2) AS locked', [...SWEEP_LOCK]);
      if (rows[0]?.locked) {
        await client.query(RETURN_DEAD_SHARES);
        await client.query(`DELETE FROM rate_buckets b WHERE ${level('b')} >= b.capacity`);
        await client.query('DELETE FROM slot_holders WHERE held = 0');
        await client.query('DELETE FROM slot_counts WHERE held = 0');
        for (const sweep of this.alsoSweep) await sweep(client);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    } finally {
      client.release();
    }
  }

  /** Stops the sweeps (the store closes). */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  private async release(name: string, instance: number): Promise<void> {
    try {
      await this.pool.query(RELEASE_SLOT, [name, instance]);
    } catch {
      // The slot stays counted until the release gets through (the next sweep sends it again).
      this.unsent.push({ name, instance });
    }
  }
}
