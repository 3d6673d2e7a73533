/**
 * Daily budgets across instances, against a real PostgreSQL (a cluster the test makes on a
 * loopback port): two instances (each a store and a usage meter of its own, as two `serve`
 * processes have) under one key never draw more than its budget together, because each
 * draws only within what it has claimed and claims are granted against the ledger and every
 * live instance's claims. Also a ledger write that the database holds up for work that is over
 * (a phone call, a realtime session, a job): tried again, counted once; a batch request still
 * waiting for its answer gets the failure instead.
 */
import { afterAll, describe, expect, it } from 'vitest';
import type { Principal } from '../../../src/auth/authenticate.js';
import { CallMeter } from '../../../src/metering/call-meter.js';
import { UsageMeter } from '../../../src/metering/usage-meter.js';
import { PostgresStore } from '../../../src/store/postgres-store.js';
import { postgresMissing, startPostgres, type PostgresRun, testPool } from '../../helpers/postgres.js';

const missing = postgresMissing();
if (missing) console.warn(`PostgreSQL budget claim tests skipped: ${missing}`);

let server: PostgresRun | null = null;
let databases = 0;

async function freshDatabase(): Promise<string> {
  server ??= await startPostgres();
  return server.createDatabase(`claims_${process.pid}_${databases++}`);
}

afterAll(async () => {
  await server?.stop();
});

const KEY: Principal = { keyId: 'key_shared', accountId: 'acct_default', environment: 'live', keyStatus: null };
const DAY = new Date().toISOString().slice(0, 10);

/** An instance: its own store (pool and instance lock) and meter, with a live budget of `budget` seconds. */
async function instance(url: string, budget: number) {
  const store = await PostgresStore.open(url);
  const meter = new UsageMeter({
    usage: store.usage,
    entitlements: store.entitlements,
    budgets: { live: budget, sandbox: budget },
    rates: { tts: 1, stt: 1 },
    claims: store.budgetClaims,
    claimTiming: { idleReturnMs: 200, shrinkEveryMs: 50 },
  });
  return { store, meter };
}

/** What `draw` throws; when it throws nothing, null where `mustThrow` is false. */
function refusal(draw: () => void, mustThrow = true): unknown {
  try {
    draw();
  } catch (error) {
    return error;
  }
  if (mustThrow) throw new Error('the draw was not refused');
  return null;
}

describe.skipIf(missing)('daily budgets shared by instances', () => {
  it('grants claims at once from two instances within the budget, not more', async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([PostgresStore.open(url), PostgresStore.open(url)]);
    try {
      const slot = { keyId: 'key_k', day: DAY, direction: 'tts' as const };
      const granted = await Promise.all(Array.from({ length: 12 }, (_, n) => (n % 2 ? a : b).budgetClaims.grow(slot, 100, 30)));
      expect(granted.reduce((sum, seconds) => sum + seconds, 0)).toBeCloseTo(100, 6);
      const heldBy = (odd: boolean) => granted.filter((_, n) => n % 2 === (odd ? 1 : 0)).reduce((sum, seconds) => sum + seconds, 0);
      await a.budgetClaims.shrink([{ slot, seconds: heldBy(true) }]);
      await b.budgetClaims.shrink([{ slot, seconds: heldBy(false) }]);
      // The ledger counts too: recorded audio leaves less to claim.
      await a.usage.record(
        {
          requestId: 'req_1',
          accountId: 'acct_default',
          keyId: 'key_k',
          environment: 'live',
          direction: 'tts',
          mode: 'batch',
          recordedAt: new Date().toISOString(),
          audioSeconds: 25,
        },
        { tts: 1, stt: 1 },
      );
      expect(await a.budgetClaims.grow(slot, 100, 30)).toBeCloseTo(30, 6);
      expect(await b.budgetClaims.grow(slot, 100, 100)).toBeCloseTo(45, 6);
      expect(await b.budgetClaims.grow(slot, 100, 100)).toBe(0);
      // Another direction: a budget of its own.
      expect(await b.budgetClaims.grow({ ...slot, direction: 'stt' }, 100, 30)).toBe(30);
      // The claims of an instance that is gone do not count.
      await a.close();
      expect(await b.budgetClaims.grow(slot, 100, 100)).toBeCloseTo(30, 6);
    } finally {
      await Promise.allSettled([a.close(), b.close()]);
    }
  });

  it('lets two instances under one key draw no more than its day budget together', async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([instance(url, 100), instance(url, 100)]);
    try {
      const first = await a.meter.lease(KEY, 'tts', 'tts', 'req_a');
      first.drawTo(50);
      // The first instance claimed more as it drew (in the background): wait for it to land.
      await expect.poll(() => first.available).toBeCloseTo(50, 6);
      // The second instance finds nothing left to claim: refused as over the day's budget.
      await expect(b.meter.lease(KEY, 'tts', 'tts', 'req_b')).rejects.toMatchObject({ code: 'tts.rate_limited' });
      first.drawTo(100);
      expect(refusal(() => first.drawTo(100.5))).toMatchObject({ code: 'tts.rate_limited', detail: expect.stringMatching(/daily audio budget/) });
      await first.commit({ mode: 'batch' });
      // All of it is in the ledger now: still nothing for either instance.
      await expect(b.meter.lease(KEY, 'tts', 'tts', 'req_c')).rejects.toMatchObject({ code: 'tts.rate_limited' });
      await expect(a.meter.lease(KEY, 'tts', 'tts', 'req_d')).rejects.toMatchObject({ code: 'tts.rate_limited' });
      expect((await a.store.usage.dayTotals(KEY.keyId, DAY, 'tts')).audioSeconds).toBe(100);
    } finally {
      await Promise.all([a.store.close(), b.store.close()]);
    }
  });

  it('gives a claim back once a key has no work in progress, so the other instance may use it', async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([instance(url, 100), instance(url, 100)]);
    try {
      // The first instance holds 60 s of the 100 while its lease is open.
      const first = await a.meter.lease(KEY, 'tts', 'tts', 'req_a');
      first.drawTo(5);
      const second = await b.meter.lease(KEY, 'tts', 'tts', 'req_b');
      expect(second.available).toBeCloseTo(40, 6);
      second.release();
      await new Promise((resolve) => setTimeout(resolve, 300));
      await first.commit({ mode: 'batch' });
      // Its 5 s are in the ledger; the other 55 come back once the key is idle on it, and the
      // other instance's lease, claiming more as it draws, gets to the whole 95 left.
      const later = await b.meter.lease(KEY, 'tts', 'tts', 'req_c');
      let drawn = 0;
      await expect
        .poll(
          async () => {
            if (refusal(() => later.drawTo(drawn + 5), false) === null) drawn += 5;
            await new Promise((resolve) => setTimeout(resolve, 5));
            return drawn;
          },
          { timeout: 10_000, interval: 1 },
        )
        .toBe(95);
      expect(refusal(() => later.drawTo(95.5))).toMatchObject({ code: 'tts.rate_limited' });
      await later.commit({ mode: 'batch' });
      expect((await b.store.usage.dayTotals(KEY.keyId, DAY, 'tts')).audioSeconds).toBe(100);
    } finally {
      await Promise.all([a.store.close(), b.store.close()]);
    }
  });

  it('shares a budget between work running on both instances at once', async () => {
    const url = await freshDatabase();
    const [a, b] = await Promise.all([instance(url, 300), instance(url, 300)]);
    try {
      // Each instance runs requests of 10 s, drawn a second at a time, until refused.
      const run = async (meter: UsageMeter, name: string): Promise<number> => {
        let billed = 0;
        for (let n = 0; ; n++) {
          const lease = await meter.lease(KEY, 'tts', 'tts', `${name}_${n}`).catch(() => null);
          if (!lease) return billed;
          let drawn = 0;
          try {
            for (let second = 1; second <= 10; second++) {
              lease.drawTo(second);
              drawn = second;
              await new Promise((resolve) => setImmediate(resolve));
            }
          } catch {
            // Refused midway: what was drawn is billed, as a request cut off by its budget is.
          }
          await lease.commit({ mode: 'batch' }, drawn);
          billed += drawn;
          if (drawn < 10) return billed;
        }
      };
      const [fromA, fromB] = await Promise.all([run(a.meter, 'a'), run(b.meter, 'b')]);
      const recorded = (await a.store.usage.dayTotals(KEY.keyId, DAY, 'tts')).audioSeconds;
      expect(recorded).toBe(fromA + fromB);
      expect(recorded).toBeLessThanOrEqual(300);
      // Both instances got work done: the budget is shared, not taken by the first.
      expect(fromA).toBeGreaterThan(0);
      expect(fromB).toBeGreaterThan(0);
    } finally {
      await Promise.all([a.store.close(), b.store.close()]);
    }
  }, 30_000);
});

/** Pauses of the patient ledger writes in these tests: about 3.2 s in all. */
const SHORT_PAUSES = [100, 100, 200, 400, 800, 1600];

/**
 * A store on a fresh database whose connections give up waiting for a lock after 200 ms (a
 * setting of the database), and `holdLedger`: another session locks the ledger while `during`
 * runs and 700 ms more, so the first tries of a write time out and a later one gets through.
 */
async function heldUpLedger() {
  const url = await freshDatabase();
  const admin = testPool(url);
  await admin.query(`ALTER DATABASE "${new URL(url).pathname.slice(1)}" SET lock_timeout = '200ms'`);
  const store = await PostgresStore.open(url);
  const blocker = await admin.connect();
  return {
    admin,
    store,
    holdLedger: async (during: () => Promise<void>) => {
      await blocker.query('BEGIN');
      await blocker.query('LOCK TABLE usage_ledger IN EXCLUSIVE MODE');
      await during();
      await new Promise((resolve) => setTimeout(resolve, 700));
      await blocker.query('COMMIT');
    },
    ledger: async () =>
      (
        await admin.query<{ request_id: string; audio_seconds: number; mode: string }>(
          'SELECT request_id, audio_seconds, mode FROM usage_ledger ORDER BY request_id',
        )
      ).rows,
    close: async () => {
      blocker.release();
      await admin.end();
      await store.close();
    },
  };
}

describe.skipIf(missing)('a call ledger write while the database holds it up', () => {
  it('is tried again until it gets through, and counted once', async () => {
    const { store, holdLedger, ledger, close } = await heldUpLedger();
    try {
      const meter = new CallMeter({
        accounts: store.accounts,
        entitlements: store.entitlements,
        usage: store.usage,
        rates: { tts: 1, stt: 1 },
        retryPausesMs: SHORT_PAUSES,
      });
      const allowance = await meter.open({ callId: 'held-up', routeNumber: '+41440000000', account: undefined, synthetic: true });
      let finishing: Promise<void> = Promise.resolve();
      await holdLedger(async () => {
        finishing = allowance.finish({ ttsSeconds: 12, sttSeconds: 8 });
      });
      await finishing;
      expect(await ledger()).toEqual([
        { request_id: 'call_held-up_stt', audio_seconds: 8, mode: 'realtime' },
        { request_id: 'call_held-up_tts', audio_seconds: 12, mode: 'realtime' },
      ]);
      expect((await store.usage.dayTotals('phone:+41440000000', DAY, 'tts')).audioSeconds).toBe(12);
    } finally {
      await close();
    }
  });
});

describe.skipIf(missing)('a realtime session ledger write while the database holds it up', () => {
  it('is tried again until it gets through, and counted once, and waited for; a batch request gets the failure', async () => {
    const { store, holdLedger, ledger, close } = await heldUpLedger();
    try {
      const meter = new UsageMeter({
        usage: store.usage,
        entitlements: store.entitlements,
        budgets: { live: 1000, sandbox: 1000 },
        rates: { tts: 1, stt: 1 },
        retryPausesMs: SHORT_PAUSES,
      });
      const session = await meter.lease(KEY, 'stt', 'stt', 'sess_held_up');
      session.drawTo(42);
      const request = await meter.lease(KEY, 'tts', 'tts', 'req_held_up');
      request.drawTo(3);
      let closing: Promise<void> = Promise.resolve();
      let settled = false;
      await holdLedger(async () => {
        closing = session.commit({ mode: 'realtime' });
        await expect(request.commit({ mode: 'batch' })).rejects.toThrow(/lock timeout/);
        // What the server waits for before it closes the store: the write still being tried,
        // which cannot land while the ledger is held.
        void meter.settled().then(() => (settled = true));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(settled).toBe(false);
      });
      await meter.settled();
      expect(await ledger()).toEqual([{ request_id: 'sess_held_up', audio_seconds: 42, mode: 'realtime' }]);
      await closing;
      expect((await store.usage.dayTotals(KEY.keyId, DAY, 'stt')).audioSeconds).toBe(42);
    } finally {
      await close();
    }
  });
});
