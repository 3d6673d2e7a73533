/** The jobs and their queue in the PostgreSQL store (table `jobs`, migration 3). */
import type pg from 'pg';
import { CLAIMER_ALIVE, type InstanceLock } from './postgres-instance-lock.js';
import type { Environment, JobCallbackState, JobOutcome, JobRecord, JobRepository } from './store.js';
import { type JobRow, jobFromRow } from './store-rows.js';

/** A JSON value for a jsonb parameter, or SQL null. */
const json = (value: unknown): string | null => (value === null || value === undefined ? null : JSON.stringify(value));

/**
 * The job queue shared by every instance on the database. A claim takes the oldest queued job
 * with `FOR UPDATE SKIP LOCKED`, so instances that claim at once each get a different job and
 * none waits for another's; the job carries the claiming instance's number, and only the jobs
 * of instances that are gone are put back in the queue.
 */
export class PostgresJobRepository implements JobRepository {
  constructor(
    private readonly pool: pg.Pool,
    private readonly instance: InstanceLock,
  ) {}

  async insert(job: JobRecord): Promise<void> {
    await this.pool.query(
      `INSERT INTO jobs (id, account_id, key_id, environment, kind, status, request, created_at, attempts, callback_url)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
      [job.id, job.accountId, job.keyId, job.environment, job.kind, job.status, job.request, job.createdAt, job.attempts, job.callbackUrl],
    );
  }

  async findById(id: string): Promise<JobRecord | undefined> {
    const { rows } = await this.pool.query<JobRow>('SELECT * FROM jobs WHERE id = $1', [id]);
    return rows[0] && jobFromRow(rows[0]);
  }

  async list(accountId: string, environment: Environment, limit: number): Promise<JobRecord[]> {
    const { rows } = await this.pool.query<JobRow>(
      'SELECT * FROM jobs WHERE account_id = $1 AND environment = $2 ORDER BY created_at DESC, seq DESC LIMIT $3',
      [accountId, environment, limit],
    );
    return rows.map(jobFromRow);
  }

  async queuedOf(keyId: string): Promise<number> {
    const { rows } = await this.pool.query<{ count: number }>(`SELECT COUNT(*)::int AS count FROM jobs WHERE key_id = $1 AND status = 'queued'`, [keyId]);
    return rows[0]?.count ?? 0;
  }

  async claim(startedAt: string): Promise<JobRecord | undefined> {
    const instance = await this.instance.number();
    const { rows } = await this.pool.query<JobRow>(
      `UPDATE jobs SET status = 'running', started_at = $1, attempts = attempts + 1, claimed_by = $2
       WHERE id = (SELECT id FROM jobs WHERE status = 'queued' ORDER BY created_at, seq LIMIT 1 FOR UPDATE SKIP LOCKED)
       RETURNING *`,
      [startedAt, instance],
    );
    return rows[0] && jobFromRow(rows[0]);
  }

  async finish(id: string, outcome: JobOutcome): Promise<void> {
    await this.pool.query(
      `UPDATE jobs SET status = $2, finished_at = $3, result_expires_at = $4, audio = $5, transcript = $6, error = $7, claimed_by = NULL
       WHERE id = $1 AND status = 'running'`,
      [id, outcome.status, outcome.finishedAt, outcome.resultExpiresAt, json(outcome.audio), json(outcome.transcript), json(outcome.error)],
    );
  }

  async requeueOrphaned(): Promise<number> {
    return this.requeueRunning();
  }

  async requeueRunning(): Promise<number> {
    // Only the jobs of instances whose lock is gone (crashed, or stopped mid-job): the same at
    // start and while running.
    const result = await this.pool.query(
      `UPDATE jobs SET status = 'queued', started_at = NULL, claimed_by = NULL WHERE status = 'running' AND (claimed_by IS NULL OR NOT ${CLAIMER_ALIVE})`,
    );
    return result.rowCount ?? 0;
  }

  async expired(now: string, limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ id: string }>(
      'SELECT id FROM jobs WHERE result_expires_at IS NOT NULL AND result_expires_at <= $1 AND purged_at IS NULL ORDER BY result_expires_at LIMIT $2',
      [now, limit],
    );
    return rows.map((row) => row.id);
  }

  async markPurged(id: string, at: string): Promise<void> {
    await this.pool.query('UPDATE jobs SET purged_at = $2 WHERE id = $1', [id, at]);
  }

  async recordCallback(id: string, state: JobCallbackState): Promise<void> {
    await this.pool.query('UPDATE jobs SET callback_delivered_at = $2, callback_attempts = $3, callback_error = $4 WHERE id = $1', [
      id,
      state.deliveredAt,
      state.attempts,
      state.error,
    ]);
  }

  async pendingCallbacks(maxAttempts: number, limit: number): Promise<JobRecord[]> {
    const { rows } = await this.pool.query<JobRow>(
      `SELECT * FROM jobs WHERE status IN ('succeeded', 'failed') AND callback_url IS NOT NULL AND callback_delivered_at IS NULL
       AND callback_attempts < $1 ORDER BY finished_at LIMIT $2`,
      [maxAttempts, limit],
    );
    return rows.map(jobFromRow);
  }
}
