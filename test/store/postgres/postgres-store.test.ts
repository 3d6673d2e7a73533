/**
 * The PostgreSQL store against a real PostgreSQL (Debian `postgresql`, a cluster the test makes
 * in a temporary folder on a loopback port): the conformance suite every store passes, and what
 * only a shared database has to get right — instances migrating at once, claiming jobs at once,
 * and putting back only the jobs of an instance that is gone.
 */
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import { POSTGRES_MIGRATIONS, migratePostgres } from '../../../src/store/postgres-migrations.js';
import { PostgresStore, redactUrl } from '../../../src/store/postgres-store.js';
import { postgresMissing, startPostgres, type PostgresRun, testPool } from '../../helpers/postgres.js';
import { describeStoreConformance, job } from '../store-conformance.js';

const missing = postgresMissing();
if (missing) console.warn(`PostgreSQL store tests skipped: ${missing}`);

let server: PostgresRun | null = null;
let databases = 0;

/** A fresh, empty database on the test cluster. */
async function freshDatabase(): Promise<string> {
  server ??= await startPostgres();
  return server.createDatabase(`store_${process.pid}_${databases++}`);
}

afterAll(async () => {
  await server?.stop();
});

describe.skipIf(missing)('the PostgreSQL store', () => {
  describeStoreConformance('PostgreSQL', async () => PostgresStore.open(await freshDatabase()));

  describe('shared by several instances', () => {
    let url = '';
    // Each test on a database of its own: jobs left running by one must not count in another.
    beforeEach(async () => {
      url = await freshDatabase();
    });

    it('migrates once when instances start together, and again finds nothing to do', async () => {
      const opened = await Promise.all([1, 2, 3].map(() => PostgresStore.open(url)));
      try {
        const applied = opened.map((store) => store.migration.applied.length).sort();
        expect(applied).toEqual([0, 0, POSTGRES_MIGRATIONS.length]);
        expect(opened.every((store) => store.migration.to === POSTGRES_MIGRATIONS.length)).toBe(true);
        // One default account, made once.
        expect((await opened[0]!.accounts.list()).map((account) => account.id)).toEqual(['acct_default']);
      } finally {
        await Promise.all(opened.map((store) => store.close()));
      }
    });

    it('refuses a database whose schema is newer than this release knows', async () => {
      const pool = testPool(url);
      try {
        await migratePostgres(pool);
        await pool.query(`INSERT INTO schema_migrations (version, name, applied_at) VALUES (999, 'from a newer release', '2027-01-01T00:00:00.000Z')`);
        await expect(PostgresStore.open(url)).rejects.toThrow(/schema is at version 999, newer than this release's/);
        await pool.query('DELETE FROM schema_migrations WHERE version = 999');
        await expect(migratePostgres(pool)).resolves.toMatchObject({ applied: [] });
      } finally {
        await pool.end();
      }
    });

    it('gives each job to one instance when instances claim at once', async () => {
      const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
      try {
        for (let i = 0; i < 30; i++) await a.jobs.insert(job(`shared_${String(i).padStart(2, '0')}`));
        const claimed = await Promise.all(Array.from({ length: 40 }, (_, i) => (i % 2 ? a : b).jobs.claim('2026-11-20T12:01:00.000Z')));
        const ids = claimed.flatMap((job) => (job ? [job.id] : []));
        expect(ids.length).toBe(30);
        expect(new Set(ids).size).toBe(30);
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });

    it('puts back the jobs of an instance that is gone, never those of one still running', async () => {
      const live = await PostgresStore.open(url);
      const doomed = await PostgresStore.open(url);
      const survivor = await PostgresStore.open(url);
      try {
        await live.jobs.insert(job('runs_on_live'));
        await doomed.jobs.insert(job('runs_on_doomed', { createdAt: '2026-11-20T12:00:01.000Z' }));
        expect((await live.jobs.claim('2026-11-20T12:01:00.000Z'))!.id).toBe('runs_on_live');
        expect((await doomed.jobs.claim('2026-11-20T12:01:00.000Z'))!.id).toBe('runs_on_doomed');
        expect(await survivor.jobs.requeueRunning()).toBe(0);
        expect(await survivor.jobs.requeueOrphaned()).toBe(0);
        // The instance goes (its connections close, as when its process dies); the others' sweep finds its job.
        await doomed.close();
        expect(await survivor.jobs.requeueOrphaned()).toBe(1);
        expect(await survivor.jobs.requeueRunning()).toBe(0);
        expect(await survivor.jobs.findById('runs_on_doomed')).toMatchObject({ status: 'queued', startedAt: null, attempts: 1 });
        expect(await survivor.jobs.findById('runs_on_live')).toMatchObject({ status: 'running' });
        const again = await survivor.jobs.claim('2026-11-20T12:02:00.000Z');
        expect(again).toMatchObject({ id: 'runs_on_doomed', attempts: 2 });
      } finally {
        await Promise.all([live.close(), survivor.close()]);
      }
    });

    it('sees keys one instance makes from another at once (nothing cached per instance)', async () => {
      const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
      try {
        await a.keys.insert({
          id: 'key_shared',
          accountId: 'acct_default',
          name: 'shared',
          environment: 'live',
          fingerprint: 'fp-shared',
          displayPrefix: 'sk_live_sh',
          createdAt: '2026-11-20T12:00:00.000Z',
          revokedAt: null,
          expiresAt: null,
          replacedBy: null,
        });
        expect((await b.keys.findByFingerprint('fp-shared'))!.id).toBe('key_shared');
        await b.keys.update('key_shared', { revokedAt: '2026-11-20T13:00:00.000Z' });
        expect((await a.keys.findById('key_shared'))!.revokedAt).toBe('2026-11-20T13:00:00.000Z');
      } finally {
        await Promise.all([a.close(), b.close()]);
      }
    });
    it("counts one key's limits once for all instances, and gives back the slots of an instance that is gone", async () => {
      const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
      let aOpen = true;
      try {
        // A bucket of 6 taken from both instances at once: 6 tokens in all, not 6 each.
        const shape = { capacity: 6, refillPerSecond: 0.001 };
        const takes = await Promise.all(Array.from({ length: 20 }, (_, n) => (n % 2 ? a : b).limits.takeToken('http:rate:key_k', shape)));
        expect(takes.filter((take) => take.taken)).toHaveLength(6);
        // Four slots shared: what one instance holds, the other cannot take.
        const held = (await Promise.all([1, 2, 3].map(() => a.limits.takeSlot('http:in-flight:key_k', 4)))).filter((release) => release !== null);
        expect(held).toHaveLength(3);
        const fromB = await Promise.all([1, 2].map(() => b.limits.takeSlot('http:in-flight:key_k', 4)));
        expect(fromB.filter((release) => release !== null)).toHaveLength(1);
        expect(await b.limits.slotsTaken('http:in-flight:key_k')).toBe(4);
        // An instance that stops without giving its slots back (its lock goes with it): the
        // other's sweep returns them, and keeps its own.
        await a.close();
        aOpen = false;
        await b.limits.sweep();
        expect(await b.limits.slotsTaken('http:in-flight:key_k')).toBe(1);
        expect(await b.limits.takeSlot('http:in-flight:key_k', 4)).not.toBeNull();
        expect(await b.limits.slotsTaken('http:in-flight:key_k')).toBe(2);
      } finally {
        await Promise.all([aOpen ? a.close() : undefined, b.close()]);
      }
    });

    it('sends a release that failed again at the next sweep', async () => {
      // The store's connections give up waiting for a lock after 200 ms (a setting of the database).
      const pool = testPool(url);
      await pool.query(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET lock_timeout = '200ms'`);
      const store = await PostgresStore.open(url);
      const blocker = await pool.connect();
      try {
        const release = (await store.limits.takeSlot('calls:live:key_r', 2))!;
        // While another session holds the count's row, the release cannot get through.
        await blocker.query('BEGIN');
        await blocker.query(`SELECT * FROM slot_counts WHERE name = 'calls:live:key_r' FOR UPDATE`);
        release();
        await new Promise((resolve) => setTimeout(resolve, 500));
        await blocker.query('COMMIT');
        expect(await store.limits.slotsTaken('calls:live:key_r')).toBe(1);
        await store.limits.sweep();
        expect(await store.limits.slotsTaken('calls:live:key_r')).toBe(0);
      } finally {
        blocker.release();
        await pool.end();
        await store.close();
      }
    });
  });

  describe('a database that cannot be reached', () => {
    it('fails to open with the address and without the password', async () => {
      const port = server?.port ?? 5432;
      const error = await PostgresStore.open(`postgres://sprachrohr:hunter2@127.0.0.1:${port + 1}/none`).catch((e: unknown) => e as Error);
      expect(error).toBeInstanceOf(Error);
      expect((error as Error).message).toContain(`postgres://sprachrohr:***@127.0.0.1:${port + 1}/none`);
      expect((error as Error).message).not.toContain('hunter2');
      expect(redactUrl('postgres://u:p@h/d')).toBe('postgres://u:***@h/d');
    });
  });
});
