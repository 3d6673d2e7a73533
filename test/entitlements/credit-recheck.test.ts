/**
 * Work on credit is not cut at its cap (work in progress completes) but is checked again on a
 * timer: a long session whose account's credit is used up elsewhere is refused its next audio
 * within one check, while an evaluation allowance cuts at once.
 */
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../src/api/errors.js';
import type { Principal } from '../../src/auth/authenticate.js';
import { EntitlementService } from '../../src/entitlements/entitlement-service.js';
import { UsageMeter } from '../../src/metering/usage-meter.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';

const principal: Principal = { keyId: 'key_a', accountId: 'acct_a', environment: 'live', keyStatus: null };
const RATES = { tts: 1, stt: 1 };

function meterOf(store: SqliteStore): UsageMeter {
  return new UsageMeter({ usage: store.usage, entitlements: store.entitlements, budgets: { live: 100_000, sandbox: 100 }, rates: RATES, recheckMs: 30 });
}

const code = (action: () => void): string | null => {
  try {
    action();
    return null;
  } catch (error) {
    return error instanceof ApiError ? error.code : String(error);
  }
};

describe('credit checked again while work runs', () => {
  it('refuses the next audio of a session once the credit is used up elsewhere', async () => {
    const store = SqliteStore.open(':memory:');
    await new EntitlementService(store.entitlements).add('acct_a', { kind: 'credit', credits: 100 });
    const meter = meterOf(store);
    const session = await meter.lease(principal, 'tts', 'tts', 'req_session');
    // Past the credit: work on credit is not cut by its own draw.
    expect(code(() => session.drawTo(150))).toBeNull();
    // Another instance's work takes the rest of the credit; the next check ends the session's draws.
    await store.usage.record(
      {
        requestId: 'req_other',
        accountId: 'acct_a',
        keyId: 'key_b',
        environment: 'live',
        direction: 'tts',
        mode: 'batch',
        recordedAt: new Date().toISOString(),
        audioSeconds: 100,
      },
      RATES,
    );
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(code(() => session.drawTo(151))).toBe('tts.entitlement_exhausted');
    await session.commit({ mode: 'realtime' });
    // A new request is refused at once.
    await expect(meter.lease(principal, 'tts', 'tts', 'req_next')).rejects.toMatchObject({ code: 'tts.entitlement_exhausted' });
    await store.close();
  });

  it('cuts work under an evaluation allowance as it reaches the cap', async () => {
    const store = SqliteStore.open(':memory:');
    await new EntitlementService(store.entitlements).add('acct_a', { kind: 'evaluation', seconds: 10 });
    const lease = await meterOf(store).lease(principal, 'stt', 'stt', 'req_1');
    expect(code(() => lease.drawTo(9.5))).toBeNull();
    expect(code(() => lease.drawTo(10.5))).toBe('stt.entitlement_exhausted');
    lease.release();
    await store.close();
  });
});
