/**
 * Ledger writes for work that is over and cannot be asked again (a call that ended, a realtime
 * session that closed, a job whose result is kept): a write the store fails (a database busy
 * beyond the pool's wait, or briefly away) is tried again, and the entry's request id makes a
 * second write of one that did get through count once.
 */
import type { CreditRates, LedgerEntry, RecordOutcome, UsageRepository } from '../store/store.js';

/** A failed ledger write is tried again after these pauses, about half a minute in all. */
export const LEDGER_RETRY_PAUSES_MS: readonly number[] = [250, 500, 1000, 2000, 4000, 8000, 16000];

/**
 * The ledger writes of one meter still under way, so that the server can wait for them before
 * it closes the store: closed under a write that is retrying, the store would fail each later
 * try at once, and the entry would be lost.
 */
export class PendingLedgerWrites {
  private readonly writes = new Set<Promise<unknown>>();

  /** Keeps `write` until it settles; answers it. */
  track<T>(write: Promise<T>): Promise<T> {
    this.writes.add(write);
    const forget = (): void => void this.writes.delete(write);
    write.then(forget, forget);
    return write;
  }

  /** Resolves once every write under way now has succeeded or given up (about half a minute at most). */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.writes]);
  }
}

/**
 * Writes `entry`, trying again after each of `pausesMs` while the store fails.
 * @throws the last failure, once every pause is spent
 */
export async function recordPatiently(
  usage: UsageRepository,
  entry: LedgerEntry,
  rates: CreditRates,
  pausesMs: readonly number[] = LEDGER_RETRY_PAUSES_MS,
): Promise<RecordOutcome> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await usage.record(entry, rates);
    } catch (error) {
      const pause = pausesMs[attempt];
      if (pause === undefined) throw error;
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }
}
