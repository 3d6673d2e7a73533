/**
 * This instance's sign of life in PostgreSQL: a session advisory lock on (namespace, instance
 * number), held by a connection of its own for as long as the store is open. A job an instance
 * claims carries its number, and so do its shares of the deployment's limits and budgets;
 * another instance sees in `pg_locks` whether the lock is still held, so it takes back only
 * what instances that died held, never what another live instance is using.
 *
 * The number is the instance's for its whole life. When the lock's connection breaks (the
 * database restarted, the network dropped), the same number is taken again as soon as the
 * database lets it: a fresh number would orphan every slot and claim the instance still holds.
 * While the lock is away another instance may take those shares back; the listeners given to
 * {@link InstanceLock.onRetaken} put them in again.
 */
import { randomInt } from 'node:crypto';
import pg from 'pg';

/** The advisory lock namespace of instance locks ('SPRI'); objsubid 2 marks the two-key form. */
export const INSTANCE_LOCK_NAMESPACE = 0x53505249;

/** How many numbers are tried when one is taken already (two instances drew the same). */
const ATTEMPTS = 8;
/** The longest wait between two tries to take the lock again. */
const MAX_RETAKE_MS = 5000;

/** The SQL condition "the instance whose number is in `column` is alive" (its lock is held). */
export function instanceAlive(column: string): string {
  return `EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND granted AND objsubid = 2
  AND classid = ${INSTANCE_LOCK_NAMESPACE}::oid AND objid = ${column}::oid)`;
}

/** The SQL condition "the instance that claimed the job is alive", over a column `claimed_by`. */
export const CLAIMER_ALIVE = instanceAlive('claimed_by');

/** Holds this instance's lock, taken the first time its number is needed and again whenever it is lost. */
export class InstanceLock {
  private first: Promise<number> | null = null;
  private client: pg.Client | null = null;
  private retakeTimer: NodeJS.Timeout | null = null;
  private retakeDelayMs: number;
  private released = false;
  private readonly retakenListeners: (() => Promise<void>)[] = [];

  /**
   * @param retakeMs the first wait before the lock is taken again after a loss; it doubles
   *   with each failed try, up to five seconds
   */
  constructor(
    private readonly config: pg.ClientConfig,
    private readonly retakeMs = 250,
  ) {
    this.retakeDelayMs = retakeMs;
  }

  /** This instance's number, once its lock has been held; the same for the store's whole life. */
  async number(): Promise<number> {
    this.first ??= this.takeFirst().catch((error: unknown) => {
      this.first = null;
      throw error;
    });
    return await this.first;
  }

  /** Whether the lock is held right now (false while it is being taken again). */
  get held(): boolean {
    return this.client !== null;
  }

  /**
   * Runs `listener` each time the lock is held again after a loss: the time to put back what
   * another instance may have taken back meanwhile. A listener that fails is run again.
   */
  onRetaken(listener: () => Promise<void>): void {
    this.retakenListeners.push(listener);
  }

  /** Lets the lock go (the store closes). */
  async release(): Promise<void> {
    this.released = true;
    if (this.retakeTimer) clearTimeout(this.retakeTimer);
    this.retakeTimer = null;
    const first = this.first;
    if (first) await first.catch(() => undefined);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async takeFirst(): Promise<number> {
    const client = await this.connect();
    try {
      for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
        // Positive int4 (oid in pg_locks compares unsigned; keeping it positive keeps both the same).
        const number = randomInt(1, 2 ** 31 - 1);
        if (await this.tryLock(client, number)) {
          this.hold(client, number);
          return number;
        }
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    await client.end();
    throw new Error('no free instance number after several tries');
  }

  private async connect(): Promise<pg.Client> {
    const client = new pg.Client(this.config);
    // Until it is held, a broken connection is the caller's failure; afterwards `hold` watches it.
    client.on('error', () => undefined);
    await client.connect();
    return client;
  }

  private async tryLock(client: pg.Client, number: number): Promise<boolean> {
    const { rows } = await client.query<{ taken: boolean }>('SELECT pg_try_advisory_lock($1, $2) AS taken', [INSTANCE_LOCK_NAMESPACE, number]);
    return rows[0]?.taken === true;
  }

  /** Keeps `client` as the lock's connection and takes the lock again when it breaks. */
  private hold(client: pg.Client, number: number): void {
    this.client = client;
    this.retakeDelayMs = this.retakeMs;
    const lost = (): void => {
      if (this.client !== client) return;
      this.client = null;
      void client.end().catch(() => undefined);
      this.scheduleRetake(number);
    };
    client.on('error', lost);
    client.on('end', lost);
  }

  private scheduleRetake(number: number): void {
    if (this.released) return;
    this.retakeTimer = setTimeout(() => void this.retake(number), this.retakeDelayMs);
    this.retakeTimer.unref();
    this.retakeDelayMs = Math.min(MAX_RETAKE_MS, this.retakeDelayMs * 2);
  }

  /**
   * One try to take `number` again. It fails while the database is away, and while the old
   * connection still holds the lock on the database's side (a connection the network cut
   * lives there until its socket times out): then the instance still counts as alive.
   */
  private async retake(number: number): Promise<void> {
    this.retakeTimer = null;
    let client: pg.Client | null = null;
    try {
      client = await this.connect();
      if (!(await this.tryLock(client, number))) throw new Error('not taken');
    } catch {
      await client?.end().catch(() => undefined);
      this.scheduleRetake(number);
      return;
    }
    if (this.released) return void (await client.end().catch(() => undefined));
    this.hold(client, number);
    await this.tellRetaken();
  }

  /**
   * Runs the {@link onRetaken} listeners; when one fails (the database went away again), all
   * run again a while later, for as long as the lock is held: each writes back the whole of
   * what it holds, so running twice does no harm.
   */
  private async tellRetaken(): Promise<void> {
    let failed = false;
    for (const listener of this.retakenListeners) await listener().catch(() => (failed = true));
    if (!failed || this.released || !this.client) return;
    const client = this.client;
    setTimeout(() => {
      if (this.client === client) void this.tellRetaken();
    }, MAX_RETAKE_MS).unref();
  }
}
