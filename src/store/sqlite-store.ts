import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import type { BlobArea, BlobStore } from './blob-store.js';
import { FileBlobStore } from './file-blob-store.js';
import { LocalLimitCounters } from './limit-counters.js';
import { SqliteAccountRepository } from './sqlite-account-repository.js';
import { SqliteEntitlementRepository } from './sqlite-entitlement-repository.js';
import { SqliteJobRepository } from './sqlite-job-repository.js';
import { SqliteRecordingRepository } from './sqlite-recording-repository.js';
import { SqliteUsageRepository } from './sqlite-usage-repository.js';
import { MIGRATIONS } from './sqlite-migrations.js';
import { type KeyRow, keyFromRow } from './store-rows.js';
import type {
  AccountRepository,
  ApiKeyChanges,
  ApiKeyRecord,
  EntitlementRepository,
  JobRepository,
  KeyRepository,
  RecordingRepository,
  Store,
  UsageRepository,
} from './store.js';

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
  readonly entitlements: EntitlementRepository;
  readonly recordings: RecordingRepository;
  readonly jobs: JobRepository;
  /** One process's counters: the embedded store serves one instance. */
  readonly limits = new LocalLimitCounters();
  /** None: one instance counts its own work in progress exactly (the usage meter does). */
  readonly budgetClaims = null;
  private readonly db: Database.Database;
  private readonly walWatch: NodeJS.Timeout | null;

  private constructor(
    db: Database.Database,
    private readonly file: string | null,
  ) {
    this.db = db;
    this.accounts = new SqliteAccountRepository(db);
    this.keys = new SqliteKeyRepository(db);
    const entitlements = new SqliteEntitlementRepository(db);
    this.entitlements = entitlements;
    this.usage = new SqliteUsageRepository(db, entitlements);
    this.recordings = new SqliteRecordingRepository(db);
    this.jobs = new SqliteJobRepository(db);
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

  /** {@inheritDoc Store.blobs} The embedded store keeps bytes as files in `folder`. */
  blobs(_area: BlobArea, folder: string): BlobStore {
    return new FileBlobStore(folder);
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
    return row && keyFromRow(row);
  }

  async findByFingerprint(fingerprint: string): Promise<ApiKeyRecord | undefined> {
    const row = this.byFingerprint.get(fingerprint);
    return row && keyFromRow(row);
  }

  async list(): Promise<ApiKeyRecord[]> {
    return this.all.all().map(keyFromRow);
  }

  async update(id: string, changes: ApiKeyChanges): Promise<void> {
    const columns: Record<keyof ApiKeyChanges, string> = { revokedAt: 'revoked_at', expiresAt: 'expires_at', replacedBy: 'replaced_by' };
    const entries = (Object.keys(changes) as Array<keyof ApiKeyChanges>).filter((k) => changes[k] !== undefined);
    if (entries.length === 0) return;
    const assignments = entries.map((k) => `${columns[k]} = @${k}`).join(', ');
    this.db.prepare(`UPDATE api_keys SET ${assignments} WHERE id = @id`).run({ ...changes, id });
  }
}
