/**
 * The ledger and the entitlements agree: a live entry draws from the account's entitlements in
 * the same transaction, once per request id; sandbox entries draw nothing; a credit's 80 % and
 * 95 % notices become due once each.
 */
import { describe, expect, it } from 'vitest';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import type { LedgerEntry } from '../../src/store/store.js';

const RATES = { tts: 1, stt: 1 };

function entry(requestId: string, audioSeconds: number, changes: Partial<LedgerEntry> = {}): LedgerEntry {
  return {
    requestId,
    accountId: 'acct_a',
    keyId: 'key_a',
    environment: 'live',
    direction: 'tts',
    mode: 'batch',
    recordedAt: '2026-11-25T10:00:00.000Z',
    audioSeconds,
    ...changes,
  };
}

describe('entitlement draws in the ledger', () => {
  it('draw once per request id, never for sandbox traffic, and make each notice due once', async () => {
    const store = SqliteStore.open(':memory:');
    const credit = await store.entitlements.insert({
      accountId: 'acct_a',
      kind: 'credit',
      direction: 'any',
      grantedSeconds: null,
      grantedCredits: 100,
      validUntil: null,
      enforcement: 'hard',
      createdAt: '2026-11-01T00:00:00.000Z',
    });
    const percents = async (outcome: Promise<{ notices: ReadonlyArray<{ percent: number }> }>) => (await outcome).notices.map((notice) => notice.percent);
    expect(await percents(store.usage.record(entry('r1', 70), RATES))).toEqual([]);
    expect(await percents(store.usage.record(entry('r2', 15), RATES))).toEqual([80]);
    // The same request again changes nothing.
    expect(await store.usage.record(entry('r2', 15), RATES)).toEqual({ recorded: false, notices: [] });
    expect(await percents(store.usage.record(entry('r3', 5, { environment: 'sandbox' }), RATES))).toEqual([]);
    expect((await store.entitlements.findById(credit.id))!.used).toBe(85);
    // Past 95 % and beyond the grant (work in progress completes): one notice, the highest.
    const [notice] = (await store.usage.record(entry('r4', 20), RATES)).notices;
    expect(notice).toMatchObject({ percent: 95, entitlement: { id: credit.id, used: 105, noticesSent: [80, 95] } });
    expect(await percents(store.usage.record(entry('r5', 1), RATES))).toEqual([]);
    // Another account's entry draws nothing from it.
    await store.usage.record(entry('r6', 50, { accountId: 'acct_b' }), RATES);
    expect((await store.entitlements.findById(credit.id))!.used).toBe(106);
    await store.close();
  });
});
