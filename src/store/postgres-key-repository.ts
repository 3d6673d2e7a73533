/** API keys in the PostgreSQL store (table `api_keys`, migration 1): only their fingerprints. */
import type pg from 'pg';
import type { ApiKeyChanges, ApiKeyRecord, KeyRepository } from './store.js';
import { type KeyRow, keyFromRow } from './store-rows.js';

/** Keys by id and by fingerprint. */
export class PostgresKeyRepository implements KeyRepository {
  constructor(private readonly pool: pg.Pool) {}

  async insert(record: ApiKeyRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO api_keys (id, account_id, name, environment, fingerprint, display_prefix, created_at, revoked_at, expires_at, replaced_by)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [
        record.id,
        record.accountId,
        record.name,
        record.environment,
        record.fingerprint,
        record.displayPrefix,
        record.createdAt,
        record.revokedAt,
        record.expiresAt,
        record.replacedBy,
      ],
    );
  }

  async findById(id: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.pool.query<KeyRow>('SELECT * FROM api_keys WHERE id = $1', [id]);
    return rows[0] && keyFromRow(rows[0]);
  }

  async findByFingerprint(fingerprint: string): Promise<ApiKeyRecord | undefined> {
    const { rows } = await this.pool.query<KeyRow>('SELECT * FROM api_keys WHERE fingerprint = $1', [fingerprint]);
    return rows[0] && keyFromRow(rows[0]);
  }

  async list(): Promise<ApiKeyRecord[]> {
    const { rows } = await this.pool.query<KeyRow>('SELECT * FROM api_keys ORDER BY created_at, seq');
    return rows.map(keyFromRow);
  }

  async update(id: string, changes: ApiKeyChanges): Promise<void> {
    // Only the fields given change; a field given as null is cleared.
    const columns: Record<keyof ApiKeyChanges, string> = { revokedAt: 'revoked_at', expiresAt: 'expires_at', replacedBy: 'replaced_by' };
    const fields = (Object.keys(columns) as Array<keyof ApiKeyChanges>).filter((field) => changes[field] !== undefined);
    if (fields.length === 0) return;
    const assignments = fields.map((field, index) => `${columns[field]} = $${index + 2}`).join(', ');
    await this.pool.query(`UPDATE api_keys SET ${assignments} WHERE id = $1`, [id, ...fields.map((field) => changes[field])]);
  }
}
