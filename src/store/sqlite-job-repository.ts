import type Database from 'better-sqlite3';
import type { Environment, JobCallbackState, JobOutcome, JobRecord, JobRepository } from './store.js';
import { type JobRow, jobFromRow } from './store-rows.js';

/** The jobs and their queue in SQLite; a claim is one UPDATE … RETURNING, so no two runners share a job. */
export class SqliteJobRepository implements JobRepository {
  private readonly insertStatement;
  private readonly byId;
  private readonly newest;
  private readonly queuedCount;
  private readonly claimStatement;
  private readonly finishStatement;
  private readonly requeueStatement;
  private readonly expiredStatement;
  private readonly purgedStatement;
  private readonly callbackStatement;
  private readonly pendingStatement;

  constructor(db: Database.Database) {
    this.insertStatement = db.prepare(
      `INSERT INTO jobs (id, account_id, key_id, environment, kind, status, request, created_at, attempts, callback_url)
       VALUES (@id, @accountId, @keyId, @environment, @kind, @status, @request, @createdAt, @attempts, @callbackUrl)`,
    );
    this.byId = db.prepare<[string], JobRow>('SELECT * FROM jobs WHERE id = ?');
    this.newest = db.prepare<[string, string, number], JobRow>(
      'SELECT * FROM jobs WHERE account_id = ? AND environment = ? ORDER BY created_at DESC, rowid DESC LIMIT ?',
    );
    this.queuedCount = db.prepare<[string], { count: number }>(`SELECT COUNT(*) AS count FROM jobs WHERE key_id = ? AND status = 'queued'`);
    this.claimStatement = db.prepare<[string], JobRow>(
      `UPDATE jobs SET status = 'running', started_at = ?, attempts = attempts + 1
       WHERE id = (SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_at, rowid LIMIT 1) AND status = 'queued'
       RETURNING *`,
    );
    this.finishStatement = db.prepare(
      `UPDATE jobs SET status = @status, finished_at = @finishedAt, result_expires_at = @resultExpiresAt, audio = @audio, transcript = @transcript, error = @error
       WHERE id = @id AND status = 'running'`,
    );
    this.requeueStatement = db.prepare(`UPDATE jobs SET status = 'queued', started_at = NULL WHERE status = 'running'`);
    this.expiredStatement = db.prepare<[string, number], { id: string }>(
      `SELECT id FROM jobs WHERE result_expires_at IS NOT NULL AND result_expires_at <= ? AND purged_at IS NULL ORDER BY result_expires_at LIMIT ?`,
    );
    this.purgedStatement = db.prepare<[string, string]>('UPDATE jobs SET purged_at = ? WHERE id = ?');
    this.callbackStatement = db.prepare(
      'UPDATE jobs SET callback_delivered_at = @deliveredAt, callback_attempts = @attempts, callback_error = @error WHERE id = @id',
    );
    this.pendingStatement = db.prepare<[number, number], JobRow>(
      `SELECT * FROM jobs WHERE status IN ('succeeded', 'failed') AND callback_url IS NOT NULL AND callback_delivered_at IS NULL
       AND callback_attempts < ? ORDER BY finished_at LIMIT ?`,
    );
  }

  async insert(job: JobRecord): Promise<void> {
    const { id, accountId, keyId, environment, kind, status, request, createdAt, attempts, callbackUrl } = job;
    this.insertStatement.run({ id, accountId, keyId, environment, kind, status, request, createdAt, attempts, callbackUrl });
  }

  async findById(id: string): Promise<JobRecord | undefined> {
    const row = this.byId.get(id);
    return row && jobFromRow(row);
  }

  async list(accountId: string, environment: Environment, limit: number): Promise<JobRecord[]> {
    return this.newest.all(accountId, environment, limit).map(jobFromRow);
  }

  async queuedOf(keyId: string): Promise<number> {
    return this.queuedCount.get(keyId)!.count;
  }

  async claim(startedAt: string): Promise<JobRecord | undefined> {
    const row = this.claimStatement.get(startedAt);
    return row && jobFromRow(row);
  }

  async finish(id: string, outcome: JobOutcome): Promise<void> {
    this.finishStatement.run({
      id,
      status: outcome.status,
      finishedAt: outcome.finishedAt,
      resultExpiresAt: outcome.resultExpiresAt,
      audio: outcome.audio === null ? null : JSON.stringify(outcome.audio),
      transcript: outcome.transcript ? JSON.stringify(outcome.transcript) : null,
      error: outcome.error === null ? null : JSON.stringify(outcome.error),
    });
  }

  async requeueRunning(): Promise<number> {
    return this.requeueStatement.run().changes;
  }

  async requeueOrphaned(): Promise<number> {
    // One process runs the jobs of the embedded store: what runs is its own.
    return 0;
  }

  async expired(now: string, limit: number): Promise<string[]> {
    return this.expiredStatement.all(now, limit).map((row) => row.id);
  }

  async markPurged(id: string, at: string): Promise<void> {
    this.purgedStatement.run(at, id);
  }

  async recordCallback(id: string, state: JobCallbackState): Promise<void> {
    this.callbackStatement.run({ id, ...state });
  }

  async pendingCallbacks(maxAttempts: number, limit: number): Promise<JobRecord[]> {
    return this.pendingStatement.all(maxAttempts, limit).map(jobFromRow);
  }
}
