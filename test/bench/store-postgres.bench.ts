/**
 * The shared PostgreSQL store against the embedded SQLite store, in one run on one machine
 * (PostgreSQL 15 from Debian, a cluster of its own in a temporary folder on loopback, with
 * fsync on as a production database keeps it):
 * - what one API request costs the store: a key lookup by fingerprint (every request) and a
 *   ledger write (every metered request: entry, day totals, entitlement draws in a transaction),
 *   each measured alone, sequentially, after a warm-up;
 * - sandbox `POST /v1/tts` through a `sprachrohr serve` process on each store: sequential
 *   latency and wrk throughput (test/bench/tts-http.bench.ts), and the ratio.
 * Run: npm run bench:store
 */
import { randomBytes } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { PostgresStore } from '../../src/store/postgres-store.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { startPostgres } from '../helpers/postgres.js';
import { benchTtsHttp } from './tts-http.bench.js';

const OPERATIONS = 3000;
const KEY_SECRET = randomBytes(32).toString('hex');

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** p50 and p99 in microseconds of `operation` run {@link OPERATIONS} times one after another. */
async function timed(operation: (i: number) => Promise<unknown>): Promise<{ p50Us: number; p99Us: number }> {
  for (let i = 0; i < 200; i++) await operation(-1 - i);
  const samples: number[] = [];
  for (let i = 0; i < OPERATIONS; i++) {
    const start = performance.now();
    await operation(i);
    samples.push((performance.now() - start) * 1000);
  }
  samples.sort((a, b) => a - b);
  return { p50Us: Math.round(percentile(samples, 50)), p99Us: Math.round(percentile(samples, 99)) };
}

/** Key lookup and ledger write costs on `store`, with 1,000 keys and an account with a credit. */
async function storeCosts(store: Store) {
  for (let i = 0; i < 1000; i++) {
    await store.keys.insert({
      id: `key_${i}`,
      accountId: 'acct_default',
      name: `bench ${i}`,
      environment: 'live',
      fingerprint: `fp_${i}`,
      displayPrefix: 'sk_live_xx',
      createdAt: new Date().toISOString(),
      revokedAt: null,
      expiresAt: null,
      replacedBy: null,
    });
  }
  await store.entitlements.insert({
    accountId: 'acct_default',
    kind: 'credit',
    direction: 'any',
    grantedSeconds: null,
    grantedCredits: 1e12,
    validUntil: null,
    enforcement: 'soft',
    createdAt: new Date().toISOString(),
  });
  const lookup = await timed((i) => store.keys.findByFingerprint(`fp_${Math.abs(i) % 1000}`));
  const ledger = await timed((i) =>
    store.usage.record(
      {
        requestId: `req_${i}`,
        accountId: 'acct_default',
        keyId: `key_${Math.abs(i) % 1000}`,
        environment: 'live',
        direction: 'tts',
        mode: 'batch',
        recordedAt: new Date().toISOString(),
        audioSeconds: 4.2,
      },
      { tts: 1, stt: 1 },
    ),
  );
  return { keyLookup: lookup, ledgerWrite: ledger };
}

const postgres = await startPostgres({ durable: true });
try {
  const sqliteFolder = `/tmp/sprachrohr-store-bench-${process.pid}`;
  const sqlite = SqliteStore.open(`${sqliteFolder}/sprachrohr.sqlite`);
  const sqliteCosts = await storeCosts(sqlite);
  await sqlite.close();
  const pg = await PostgresStore.open(await postgres.createDatabase('costs'));
  const postgresCosts = await storeCosts(pg);
  await pg.close();
  const embeddedHttp = await benchTtsHttp();
  const sharedHttp = await benchTtsHttp({ SPRACHROHR_DATABASE_URL: await postgres.createDatabase('http'), SPRACHROHR_KEY_SECRET: KEY_SECRET });
  console.log(
    JSON.stringify(
      {
        operations: OPERATIONS,
        sqlite: sqliteCosts,
        postgres: postgresCosts,
        ttsHttp: {
          sqlite: { sequential: embeddedHttp.sequential, load: embeddedHttp.load },
          postgres: { sequential: sharedHttp.sequential, load: sharedHttp.load },
          throughputRatio: Math.round((sharedHttp.load.requestsPerSecond / embeddedHttp.load.requestsPerSecond) * 1000) / 1000,
        },
      },
      null,
      2,
    ),
  );
  const { rmSync } = await import('node:fs');
  rmSync(sqliteFolder, { recursive: true, force: true });
} finally {
  await postgres.stop();
}
