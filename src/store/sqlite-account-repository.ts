/** Accounts in the embedded SQLite store (table `accounts`, migration 3). */
import type Database from 'better-sqlite3';
import type { AccountChanges, AccountRecord, AccountRepository } from './store.js';
import { type AccountRow, accountFromRow } from './store-rows.js';

/** Accounts by id and by name. */
export class SqliteAccountRepository implements AccountRepository {
  private readonly insertStatement;
  private readonly byId;
  private readonly byName;
  private readonly all;
  private readonly updateStatement;

  constructor(db: Database.Database) {
    this.insertStatement = db.prepare(
      'INSERT INTO accounts (id, name, created_at, webhook_secret, emails) VALUES (@id, @name, @createdAt, @webhookSecret, @emails)',
    );
    this.byId = db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE id = ?');
    this.byName = db.prepare<[string], AccountRow>('SELECT * FROM accounts WHERE name = ?');
    this.all = db.prepare<[], AccountRow>('SELECT * FROM accounts ORDER BY created_at, rowid');
    this.updateStatement = db.prepare(
      'UPDATE accounts SET webhook_secret = COALESCE(@webhookSecret, webhook_secret), emails = COALESCE(@emails, emails) WHERE id = @id',
    );
  }

  async insert(record: AccountRecord): Promise<void> {
    this.insertStatement.run({ ...record, emails: JSON.stringify(record.emails) });
  }

  async findById(id: string): Promise<AccountRecord | undefined> {
    const row = this.byId.get(id);
    return row && accountFromRow(row);
  }

  async findByName(name: string): Promise<AccountRecord | undefined> {
    const row = this.byName.get(name);
    return row && accountFromRow(row);
  }

  async list(): Promise<AccountRecord[]> {
    return this.all.all().map(accountFromRow);
  }

  async update(id: string, changes: AccountChanges): Promise<void> {
    this.updateStatement.run({ id, webhookSecret: changes.webhookSecret ?? null, emails: changes.emails ? JSON.stringify(changes.emails) : null });
  }
}
