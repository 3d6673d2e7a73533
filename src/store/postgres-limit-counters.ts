/**
 * {@link LimitCounters} in PostgreSQL, shared by every instance of a deployment: a key's
 * request rate, its calls per second and what it has in flight are counted once for all of
 * them. Each take is one statement whose row lock makes the decision exact: a bucket's row
 * (`rate_buckets`, refilled by the database's clock, so the instances' clocks do not matter)
 * or a limit's count (`slot_counts`) beside the share of each instance (`slot_holders`). The
 * share of an instance that died (its lock in `pg_locks` is gone) is given back by the next
 * sweep of any instance, every {@link SWEEP_MS}. Each instance also keeps its own shares in
 * memory: when its lock was lost for a while and is held again, it writes them back, since
 * another instance's sweep may have given them back meanwhile while its calls went on.
 *
 * Every statement or transaction that touches both tables locks the count's row before the
 * instance's share, and a transaction that locks several counts locks them in name order: so
 * none waits for another that waits for it.
 */
import { Semaphore } from 'async-mutex';
import type pg from 'pg';
import type { BucketShape, LimitCounters, SlotRelease, TokenTake } from './limit-counters.js';
import { instanceAlive, type InstanceLock } from './postgres-instance-lock.js';
import { inTransaction } from './postgres-transaction.js';

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

// `mine` reads `counted`, so the count's row is locked before the share's.
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

// The count's row is locked first; the share is lowered only if it is still there once that
// lock is held (a sweep may have given it back meanwhile), and the count only with it.
const RELEASE_SLOT = `
  WITH locked AS (
    SELECT 1 FROM slot_counts WHERE name = $1 FOR UPDATE
  ), mine AS (
    UPDATE slot_holders SET held = held - 1 WHERE name = $1 AND instance = $2 AND held > 0 AND EXISTS (SELECT 1 FROM locked)
    RETURNING 1
  )
  UPDATE slot_counts SET held = held - 1 WHERE name = $1 AND held > 0 AND EXISTS (SELECT 1 FROM mine)`;

/** Locks, in name order, every count the sweep may change: those dead instances hold shares of, and the empty ones. */
const LOCK_SWEPT_COUNTS = `
  SELECT name FROM slot_counts
  WHERE held = 0 OR name IN (SELECT name FROM slot_holders WHERE NOT ${instanceAlive('instance')})
  ORDER BY name FOR UPDATE`;

const RETURN_DEAD_SHARES = `
  WITH dead AS (
    DELETE FROM slot_holders WHERE NOT ${instanceAlive('instance')} RETURNING name, held
  ), gone AS (
    SELECT name, sum(held)::int AS held FROM dead GROUP BY name
  )
  UPDATE slot_counts c SET held = GREATEST(0, c.held - gone.held) FROM gone WHERE c.name = gone.name`;

/** This instance's shares as the database has them. */
const SHARES_OF = 'SELECT name, held FROM slot_holders WHERE instance = $1';

/** Locks, in name order, the counts of the names given. */
const LOCK_COUNTS = 'SELECT name FROM slot_counts WHERE name = ANY($1::text[]) ORDER BY name FOR UPDATE';

/** Moves each count given by the change in this instance's share. */
const MOVE_COUNTS = `
  UPDATE slot_counts c SET held = GREATEST(0, c.held + d.delta)
  FROM unnest($1::text[], $2::int[]) AS d(name, delta) WHERE c.name = d.name`;

/** Adds the counts that are missing (a sweep removed them once they were empty). */
const ADD_COUNTS = `
  INSERT INTO slot_counts (name, held)
  SELECT name, delta FROM unnest($1::text[], $2::int[]) AS d(name, delta) WHERE delta > 0
  ON CONFLICT (name) DO NOTHING`;

/** Sets this instance's shares. */
const SET_SHARES = `
  INSERT INTO slot_holders AS h (name, instance, held)
  SELECT name, $3, held FROM unnest($1::text[], $2::int[]) AS m(name, held)
  ON CONFLICT (name, instance) DO UPDATE SET held = excluded.held`;

/** Weight of the write-back in {@link PostgresLimitCounters}'s turns: more than every take and release at once. */
const ALONE = 1_000_000;

/** The counters of a deployment, in its database. */
export class PostgresLimitCounters implements LimitCounters {
  /** Releases that did not reach the database, tried again at each sweep. */
  private readonly unsent: string[] = [];
  /** This instance's slots in use, by name: what its shares in the database should be. */
  private readonly holding = new Map<string, number>();
  /** Takes and releases run side by side; writing the shares back waits for them and runs alone. */
  private readonly turns = new Semaphore(ALONE);
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
  ) {
    instance.onRetaken(() => this.writeBackShares());
  }

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
    const taken = await this.turns.runExclusive(async () => {
      const { rows } = await this.pool.query<{ taken: number }>(TAKE_SLOT, [name, limit, instance]);
      if (rows[0]?.taken !== 1) return false;
      this.holding.set(name, (this.holding.get(name) ?? 0) + 1);
      return true;
    }, 1);
    if (!taken) return null;
    this.sweeper ??= setInterval(() => void this.sweep().catch(() => undefined), this.sweepMs).unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      void this.release(name);
    };
  }

  async slotsTaken(name: string): Promise<number> {
    const { rows } = await this.pool.query<{ held: number }>('SELECT held FROM slot_counts WHERE name = $1', [name]);
    return rows[0]?.held ?? 0;
  }

  /**
   * Gives back the slots of instances that died, sends the releases that failed, and forgets
   * full buckets and unused counts (and what `alsoSweep` tidies). Runs every
   * {@link SWEEP_MS} once a slot was taken; one instance at a time.
   */
  async sweep(): Promise<void> {
    for (const name of this.unsent.splice(0)) await this.release(name, false);
    await inTransaction(this.pool, async (client) => {
      const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_xact_lock($1, $2) AS locked', [...SWEEP_LOCK]);
      if (!rows[0]?.locked) return;
      await client.query(LOCK_SWEPT_COUNTS);
      await client.query(RETURN_DEAD_SHARES);
      await client.query('DELETE FROM slot_counts WHERE held = 0');
      await client.query('DELETE FROM slot_holders WHERE held = 0');
      await client.query(`DELETE FROM rate_buckets b WHERE ${level('b')} >= b.capacity`);
      for (const sweep of this.alsoSweep) await sweep(client);
    });
  }

  /** Stops the sweeps (the store closes). */
  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
  }

  /** Gives back one slot of `name`; `counted` is false when {@link holding} already lost it (a release sent again). */
  private async release(name: string, counted = true): Promise<void> {
    await this.turns.runExclusive(async () => {
      if (counted) {
        const left = (this.holding.get(name) ?? 1) - 1;
        if (left > 0) this.holding.set(name, left);
        else this.holding.delete(name);
      }
      try {
        await this.pool.query(RELEASE_SLOT, [name, await this.instance.number()]);
      } catch {
        // The slot stays counted until the release gets through (the next sweep sends it again).
        this.unsent.push(name);
      }
    }, 1);
  }

  /**
   * Makes this instance's shares in the database what it holds, and moves each count by the
   * difference: after the lock was away, a sweep elsewhere may have given the shares back, and
   * releases that failed are settled here too. Runs alone, between takes and releases.
   */
  private async writeBackShares(): Promise<void> {
    await this.turns.runExclusive(async () => {
      const instance = await this.instance.number();
      await inTransaction(this.pool, async (client) => {
        const storedShares = async () =>
          new Map((await client.query<{ name: string; held: number }>(SHARES_OF, [instance])).rows.map((row) => [row.name, row.held]));
        const names = new Set([...this.holding.keys(), ...(await storedShares()).keys()]);
        const shares = [...names].sort().map((name) => ({ name, held: this.holding.get(name) ?? 0 }));
        const list = shares.map((share) => share.name);
        await client.query(LOCK_COUNTS, [list]);
        // Read again under the locks: a sweep that began before the lock was held again may have
        // given the shares back since (it locks the same counts, so it has committed by now).
        const before = await storedShares();
        const deltas = shares.map(({ name, held }) => held - (before.get(name) ?? 0));
        await client.query(MOVE_COUNTS, [list, deltas]);
        await client.query(ADD_COUNTS, [list, deltas]);
        await client.query(SET_SHARES, [list, shares.map((share) => share.held), instance]);
      });
      this.unsent.length = 0;
    }, ALONE);
  }
}
