/**
 * The store the configuration names: PostgreSQL when `SPRACHROHR_DATABASE_URL` is set (shared
 * by every instance), else the embedded SQLite file in the data folder.
 */
import path from 'node:path';
import type { Config } from '../config.js';
import { PostgresStore } from './postgres-store.js';
import { SqliteStore } from './sqlite-store.js';
import type { Store } from './store.js';

/** Name of the embedded store's file in the data folder. */
export const STORE_FILE = 'sprachrohr.sqlite';

/** The store could not be opened (the database is unreachable, refuses us, or a migration failed). */
export class StoreUnavailableError extends Error {
  override readonly name = 'StoreUnavailableError';
}

/**
 * Opens the configured store, migrating its schema when it is behind.
 * @throws StoreUnavailableError saying why, with a database URL's password hidden
 */
export async function openStore(config: Pick<Config, 'databaseUrl' | 'dataDir'>): Promise<Store> {
  if (!config.databaseUrl) return SqliteStore.open(path.join(config.dataDir, STORE_FILE));
  try {
    return await PostgresStore.open(config.databaseUrl);
  } catch (error) {
    throw new StoreUnavailableError((error as Error).message, { cause: error });
  }
}
