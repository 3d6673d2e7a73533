import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { SqliteAccountRepository } from './sqlite-account-repository.js';
import { SqliteRecordingRepository } from './sqlite-recording-repository.js';
import { SqliteUsageRepository } from './sqlite-usage-repository.js';
import type { AccountRepository, ApiKeyChanges, ApiKeyRecord, KeyRepository, RecordingRepository, Store, UsageRepository } from './store.js';

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
  // Voicemails: the index of the WAV files in <data folder>/recordings, newest first by (created_at, id).
  `CREATE TABLE recordings (
     id TEXT PRIMARY KEY,
     call_id TEXT NOT NULL,
     route TEXT NOT NULL,
     caller TEXT NOT NULL,
     called TEXT NOT NULL,
     language TEXT NOT NULL,
     created_at TEXT NOT NULL,
     duration_seconds REAL NOT NULL,
     size_bytes INTEGER NOT NULL,
     sample_rate_hz INTEGER NOT NULL,
     ended_by TEXT NOT NULL CHECK (ended_by IN ('silence', 'key', 'max_length', 'hangup')),
     transcript_status TEXT NOT NULL CHECK (transcript_status IN ('pending', 'done', 'unavailable', 'failed')),
     transcript_text TEXT,
     transcript_confidence REAL
   );
   CREATE INDEX recordings_by_age ON recordings (created_at, id);`,
  // Accounts: every key belongs to one; the keys there were go to the default account.
  `CREATE TABLE accounts (
     id TEXT PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     created_at TEXT NOT NULL,
     webhook_secret TEXT NOT NULL,
     emails TEXT NOT NULL DEFAULT '[]'
   );
   INSERT INTO accounts (id, name, created_at, webhook_secret)
     VALUES ('acct_default', 'default', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), lower(hex(randomblob(32))));
   ALTER TABLE api_keys ADD COLUMN account_id TEXT NOT NULL DEFAULT 'acct_default';
   CREATE INDEX api_keys_by_account ON api_keys (account_id);`,
  // The ledger: one entry per finished request, job, session or call, unique by request id;
  // usage_daily stays as each key's day totals beside it (the budget check reads those on
  // every request). What usage_daily held before becomes one entry per key, day, direction and mode.
  `CREATE TABLE usage_ledger (
     request_id TEXT PRIMARY KEY,
     account_id TEXT NOT NULL,
     key_id TEXT NOT NULL,
     environment TEXT NOT NULL CHECK (environment IN ('live', 'sandbox')),
     direction TEXT NOT NULL CHECK (direction IN ('tts', 'stt')),
     mode TEXT NOT NULL CHECK (mode IN ('batch', 'realtime')),
     recorded_at TEXT NOT NULL,
     requests INTEGER NOT NULL DEFAULT 1,
     audio_seconds REAL NOT NULL
   );
   CREATE INDEX usage_ledger_by_account ON usage_ledger (account_id, recorded_at);
   INSERT INTO usage_ledger (request_id, account_id, key_id, environment, direction, mode, recorded_at, requests, audio_seconds)
     SELECT 'before_ledger_' || key_id || '_' || day || '_' || direction || '_' || mode,
            COALESCE((SELECT account_id FROM api_keys WHERE api_keys.id = usage_daily.key_id), 'acct_default'),
            key_id, environment, direction, mode, day || 'T00:00:00.000Z', requests, audio_seconds
     FROM usage_daily;`,
];

interface KeyRow {
  id: string;
  account_id: string;
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
    accountId: row.account_id,
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
 * Largest WAL file kept between checkpoints; SQLite truncates it to this after a reset. Four
 * times what its automatic checkpoints (every 1000 pages) leave in steady use.
 */
export const WAL_SIZE_LIMIT_BYTES = 16 * 1024 * 1024;
/** How often the WAL's size is looked at (one `stat`), and folded back when it is over the limit. */
const WAL_CHECK_MS = 10_000;
/** Files the store consists of: the database and SQLite's companions beside it. */
const COMPANIONS = ['', '-wal', '-shm'];

/**
 * Creates the store's file readable by its owner alone (0600), or narrows an existing one.
 * SQLite gives the `-wal` and `-shm` files it creates the database file's permissions; those
 * left by an earlier run are narrowed too. Done per file rather than through the process's
 * umask, which would change every file the process creates, at any moment.
 */
function restrictToOwner(file: string): void {
  const folder = path.dirname(file);
  if (!fs.existsSync(folder)) fs.mkdirSync(folder, { recursive: true, mode: 0o700 });
  fs.closeSync(fs.openSync(file, 'a', 0o600));
  for (const suffix of COMPANIONS) {
    try {
      fs.chmodSync(file + suffix, 0o600);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
  }
}

/**
 * The embedded store: one SQLite file in the data folder, in WAL mode so that the CLI can
 * manage keys while a server reads them. Queries are microseconds, so the synchronous driver
 * does not stall the event loop. The files are the owner's alone, and the WAL stays bounded:
 * a reader in another process that holds a snapshot lets it grow while it reads, and SQLite
 * never shrinks the file afterwards by itself.
 */
export class SqliteStore implements Store {
  readonly accounts: AccountRepository;
  readonly keys: KeyRepository;
  readonly usage: UsageRepository;
  readonly recordings: RecordingRepository;
  private readonly db: Database.Database;
  private readonly walWatch: NodeJS.Timeout | null;

  private constructor(
    db: Database.Database,
    private readonly file: string | null,
  ) {
    this.db = db;
    this.accounts = new SqliteAccountRepository(db);
    this.keys = new SqliteKeyRepository(db);
    this.usage = new SqliteUsageRepository(db);
    this.recordings = new SqliteRecordingRepository(db);
    this.walWatch = file ? setInterval(() => this.foldWal(), WAL_CHECK_MS).unref() : null;
  }

  /** Opens (creating and migrating if needed) the store at `file`; `:memory:` for a throwaway one. */
  static open(file: string): SqliteStore {
    const onDisk = file !== ':memory:';
    if (onDisk) restrictToOwner(file);
    const db = new Database(file);
    db.pragma('journal_mode = WAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('synchronous = NORMAL');
    db.pragma(`journal_size_limit = ${WAL_SIZE_LIMIT_BYTES}`);
    migrate(db);
    return new SqliteStore(db, onDisk ? file : null);
  }

  /**
   * Folds the WAL back into the database and truncates it when it has grown past
   * {@link WAL_SIZE_LIMIT_BYTES}. Never waits: with a reader in the way it tries again at the
   * next look (a busy timeout here would stall the event loop).
   * @returns the WAL's size in bytes afterwards (0 when there is none).
   */
  foldWal(): number {
    if (!this.file || !this.db.open) return 0;
    const size = walSize(this.file);
    if (size <= WAL_SIZE_LIMIT_BYTES) return size;
    this.db.pragma('busy_timeout = 0');
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
    } finally {
      this.db.pragma('busy_timeout = 5000');
    }
    return walSize(this.file);
  }

  async close(): Promise<void> {
    if (this.walWatch) clearInterval(this.walWatch);
    this.db.close();
  }
}

function walSize(file: string): number {
  try {
    return fs.statSync(`${file}-wal`).size;
  } catch {
    return 0;
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
      `INSERT INTO api_keys (id, account_id, name, environment, fingerprint, display_prefix, created_at, revoked_at, expires_at, replaced_by)
       VALUES (@id, @accountId, @name, @environment, @fingerprint, @displayPrefix, @createdAt, @revokedAt, @expiresAt, @replacedBy)`,
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
