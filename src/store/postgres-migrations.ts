/**
 * The PostgreSQL store's schema, as versioned migrations. Each runs in its own transaction and
 * is recorded in `schema_migrations`; instances that start together take turns on an advisory
 * lock, so each migration runs exactly once whoever starts first.
 *
 * Times are ISO 8601 UTC text, as the rest of the service writes them (they sort in time order
 * and come back exactly as written, which the embedded store does too); JSON values are jsonb.
 * `seq` columns keep the order of insertion where two rows share a time. Text columns compare
 * byte by byte (collation C) whatever the database's locale, so times and ids order the same
 * everywhere.
 */
import { randomBytes } from 'node:crypto';
import type pg from 'pg';

/** One step of the schema. */
export interface PostgresMigration {
  /** What it builds, kept in `schema_migrations`. */
  readonly name: string;
  /** Runs inside the migration's transaction. */
  up(client: pg.PoolClient): Promise<void>;
}

/** The lock (two int4 keys: 'SPRH', 1) that instances take turns on while they migrate. */
const MIGRATION_LOCK = [0x53505248, 1] as const;

/** The migrations in order; version N is index N − 1. Never change one that was released: add another. */
export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [
  {
    name: 'accounts, keys, usage ledger, entitlements',
    up: async (client) => {
      await client.query(`
        CREATE TABLE accounts (
          id text COLLATE "C" PRIMARY KEY,
          seq bigserial NOT NULL,
          name text COLLATE "C" NOT NULL UNIQUE,
          created_at text COLLATE "C" NOT NULL,
          webhook_secret text COLLATE "C" NOT NULL,
          emails jsonb NOT NULL DEFAULT '[]'
        );
        CREATE TABLE api_keys (
          id text COLLATE "C" PRIMARY KEY,
          seq bigserial NOT NULL,
          account_id text COLLATE "C" NOT NULL,
          name text COLLATE "C" NOT NULL,
          environment text COLLATE "C" NOT NULL CHECK (environment IN ('live', 'sandbox')),
          fingerprint text COLLATE "C" NOT NULL UNIQUE,
          display_prefix text COLLATE "C" NOT NULL,
          created_at text COLLATE "C" NOT NULL,
          revoked_at text COLLATE "C",
          expires_at text COLLATE "C",
          replaced_by text COLLATE "C"
        );
        CREATE INDEX api_keys_by_account ON api_keys (account_id);
        CREATE TABLE usage_daily (
          key_id text COLLATE "C" NOT NULL,
          environment text COLLATE "C" NOT NULL,
          day text COLLATE "C" NOT NULL,
          direction text COLLATE "C" NOT NULL,
          mode text COLLATE "C" NOT NULL,
          requests integer NOT NULL,
          audio_seconds double precision NOT NULL,
          PRIMARY KEY (key_id, day, direction, mode)
        );
        CREATE TABLE usage_ledger (
          request_id text COLLATE "C" PRIMARY KEY,
          account_id text COLLATE "C" NOT NULL,
          key_id text COLLATE "C" NOT NULL,
          environment text COLLATE "C" NOT NULL CHECK (environment IN ('live', 'sandbox')),
          direction text COLLATE "C" NOT NULL CHECK (direction IN ('tts', 'stt')),
          mode text COLLATE "C" NOT NULL CHECK (mode IN ('batch', 'realtime')),
          recorded_at text COLLATE "C" NOT NULL,
          requests integer NOT NULL DEFAULT 1,
          audio_seconds double precision NOT NULL
        );
        CREATE INDEX usage_ledger_by_account ON usage_ledger (account_id, recorded_at);
        CREATE TABLE entitlements (
          id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
          account_id text COLLATE "C" NOT NULL,
          kind text COLLATE "C" NOT NULL CHECK (kind IN ('evaluation', 'committed', 'credit')),
          direction text COLLATE "C" NOT NULL CHECK (direction IN ('tts', 'stt', 'any')),
          granted_seconds double precision,
          granted_credits double precision,
          used double precision NOT NULL DEFAULT 0,
          valid_until text COLLATE "C",
          enforcement text COLLATE "C" NOT NULL CHECK (enforcement IN ('hard', 'soft')),
          created_at text COLLATE "C" NOT NULL,
          removed_at text COLLATE "C",
          notices_sent jsonb NOT NULL DEFAULT '[]'
        );
        CREATE INDEX entitlements_by_account ON entitlements (account_id);
        CREATE TABLE entitlement_draws (
          request_id text COLLATE "C" NOT NULL,
          entitlement_id integer NOT NULL,
          amount double precision NOT NULL,
          PRIMARY KEY (request_id, entitlement_id)
        );`);
      // The account keys made without one belong to; its webhook secret from a proper random source.
      await client.query(`INSERT INTO accounts (id, name, created_at, webhook_secret) VALUES ('acct_default', 'default', $1, $2)`, [
        new Date().toISOString(),
        randomBytes(32).toString('hex'),
      ]);
    },
  },
  {
    name: 'recordings',
    up: async (client) => {
      await client.query(`
        CREATE TABLE recordings (
          id text COLLATE "C" PRIMARY KEY,
          call_id text COLLATE "C" NOT NULL,
          route text COLLATE "C" NOT NULL,
          caller text COLLATE "C" NOT NULL,
          called text COLLATE "C" NOT NULL,
          language text COLLATE "C" NOT NULL,
          created_at text COLLATE "C" NOT NULL,
          duration_seconds double precision NOT NULL,
          size_bytes bigint NOT NULL,
          sample_rate_hz integer NOT NULL,
          ended_by text COLLATE "C" NOT NULL CHECK (ended_by IN ('silence', 'key', 'max_length', 'hangup')),
          transcript_status text COLLATE "C" NOT NULL CHECK (transcript_status IN ('pending', 'done', 'unavailable', 'failed')),
          transcript_text text COLLATE "C",
          transcript_confidence double precision
        );
        CREATE INDEX recordings_by_age ON recordings (created_at, id);
        CREATE INDEX recordings_by_transcript ON recordings (transcript_status, created_at);`);
    },
  },
  {
    name: 'jobs',
    up: async (client) => {
      // claimed_by: the instance that runs the job (its advisory lock says whether it lives).
      await client.query(`
        CREATE TABLE jobs (
          id text COLLATE "C" PRIMARY KEY,
          seq bigserial NOT NULL,
          account_id text COLLATE "C" NOT NULL,
          key_id text COLLATE "C" NOT NULL,
          environment text COLLATE "C" NOT NULL CHECK (environment IN ('live', 'sandbox')),
          kind text COLLATE "C" NOT NULL CHECK (kind IN ('tts', 'stt')),
          status text COLLATE "C" NOT NULL CHECK (status IN ('queued', 'running', 'succeeded', 'failed')),
          request text COLLATE "C" NOT NULL,
          created_at text COLLATE "C" NOT NULL,
          started_at text COLLATE "C",
          finished_at text COLLATE "C",
          audio jsonb,
          result_expires_at text COLLATE "C",
          purged_at text COLLATE "C",
          error jsonb,
          attempts integer NOT NULL DEFAULT 0,
          claimed_by integer,
          callback_url text COLLATE "C",
          callback_delivered_at text COLLATE "C",
          callback_attempts integer NOT NULL DEFAULT 0,
          callback_error text COLLATE "C",
          transcript jsonb
        );
        CREATE INDEX jobs_queue ON jobs (created_at, seq) WHERE status = 'queued';
        CREATE INDEX jobs_by_account ON jobs (account_id, environment, created_at);
        CREATE INDEX jobs_by_key ON jobs (key_id, status);
        CREATE INDEX jobs_running ON jobs (claimed_by) WHERE status = 'running';
        CREATE INDEX jobs_expiring ON jobs (result_expires_at) WHERE purged_at IS NULL;`);
    },
  },
  {
    name: 'blobs',
    up: async (client) => {
      // The bytes the embedded store keeps as files: recordings' WAVs, jobs' results and uploads.
      await client.query(`
        CREATE TABLE blobs (
          area text COLLATE "C" NOT NULL,
          name text COLLATE "C" NOT NULL,
          bytes bytea NOT NULL,
          created_at timestamptz NOT NULL,
          PRIMARY KEY (area, name)
        );`);
    },
  },
  {
    name: 'limit counters',
    up: async (client) => {
      // The per-key limits counted once for every instance (postgres-limit-counters.ts): token
      // buckets refilled by the database's clock, slots with each instance's share, and the
      // parts of daily budgets instances hold for their work in progress (postgres-budget-claims.ts).
      // Unlogged: they are written on every request, and a commit that waited for the disk each
      // time cost a shared deployment most of its throughput (npm run bench:store). A database
      // that crashes forgets them; the work in flight then is counted again from nothing.
      await client.query(`
        CREATE UNLOGGED TABLE rate_buckets (
          name text COLLATE "C" PRIMARY KEY,
          tokens float8 NOT NULL,
          capacity float8 NOT NULL,
          refill_per_s float8 NOT NULL,
          updated_at timestamptz NOT NULL
        );
        CREATE UNLOGGED TABLE slot_counts (
          name text COLLATE "C" PRIMARY KEY,
          held integer NOT NULL CHECK (held >= 0)
        );
        CREATE UNLOGGED TABLE slot_holders (
          name text COLLATE "C" NOT NULL,
          instance integer NOT NULL,
          held integer NOT NULL CHECK (held >= 0),
          PRIMARY KEY (name, instance)
        );
        CREATE UNLOGGED TABLE budget_claims (
          key_id text COLLATE "C" NOT NULL,
          day text COLLATE "C" NOT NULL,
          direction text COLLATE "C" NOT NULL,
          instance integer NOT NULL,
          seconds float8 NOT NULL CHECK (seconds >= 0),
          PRIMARY KEY (key_id, day, direction, instance)
        );`);
    },
  },
  {
    name: 'day totals in shards',
    up: async (client) => {
      // Every entry of one key (a busy API key, or phone:<number> for all calls of a route)
      // updated the same day-totals row and waited for the one before it to commit: at 160
      // calls a second the ledger writes queued past the pool's wait and entries were lost
      // (npm run bench:cluster). Each entry now adds to one of 16 rows at random; the totals
      // are their sum, as they already summed the modes.
      await client.query(`
        ALTER TABLE usage_daily ADD COLUMN shard smallint NOT NULL DEFAULT 0;
        ALTER TABLE usage_daily DROP CONSTRAINT usage_daily_pkey;
        ALTER TABLE usage_daily ADD PRIMARY KEY (key_id, day, direction, mode, shard);`);
    },
  },
];

/** What a migration run did. */
export interface MigrationReport {
  /** The schema version before. */
  readonly from: number;
  /** The schema version after. */
  readonly to: number;
  /** Names of the migrations applied, in order. */
  readonly applied: readonly string[];
}

/**
 * Brings the database's schema to the newest version. Safe to run from several instances at
 * once (they take turns) and again and again (applied versions are skipped).
 * @throws Error when the database's schema is newer than this release knows (an older instance
 *   must not write into a schema it does not understand)
 */
export async function migratePostgres(pool: pg.Pool, migrations: readonly PostgresMigration[] = POSTGRES_MIGRATIONS): Promise<MigrationReport> {
  const client = await pool.connect();
  try {
    await client.query('SELECT pg_advisory_lock($1, $2)', [...MIGRATION_LOCK]);
    try {
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migrations (version integer PRIMARY KEY, name text NOT NULL, applied_at text NOT NULL)`);
      const { rows } = await client.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
      const from = rows[0]?.version ?? 0;
      if (from > migrations.length) {
        throw new Error(
          `the database's schema is at version ${from}, newer than this release's ${migrations.length}: run the newer release (or restore the database)`,
        );
      }
      const applied: string[] = [];
      for (let version = from + 1; version <= migrations.length; version++) {
        const migration = migrations[version - 1]!;
        await client.query('BEGIN');
        try {
          await migration.up(client);
          await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [
            version,
            migration.name,
            new Date().toISOString(),
          ]);
          await client.query('COMMIT');
        } catch (error) {
          await client.query('ROLLBACK');
          throw new Error(`migration ${version} (${migration.name}) failed: ${(error as Error).message}`, { cause: error });
        }
        applied.push(migration.name);
      }
      return { from, to: Math.max(from, migrations.length), applied };
    } finally {
      await client.query('SELECT pg_advisory_unlock($1, $2)', [...MIGRATION_LOCK]);
    }
  } finally {
    client.release();
  }
}

/** The schema version of the database (0 when it was never migrated), without changing anything. */
export async function postgresSchemaVersion(pool: pg.Pool): Promise<number> {
  const { rows: table } = await pool.query<{ found: string | null }>(`SELECT to_regclass('schema_migrations')::text AS found`);
  if (!table[0]?.found) return 0;
  const { rows } = await pool.query<{ version: number | null }>('SELECT max(version) AS version FROM schema_migrations');
  return rows[0]?.version ?? 0;
}
