/** `sprachrohr db`: the store's schema, migrated before a rollout or looked at. */
import path from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { loadConfig } from '../config.js';
import { migratePostgres, postgresSchemaVersion, POSTGRES_MIGRATIONS } from '../store/postgres-migrations.js';
import { redactUrl } from '../store/postgres-store.js';
import { STORE_FILE, StoreUnavailableError } from '../store/open-store.js';
import { SqliteStore } from '../store/sqlite-store.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr db`. */
export const DB_HELP = `sprachrohr db — the store's schema

Usage:
  sprachrohr db migrate
  sprachrohr db status

migrate  brings the store's schema to this release's version and says what it
         applied. Instances migrate at start too; run it before a rollout to do
         it once, ahead of them. Safe to run while instances run, and from several
         places at once (they take turns).
status   the schema version of the store and this release's, changing nothing.

Works on SPRACHROHR_DATABASE_URL (PostgreSQL) when it is set, else on the
embedded store in SPRACHROHR_DATA_DIR (default ./data), which always migrates
as it opens.
`;

/** A pool on `url` for one command, ended afterwards; failures as {@link StoreUnavailableError}. */
async function onDatabase<T>(url: string, work: (pool: pg.Pool) => Promise<T>): Promise<T> {
  const pool = new pg.Pool({ connectionString: url, max: 1, connectionTimeoutMillis: 5000 });
  pool.on('error', () => undefined);
  try {
    return await work(pool);
  } catch (error) {
    throw new StoreUnavailableError(`PostgreSQL at ${redactUrl(url)}: ${(error as Error).message}`, { cause: error });
  } finally {
    await pool.end().catch(() => undefined);
  }
}

/** Runs `sprachrohr db`; returns what to print. */
export async function dbCommand(argv: string[], io: CommandIo): Promise<string> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} });
  const [action, ...extra] = positionals;
  if (action !== 'migrate' && action !== 'status')
    throw new UsageError(action ? `unknown action "${action}" (migrate or status)` : 'name an action: migrate or status');
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}"`);
  const config = loadConfig(io.env);
  const release = POSTGRES_MIGRATIONS.length;
  if (!config.databaseUrl) {
    const file = path.join(config.dataDir, STORE_FILE);
    const store = SqliteStore.open(file);
    await store.close();
    return `embedded store ${file}: up to date (it migrates as it opens)`;
  }
  const where = redactUrl(config.databaseUrl);
  if (action === 'status') {
    const version = await onDatabase(config.databaseUrl, postgresSchemaVersion);
    const state = version === release ? 'up to date' : version < release ? `${release - version} migration(s) to apply` : 'newer than this release';
    return `PostgreSQL ${where}: schema version ${version}, this release ${release}: ${state}`;
  }
  const report = await onDatabase(config.databaseUrl, (pool) => migratePostgres(pool));
  const lines = report.applied.map((name, index) => `applied ${report.from + index + 1}: ${name}`);
  lines.push(`PostgreSQL ${where}: schema version ${report.to}${report.applied.length === 0 ? ', nothing to apply' : ''}`);
  return lines.join('\n');
}
