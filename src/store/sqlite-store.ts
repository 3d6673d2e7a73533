import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { ApiKeyChanges, ApiKeyRecord, KeyRepository, Store, UsageEvent, UsageKind, UsageRepository, UsageTotals } from './store.js';

/** Schema migrations, applied in order; the index + 1 is the `user_version` after each. */
const MIGRATIONS: readonly string[] = [
  `CREATE TABLE api_keys (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL,
     environment TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
     fingerprint TEXT NOT NULL UNIQUE,
     display_prefix TEXT NOT NULL,
     created_at TEXT NOT NULL,
     revoked_at TEXT,
     expires_at TEXT,
     replaced_by TEXT
   );
   CREATE TABLE usage_daily (
     key_id TEXT NOT NULL,
     environment TEXT NOT NULL,
     day TEXT NOT NULL,
     direction TEXT NOT NULL,
     mode TEXT NOT NULL,
     requests INTEGER NOT NULL,
     audio_seconds REAL NOT NULL,
     PRIMARY KEY (key_id, day, direction, mode)
   );`,
];

interface KeyRow {
  id: string;
  name: string;
  environment: 'live' | 'sandbox';
  fingerprint: string;
  display_prefix: string;
  created_at: string;
  revoked_at: string | null;
  expires_at: string | null;
  replaced_by: string | null;
}

function toRecord(row: KeyRow): ApiKeyRecord {
  return {
    id: row.id,
    name: row.name,
    environment: row.environment,
    fingerprint: row.fingerprint,
    displayPrefix: row.display_prefix,
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
    expiresAt: row.expires_at,
    replacedBy: row.replaced_by,
  };
}

/**
 * The embedded store: one SQLite file in the data folder, in WAL mode so that the CLI can
 * manage keys while a server reads them. Queries are microseconds, so the synchronous driver
 * does not stall the event loop.
 */
export class SqliteStore implements Store {
  readonly keys: KeyRepository;
  readonly usage: UsageRepository;
  private readonly db: Database.Database;

  private constructor(db: Database.Database) {
    this.db = db;
    this.keys = new SqliteKeyRepository(db);
    this.usage = new SqliteUsageRepository(db);
  }

  /** Opens (creating and migrating if needed) the store at `file`; `:memory:` for a throwaway one. */
  static open(file: string): SqliteStore {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true });
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    migrate(db);
    return new SqliteStore(db);
  }

  async close(): Promise<void> {
    this.db.close();
  }
}

function migrate(db: Database.Database): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (let version = current; version < MIGRATIONS.length; version++) {
    db.transaction(() => {
      db.exec(MIGRATIONS[version]!);
      db.pragma(`user_version = ${version + 1}`);
    })();
  }
}

class SqliteKeyRepository implements KeyRepository {
  private readonly insertStatement;
  private readonly byId;
  private readonly byFingerprint;
  private readonly all;

  constructor(private readonly db: Database.Database) {
    this.insertStatement = db.prepare(
      `INSERT INTO api_keys (id, name, environment, fingerprint, display_prefix, created_at, revoked_at, expires_at, replaced_by)
       VALUES (@id, @name, @environment, @fingerprint, @displayPrefix, @createdAt, @revokedAt, @expiresAt, @replacedBy)`,
    );
    this.byId = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE id = ?');
    this.byFingerprint = db.prepare<[string], KeyRow>('SELECT * FROM api_keys WHERE fingerprint = ?');
    this.all = db.prepare<[], KeyRow>('SELECT * FROM api_keys ORDER BY created_at, rowid');
  }

  async insert(record: ApiKeyRecord): Promise<void> {
    this.insertStatement.run(record);
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const row = this.byId.get(id);
    return row && toRecord(row);
  }

  async findByFingerprint(fingerprint: string): Promise<ApiKeyRecord | undefined> {
    const row = this.byFingerprint.get(fingerprint);
    return row && toRecord(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return this.all.all().map(toRecord);
  }

  async update(id: string, changes: ApiKeyChanges): Promise<void> {
    const columns: Record<keyof ApiKeyChanges, string> = { revokedAt: 'revoked_at', expiresAt: 'expires_at', replacedBy: 'replaced_by' };
    const entries = (Object.keys(changes) as Array<keyof ApiKeyChanges>).filter((k) => changes[k] !== undefined);
    if (entries.length === 0) return;
    const assignments = entries.map((k) => `${columns[k]} = @${k}`).join(', ');
    this.db.prepare(`UPDATE api_keys SET ${assignments} WHERE id = @id`).run({ ...changes, id });
  }
}

class SqliteUsageRepository implements UsageRepository {
  private readonly upsert;
  private readonly totals;

  constructor(db: Database.Database) {
    this.upsert = db.prepare(
      `INSERT INTO usage_daily (key_id, environment, day, direction, mode, requests, audio_seconds)
       VALUES (@keyId, @environment, @day, @direction, @mode, 1, @audioSeconds)
       ON CONFLICT (key_id, day, direction, mode)
       DO UPDATE SET requests = requests + 1, audio_seconds = audio_seconds + excluded.audio_seconds`,
    );
    this.totals = db.prepare<[string, string, string], { requests: number | null; audio_seconds: number | null }>(
      `SELECT SUM(requests) AS requests, SUM(audio_seconds) AS audio_seconds
       FROM usage_daily WHERE key_id = ? AND day = ? AND direction = ?`,
    );
  }

  async record(event: UsageEvent): Promise<void> {
    this.upsert.run(event);
  }

  async dayTotals(keyId: string, day: string, direction: UsageKind['direction']): Promise<UsageTotals> {
    const row = this.totals.get(keyId, day, direction);
    return { requests: row?.requests ?? 0, audioSeconds: row?.audio_seconds ?? 0 };
  }
}
