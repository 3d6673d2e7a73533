/**
 * Calls as metered traffic: the dialplan's account (or the default one), realtime ledger
 * entries per direction written once, synthetic calls as sandbox traffic that nothing caps,
 * and a call's own use counted against what its account has left.
 */
import { describe, expect, it } from 'vitest';
import { AccountService } from '../../src/auth/account-service.js';
import { EntitlementService } from '../../src/entitlements/entitlement-service.js';
import { CallMeter, UnknownCallAccountError } from '../../src/metering/call-meter.js';
import { SqliteStore } from '../../src/store/sqlite-store.js';
import { DEFAULT_ACCOUNT_ID } from '../../src/store/store.js';

const WINDOW = ['2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z'] as const;

function meter(store: SqliteStore) {
  return new CallMeter({ accounts: store.accounts, entitlements: store.entitlements, usage: store.usage, rates: { tts: 1, stt: 1 } });
}

describe('CallMeter', () => {
  it("writes a call's use once, per direction, for its dialplan's account", async () => {
    const store = SqliteStore.open(':memory:');
    const account = await new AccountService(store.accounts).create('hotline-co');
    const call = await meter(store).open({ callId: 'abc@pbx', routeNumber: '0441234567', account: 'hotline-co', synthetic: false });
    await call.finish({ ttsSeconds: 12.3456, sttSeconds: 4 });
    await call.finish({ ttsSeconds: 99, sttSeconds: 99 });
    expect(await store.usage.summary(account.id, ...WINDOW)).toEqual([
      expect.objectContaining({ environment: 'live', direction: 'stt', mode: 'realtime', requests: 1, audioSeconds: 4 }),
      expect.objectContaining({ environment: 'live', direction: 'tts', mode: 'realtime', requests: 1, audioSeconds: 12.346 }),
    ]);
    expect(await store.usage.findByRequestId('call_abc@pbx_tts')).toMatchObject({ keyId: 'phone:0441234567' });
    await store.close();
  });

  it('meters a call placed through the API for the account and key that ordered it, not the dialplan file’s', async () => {
    const store = SqliteStore.open(':memory:');
    const ordering = await new AccountService(store.accounts).create('reminders-co');
    const call = await meter(store).open({
      callId: 'out-1',
      routeNumber: 'reminder',
      account: 'no-such-file-account',
      synthetic: false,
      orderedBy: { accountId: ordering.id, keyId: 'key_42' },
    });
    await call.finish({ ttsSeconds: 7, sttSeconds: 0 });
    expect(await store.usage.summary(ordering.id, ...WINDOW)).toEqual([
      expect.objectContaining({ environment: 'live', direction: 'tts', mode: 'realtime', requests: 1, audioSeconds: 7 }),
    ]);
    expect(await store.usage.findByRequestId('call_out-1_tts')).toMatchObject({ keyId: 'key_42' });
    await store.close();
  });

  it('counts a call without an account for the default one, and a synthetic call as sandbox traffic nothing caps', async () => {
    const store = SqliteStore.open(':memory:');
    await new EntitlementService(store.entitlements).add(DEFAULT_ACCOUNT_ID, { kind: 'evaluation', seconds: 1 });
    const synthetic = await meter(store).open({ callId: 'load-1', routeNumber: '*', account: undefined, synthetic: true });
    expect(await synthetic.check({ ttsSeconds: 500, sttSeconds: 500 })).toBeNull();
    await synthetic.finish({ ttsSeconds: 500, sttSeconds: 0 });
    expect(await store.usage.summary(DEFAULT_ACCOUNT_ID, ...WINDOW)).toEqual([expect.objectContaining({ environment: 'sandbox', audioSeconds: 500 })]);
    const [evaluation] = await store.entitlements.list(DEFAULT_ACCOUNT_ID);
    expect(evaluation!.used).toBe(0);
    await store.close();
  });

  it('holds a live call to what its account has left, its own use counted', async () => {
    const store = SqliteStore.open(':memory:');
    await new EntitlementService(store.entitlements).add(DEFAULT_ACCOUNT_ID, { kind: 'evaluation', seconds: 60, direction: 'tts' });
    const call = await meter(store).open({ callId: 'c1', routeNumber: '1', account: undefined, synthetic: false });
    expect(await call.check({ ttsSeconds: 30, sttSeconds: 0 })).toBeNull();
    expect(await call.check({ ttsSeconds: 60, sttSeconds: 0 })).toMatch(/used up by this call/);
    // Recognition is not covered by a tts-only allowance.
    expect(await call.check({ ttsSeconds: 0, sttSeconds: 1 })).toMatch(/no entitlement of the account covers stt/);
    await store.close();
  });

  it('refuses a dialplan account that does not exist', async () => {
    const store = SqliteStore.open(':memory:');
    await expect(meter(store).open({ callId: 'c2', routeNumber: '1', account: 'nobody', synthetic: false })).rejects.toThrow(UnknownCallAccountError);
    await store.close();
  });
});
