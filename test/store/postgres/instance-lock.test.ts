/**
 * An instance's lock and what hangs on it, against a real PostgreSQL (a cluster the test makes
 * on a loopback port): when the lock's connection is cut (here by `pg_terminate_backend`, as a
 * database restart or a dropped network does), the instance takes the same number again; while
 * it was away another instance's sweep gave its slots and budget claims back, and once the lock
 * is held again the instance writes back what it still holds, no more (a slot released
 * meanwhile stays released), also after the database crashed and its recovery emptied the
 * unlogged tables. Also the sweep's lock order: a sweep and a statement that locks a
 * count before a share wait for each other in turn, never in a circle.
 */
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { INSTANCE_LOCK_NAMESPACE } from '../../../src/store/postgres-instance-lock.js';
import { PostgresStore } from '../../../src/store/postgres-store.js';
import { eventuallyAsync } from '../../helpers/eventually.js';
import { postgresMissing, startPostgres, type PostgresRun, testPool } from '../../helpers/postgres.js';

const missing = postgresMissing();
if (missing) console.warn(`PostgreSQL instance lock tests skipped: ${missing}`);

let server: PostgresRun | null = null;
let databases = 0;

async function freshDatabase(): Promise<string> {
  server ??= await startPostgres();
  return server.createDatabase(`lock_${process.pid}_${databases++}`);
}

afterAll(async () => {
  await server?.stop();
});

/** The backends that hold instance lock `number` now. */
async function holders(admin: pg.Pool, number: number): Promise<number[]> {
  const { rows } = await admin.query<{ pid: number }>(
    `SELECT pid FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2 AND classid = $1::oid AND objid = $2::oid`,
    [INSTANCE_LOCK_NAMESPACE, number],
  );
  return rows.map((row) => row.pid);
}

/** Cuts the connection that holds instance lock `number`, and waits until the database has let the lock go. */
async function cutLock(admin: pg.Pool, number: number): Promise<number> {
  const [pid] = await holders(admin, number);
  expect(pid).toBeDefined();
  await admin.query('SELECT pg_terminate_backend($1)', [pid]);
  await eventuallyAsync(async () => !(await holders(admin, number)).includes(pid!), 5000, 'the lock to go with its connection');
  return pid!;
}

const DAY = new Date().toISOString().slice(0, 10);

describe.skipIf(missing)("an instance's lock in PostgreSQL", () => {
  it('is taken again under the same number when its connection is cut', async () => {
    const url = await freshDatabase();
    const admin = testPool(url);
    const store = await PostgresStore.open(url, 100);
    try {
      const number = await store.limits['instance'].number();
      const cut = await cutLock(admin, number);
      await eventuallyAsync(async () => (await holders(admin, number)).length === 1, 5000, 'the lock to be held again');
      expect(await holders(admin, number)).not.toContain(cut);
      expect(await store.limits['instance'].number()).toBe(number);
    } finally {
      await store.close();
      await admin.end();
    }
  });

  it('waits while another connection holds the number (the old one, alive on the database side), then takes it', async () => {
    const url = await freshDatabase();
    const admin = testPool(url);
    // The first try comes a second after the cut: time for the ghost to take the number first.
    const store = await PostgresStore.open(url, 1000);
    const ghost = await admin.connect();
    try {
      const lock = store.limits['instance'];
      const number = await lock.number();
      await cutLock(admin, number);
      const taken = await ghost.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS taken', [INSTANCE_LOCK_NAMESPACE, number]);
      expect(taken.rows[0]?.taken).toBe(true);
      // The try a second after the cut meets the ghost's lock.
      await new Promise((resolve) => setTimeout(resolve, 2200));
      expect(lock.held).toBe(false);
      expect(await holders(admin, number)).toHaveLength(1);
      await ghost.query('SELECT pg_advisory_unlock($1, $2)', [INSTANCE_LOCK_NAMESPACE, number]);
      // The next try, three seconds after the cut.
      await eventuallyAsync(async () => lock.held && (await holders(admin, number)).length === 1, 8000, 'the lock to be held again');
    } finally {
      ghost.release();
      await store.close();
      await admin.end();
    }
  });

  it('writes back the slots and budget claims still held, after a sweep elsewhere gave them back', async () => {
    const url = await freshDatabase();
    const admin = testPool(url);
    // A waits 1.5 s before it tries to take its lock again: time for B's sweep in between.
    const [a, b] = await Promise.all([PostgresStore.open(url, 1500), PostgresStore.open(url)]);
    try {
      const name = 'calls:live:key_w';
      const slot = { keyId: 'key_w', day: DAY, direction: 'tts' as const };
      const releases = [await a.limits.takeSlot(name, 3), await a.limits.takeSlot(name, 3)];
      expect(releases).not.toContain(null);
      expect(await a.budgetClaims.grow(slot, 100, 40)).toBe(40);
      const number = await a.limits['instance'].number();

      await cutLock(admin, number);
      await b.limits.sweep();
      // A looks dead: its share and its claim are gone.
      expect(await b.limits.slotsTaken(name)).toBe(0);
      expect((await admin.query('SELECT * FROM budget_claims WHERE instance = $1', [number])).rows).toHaveLength(0);
      // One of A's calls ends while its lock is away.
      releases[0]!();
      await eventuallyAsync(async () => (await b.limits.slotsTaken(name)) === 1, 8000, 'A to write back its one slot');
      await eventuallyAsync(
        async () => (await admin.query('SELECT seconds FROM budget_claims WHERE instance = $1', [number])).rows[0]?.seconds === 40,
        8000,
        'A to write back its claim',
      );

      // The limit and the budget count A's holdings again: B gets the two slots left, not three.
      expect(await b.limits.takeSlot(name, 3)).not.toBeNull();
      expect(await b.limits.takeSlot(name, 3)).not.toBeNull();
      expect(await b.limits.takeSlot(name, 3)).toBeNull();
      expect(await b.budgetClaims.grow(slot, 100, 100)).toBeCloseTo(60, 6);
      releases[1]!();
      await eventuallyAsync(async () => (await b.limits.slotsTaken(name)) === 2, 5000, "A's release after the write-back");
    } finally {
      await Promise.all([a.close(), b.close()]);
      await admin.end();
    }
  });

  it('writes back the slots and budget claims still held after the database crashed and forgot them', async () => {
    const url = await freshDatabase();
    const store = await PostgresStore.open(url, 100);
    try {
      const name = 'calls:live:key_c';
      const slot = { keyId: 'key_c', day: DAY, direction: 'stt' as const };
      const releases = [await store.limits.takeSlot(name, 5), await store.limits.takeSlot(name, 5), await store.limits.takeSlot(name, 5)];
      expect(releases).not.toContain(null);
      expect(await store.budgetClaims.grow(slot, 100, 25)).toBe(25);
      const number = await store.limits['instance'].number();
      // The unlogged tables are empty after the recovery; the instance puts back what it holds.
      await server!.crashAndRestart();
      const admin = testPool(url);
      try {
        await eventuallyAsync(async () => (await store.limits.slotsTaken(name).catch(() => -1)) === 3, 15_000, 'the slots to be written back');
        await eventuallyAsync(
          async () => (await admin.query('SELECT seconds FROM budget_claims WHERE instance = $1', [number])).rows[0]?.seconds === 25,
          15_000,
          'the claim to be written back',
        );
        expect(await holders(admin, number)).toHaveLength(1);
      } finally {
        await admin.end();
      }
      releases[0]!();
      await eventuallyAsync(async () => (await store.limits.slotsTaken(name)) === 2, 5000, 'a release after the write-back');
    } finally {
      await store.close();
    }
  });

  it('sweeps while a release holds the count and waits for the share, without a deadlock', async () => {
    const url = await freshDatabase();
    const admin = testPool(url);
    const store = await PostgresStore.open(url);
    const release = await admin.connect();
    try {
      // A count with a share of an instance that is gone (no lock holds number 7).
      await admin.query(`INSERT INTO slot_counts (name, held) VALUES ('calls:live:key_d', 2)`);
      await admin.query(`INSERT INTO slot_holders (name, instance, held) VALUES ('calls:live:key_d', 7, 2)`);
      // The order of every release: the count first …
      await release.query('BEGIN');
      await release.query(`UPDATE slot_counts SET held = held - 1 WHERE name = 'calls:live:key_d'`);
      const sweeping = store.limits.sweep();
      await eventuallyAsync(
        async () => (await admin.query(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`)).rows.length > 0,
        5000,
        'the sweep to wait for the count',
      );
      // … then the share, which the sweep must not hold while it waits for the count.
      await release.query(`UPDATE slot_holders SET held = held - 1 WHERE name = 'calls:live:key_d' AND instance = 7`);
      await release.query('COMMIT');
      await sweeping;
      expect(await store.limits.slotsTaken('calls:live:key_d')).toBe(0);
      expect((await admin.query('SELECT * FROM slot_holders')).rows).toHaveLength(0);
    } finally {
      release.release();
      await store.close();
      await admin.end();
    }
  });
});
