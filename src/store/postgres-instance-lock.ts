/**
 * This instance's sign of life in PostgreSQL: a session advisory lock on (namespace, instance
 * number), held by a connection of its own for as long as the store is open. A job an instance
 * claims carries its number; another instance sees in `pg_locks` whether the lock is still
 * held, so it puts back in the queue only the jobs of instances that died (their connection
 * closed with them), never the jobs another live instance is running.
 */
import { randomInt } from 'node:crypto';
import pg from 'pg';

/** The advisory lock namespace of instance locks ('SPRI'); objsubid 2 marks the two-key form. */
export const INSTANCE_LOCK_NAMESPACE = 0x53505249;

/** How many numbers are tried when one is taken already (two instances drew the same). */
const ATTEMPTS = 8;

/** The SQL condition "the instance whose number is in `column` is alive" (its lock is held). */
export function instanceAlive(column: string): string {
  return `EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
  AND classid = ${INSTANCE_LOCK_NAMESPACE}::oid AND objid = ${column}::oid)`;
}

/** The SQL condition "the instance that claimed the job is alive", over a column `claimed_by`. */
export const CLAIMER_ALIVE = instanceAlive('claimed_by');

/** Holds this instance's lock, taken the first time its number is needed. */
export class InstanceLock {
  private taking: Promise<{ client: pg.Client; number: number }> | null = null;

  constructor(private readonly config: pg.ClientConfig) {}

  /** This instance's number, once its lock is held. */
  async number(): Promise<number> {
    this.taking ??= this.take().catch((error: unknown) => {
      this.taking = null;
      throw error;
    });
    return (await this.taking).number;
  }

  private async take(): Promise<{ client: pg.Client; number: number }> {
    const client = new pg.Client(this.config);
    await client.connect();
    // A lost connection drops the lock: the next claim takes a new one.
    client.on('error', () => (this.taking = null));
    for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
      // Positive int4 (oid in pg_locks compares unsigned; keeping it positive keeps both the same).
      const number = randomInt(1, 2 ** 31 - 1);
      const { rows } = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS taken', [INSTANCE_LOCK_NAMESPACE, number]);
      if (rows[0]?.taken) return { client, number };
    }
    await client.end();
    throw new Error('no free instance number after several tries');
  }

  /** Lets the lock go (the store closes). */
  async release(): Promise<void> {
    const taking = this.taking;
    this.taking = null;
    if (!taking) return;
    const { client } = await taking.catch(() => ({ client: null }));
    await client?.end().catch(() => undefined);
  }
}
