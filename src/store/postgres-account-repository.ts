/** Accounts in the PostgreSQL store (table `accounts`, migration 1). */
import type pg from 'pg';
import type { AccountChanges, AccountRecord, AccountRepository } from './store.js';
import { type AccountRow, accountFromRow } from './store-rows.js';

/** Accounts by id and by name. */
export class PostgresAccountRepository implements AccountRepository {
  constructor(private readonly pool: pg.Pool) {}

  async insert(record: AccountRecord): Promise<void> {
    await this.pool.query('INSERT INTO accounts (id, name, created_at, webhook_secret, emails) VALUES ($1, $2, $3, $4, $5)', [
      record.id,
      record.name,
      record.createdAt,
      record.webhookSecret,
      JSON.stringify(record.emails),
    ]);
  }

  async findById(id: string): Promise<AccountRecord | undefined> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts WHERE id = $1', [id]);
    return rows[0] && accountFromRow(rows[0]);
  }

  async findByName(name: string): Promise<AccountRecord | undefined> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts WHERE name = $1', [name]);
    return rows[0] && accountFromRow(rows[0]);
  }

  async list(): Promise<AccountRecord[]> {
    const { rows } = await this.pool.query<AccountRow>('SELECT * FROM accounts ORDER BY created_at, seq');
    return rows.map(accountFromRow);
  }

  async update(id: string, changes: AccountChanges): Promise<void> {
    await this.pool.query('UPDATE accounts SET webhook_secret = COALESCE($2, webhook_secret), emails = COALESCE($3::jsonb, emails) WHERE id = $1', [
      id,
      changes.webhookSecret ?? null,
      changes.emails ? JSON.stringify(changes.emails) : null,
    ]);
  }
}
