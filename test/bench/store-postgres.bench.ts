/**
 * The shared PostgreSQL store against the embedded SQLite store, in one run on one machine
 * (PostgreSQL 15 from Debian, a cluster of its own in a temporary folder on loopback, with
 * fsync on as a production database keeps it):
 * - what one API request costs the store: a key lookup by fingerprint (every request) and a
 *   ledger write (every metered request: entry, day totals, entitlement draws in a transaction),
 *   each measured alone, sequentially, after a warm-up;
 * - sandbox `POST /v1/tts` through a `sprachrohr serve` process on each store: sequential
 *   latency and wrk throughput (test/bench/tts-http.bench.ts), and the ratio;
 * - the SQL statements one request sends to PostgreSQL (sandbox and live synthesis, a job, a
 *   usage report), counted on the driver in a server started in this process, and those of a
 *   live phone call's metering (at its start, each minute, at its end).
 * Run: npm run bench:store
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import pg from 'pg';
import pino from 'pino';
import { loadConfig } from '../../src/config.js';
import { openKeyStore, startServer } from '../../src/server.js';
import { CallMeter, type CallAllowance } from '../../src/metering/call-meter.js';
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

/** Gives the default account a credit no benchmark uses up, so that every ledger write draws from it. */
async function giveCredit(store: Store): Promise<void> {
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
  await giveCredit(store);
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

/** Statements sent through the driver so far (every query passes through `Client.query`, pooled or not). */
let statements = 0;
const originalQuery = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(this: pg.Client, ...args: unknown[]) {
  statements++;
  return (originalQuery as (...a: unknown[]) => unknown).apply(this, args);
} as typeof pg.Client.prototype.query;

/** Statements per request of each kind, averaged over 20 requests (within a key's burst of 25), on a server in this process. */
async function statementsPerRequest(url: string) {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-store-count-'));
  const env = { SPRACHROHR_DATA_DIR: dataDir, SPRACHROHR_DATABASE_URL: url, SPRACHROHR_KEY_SECRET: KEY_SECRET, SPRACHROHR_SIP: 'off', SPRACHROHR_PORT: '0' };
  const config = loadConfig(env);
  const { store, keys } = await openKeyStore(config);
  // A key per kind of request: each sends 22, within the per-key burst of 25.
  const newKey = async (environment: 'live' | 'sandbox') => (await keys.create(`count ${environment}`, environment)).key;
  const [sandbox, live, reader, browser] = [await newKey('sandbox'), await newKey('live'), await newKey('live'), await newKey('sandbox')];
  await store.close();
  const server = await startServer(config, pino({ level: 'silent' }));
  const count = async (request: () => Promise<Response>): Promise<number> => {
    for (let i = 0; i < 2; i++) await (await request()).arrayBuffer();
    const before = statements;
    for (let i = 0; i < 20; i++) {
      const response = await request();
      await response.arrayBuffer();
      if (!response.ok) throw new Error(`status ${response.status}`);
    }
    return (statements - before) / 20;
  };
  const tts = (key: string) => () =>
    fetch(`${server.address}/v1/tts`, {
      method: 'POST',
      headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify({ text: 'Grüezi, Sie sind verbunden.', language: 'de-CH', format: 'pcm16' }),
    });
  try {
    return {
      sandboxTts: await count(tts(sandbox)),
      liveTts: await count(tts(live)),
      usageReport: await count(() => fetch(`${server.address}/v1/usage`, { headers: { 'X-API-Key': reader } })),
      voices: await count(() => fetch(`${server.address}/v1/tts/voices`, { headers: { 'X-API-Key': browser } })),
    };
  } finally {
    await server.close();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

/**
 * Statements one live phone call sends to PostgreSQL through the call metering the telephony
 * side runs (src/telephony/call/call-allowance.ts): its account's entitlements when it starts,
 * once a minute while it lasts, and its ledger entries (one per direction) when it ends. A call
 * has no key, so no lookup or limit.
 */
async function statementsPerCall(url: string) {
  const store = await PostgresStore.open(url);
  try {
    // A live account on credit, as storeCosts has it: its ledger entries draw from the credit.
    await giveCredit(store);
    const meter = new CallMeter({ accounts: store.accounts, entitlements: store.entitlements, usage: store.usage, rates: { tts: 1, stt: 1 } });
    const counted = async (work: () => Promise<unknown>): Promise<number> => {
      const before = statements;
      await work();
      return statements - before;
    };
    let allowance: CallAllowance | null = null;
    const start = await counted(async () => {
      allowance = await meter.open({ callId: 'bench-call', routeNumber: '+41440000000', account: undefined, synthetic: false });
      await allowance.check({ ttsSeconds: 0, sttSeconds: 0 });
    });
    const minute = await counted(() => allowance!.check({ ttsSeconds: 20, sttSeconds: 15 }));
    const end = await counted(() => allowance!.finish({ ttsSeconds: 40, sttSeconds: 30 }));
    return { atStart: start, perMinute: minute, atEnd: end };
  } finally {
    await store.close();
  }
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
  const perRequest = await statementsPerRequest(await postgres.createDatabase('count'));
  const perCall = await statementsPerCall(await postgres.createDatabase('calls'));
  const embeddedHttp = await benchTtsHttp();
  const sharedHttp = await benchTtsHttp({ SPRACHROHR_DATABASE_URL: await postgres.createDatabase('http'), SPRACHROHR_KEY_SECRET: KEY_SECRET });
  console.log(
    JSON.stringify(
      {
        operations: OPERATIONS,
        sqlite: sqliteCosts,
        postgres: postgresCosts,
        postgresStatementsPerRequest: perRequest,
        postgresStatementsPerLiveCall: perCall,
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
