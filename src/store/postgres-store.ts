/**
 * The shared store: every instance of a deployment on one PostgreSQL database
 * (`SPRACHROHR_DATABASE_URL`). Opening it migrates the schema (instances take turns); the pool
 * is the driver's (`pg`), sized by the URL's `max` parameter or {@link DEFAULT_POOL_SIZE}.
 */
import pg from 'pg';
import type { BlobArea, BlobStore } from './blob-store.js';
import { PostgresBlobStore } from './postgres-blob-store.js';
import { PostgresAccountRepository } from './postgres-account-repository.js';
import { PostgresEntitlementRepository } from './postgres-entitlement-repository.js';
import { InstanceLock } from './postgres-instance-lock.js';
import { PostgresJobRepository } from './postgres-job-repository.js';
import { PostgresKeyRepository } from './postgres-key-repository.js';
import { PostgresLimitCounters } from './postgres-limit-counters.js';
import { PostgresBudgetClaims } from './postgres-budget-claims.js';
import { migratePostgres, type MigrationReport } from './postgres-migrations.js';
import { PostgresRecordingRepository } from './postgres-recording-repository.js';
import { PostgresUsageRepository } from './postgres-usage-repository.js';
import type { AccountRepository, EntitlementRepository, JobRepository, KeyRepository, RecordingRepository, Store, UsageRepository } from './store.js';

/** Connections one instance keeps at most, unless the URL says otherwise (`?max=N`). */
export const DEFAULT_POOL_SIZE = 10;
/** How long a request waits for a connection to the database before it fails. */
const CONNECT_TIMEOUT_MS = 5000;

/** The driver's settings for `url`: the pool size from its `max` parameter (taken out of the URL). */
function poolConfig(url: string): pg.PoolConfig {
  const parsed = new URL(url);
  const max = parsed.searchParams.get('max');
  parsed.searchParams.delete('max');
  return {
    connectionString: parsed.toString(),
    max: max ? Number(max) : DEFAULT_POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    // Idle connections go after a while; the pool opens new ones as work comes.
    idleTimeoutMillis: 30_000,
    application_name: 'sprachrohr',
  };
}

/** The store on PostgreSQL. */
export class PostgresStore implements Store {
  readonly accounts: AccountRepository;
  readonly keys: KeyRepository;
  readonly usage: UsageRepository;
  readonly entitlements: EntitlementRepository;
  readonly recordings: RecordingRepository;
  readonly jobs: JobRepository;
  readonly limits: PostgresLimitCounters;
  readonly budgetClaims: PostgresBudgetClaims;

  private constructor(
    private readonly pool: pg.Pool,
    private readonly instance: InstanceLock,
    /** What opening did to the schema. */
    readonly migration: MigrationReport,
  ) {
    this.accounts = new PostgresAccountRepository(pool);
    this.keys = new PostgresKeyRepository(pool);
    const entitlements = new PostgresEntitlementRepository(pool);
    this.entitlements = entitlements;
    this.usage = new PostgresUsageRepository(pool, entitlements);
    this.recordings = new PostgresRecordingRepository(pool);
    this.jobs = new PostgresJobRepository(pool, instance);
    const claims = new PostgresBudgetClaims(pool, instance);
    this.budgetClaims = claims;
    this.limits = new PostgresLimitCounters(pool, instance, [(client) => claims.sweep(client)]);
  }

  /**
   * Connects to the database at `url` and brings its schema up to date.
   * @param instanceRetakeMs the first wait before this instance's lock is taken again after its
   *   connection broke (tests shorten or lengthen it)
   * @throws Error saying what failed (unreachable, refused, a migration) with the URL's password hidden
   */
  static async open(url: string, instanceRetakeMs?: number): Promise<PostgresStore> {
    const config = poolConfig(url);
    const pool = new pg.Pool(config);
    // A connection that breaks while idle must not take the process down; the next query reconnects.
    pool.on('error', () => undefined);
    try {
      const migration = await migratePostgres(pool);
      return new PostgresStore(pool, new InstanceLock(config, instanceRetakeMs), migration);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw new Error(`PostgreSQL at ${redactUrl(url)}: ${(error as Error).message}`, { cause: error });
    }
  }

  /** Answers whether the database answers a trivial query (readiness). */
  async ping(): Promise<void> {
    await this.pool.query('SELECT 1');
  }

  /** {@inheritDoc Store.blobs} The shared store keeps bytes in the database, whatever `folder` says. */
  blobs(area: BlobArea): BlobStore {
    return new PostgresBlobStore(this.pool, area);
  }

  async close(): Promise<void> {
    this.limits.close();
    await this.instance.release();
    await this.pool.end();
  }
}

/** `url` with its password replaced by `***`, fit for logs and error messages. */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unparsable URL)';
  }
}
