import type Database from 'better-sqlite3';
import type { EntitlementRecord, EntitlementRepository, NewEntitlement } from './store.js';
import { type EntitlementRow, entitlementFromRow } from './store-rows.js';

/** Entitlements in SQLite; the ledger's repository draws from them in its own transactions. */
export class SqliteEntitlementRepository implements EntitlementRepository {
  private readonly insertStatement;
  private readonly byId;
  private readonly ofAccount;
  private readonly addCredits;
  private readonly removeStatement;
  private readonly drawStatement;
  private readonly noticeStatement;

  constructor(db: Database.Database) {
    this.insertStatement = db.prepare(
      `INSERT INTO entitlements (account_id, kind, direction, granted_seconds, granted_credits, valid_until, enforcement, created_at)
       VALUES (@accountId, @kind, @direction, @grantedSeconds, @grantedCredits, @validUntil, @enforcement, @createdAt)`,
    );
    this.byId = db.prepare<[number], EntitlementRow>('SELECT * FROM entitlements WHERE id = ? AND removed_at IS NULL');
    this.ofAccount = db.prepare<[string], EntitlementRow>('SELECT * FROM entitlements WHERE account_id = ? AND removed_at IS NULL ORDER BY id');
    this.addCredits = db.prepare<[number, number]>(`UPDATE entitlements SET granted_credits = granted_credits + ? WHERE id = ? AND kind = 'credit'`);
    this.removeStatement = db.prepare<[string, number]>('UPDATE entitlements SET removed_at = ? WHERE id = ? AND removed_at IS NULL');
    this.drawStatement = db.prepare<[number, number]>('UPDATE entitlements SET used = used + ? WHERE id = ?');
    this.noticeStatement = db.prepare<[string, number]>('UPDATE entitlements SET notices_sent = ? WHERE id = ?');
  }

  async insert(entitlement: NewEntitlement): Promise<EntitlementRecord> {
    const id = Number(this.insertStatement.run(entitlement).lastInsertRowid);
    return entitlementFromRow(this.byId.get(id)!);
  }

  async findById(id: number): Promise<EntitlementRecord | undefined> {
    const row = this.byId.get(id);
    return row && entitlementFromRow(row);
  }

  async list(accountId: string): Promise<EntitlementRecord[]> {
    return this.activeOf(accountId);
  }

  async topUp(id: number, credits: number): Promise<void> {
    this.addCredits.run(credits, id);
  }

  async remove(id: number): Promise<boolean> {
    return this.removeStatement.run(new Date().toISOString(), id).changes > 0;
  }

  /** The account's entitlements, read synchronously inside a ledger transaction. */
  activeOf(accountId: string): EntitlementRecord[] {
    return this.ofAccount.all(accountId).map(entitlementFromRow);
  }

  /** Adds to an entitlement's use (inside a ledger transaction). */
  draw(id: number, amount: number): void {
    this.drawStatement.run(amount, id);
  }

  /** Marks notices as sent (inside a ledger transaction). */
  markNotices(id: number, sent: readonly number[]): void {
    this.noticeStatement.run(JSON.stringify(sent), id);
  }
}
