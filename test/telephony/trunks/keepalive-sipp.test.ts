/**
 * The OPTIONS keep-alive of a trunk that does not register (a carrier that knows the gateway by
 * its address), against SIPp answering OPTIONS: reachable with the round trip, then
 * unreachable once SIPp is gone (no answer within Timer F, shortened here), on the interval.
 */
import { eventually } from '../../helpers/eventually.js';
import { afterEach, describe, expect, it } from 'vitest';
import { sippScenario, startSippServer } from '../../helpers/sipp.js';
import { anyNumberDialplan, startTelephony, type StartedTelephony } from '../../helpers/started-telephony.js';

let telephony: StartedTelephony | null = null;
afterEach(async () => {
  await telephony?.close();
  telephony = null;
});

describe('trunk OPTIONS keep-alive', () => {
  it('finds the trunk reachable while it answers, and unreachable when it stops', async () => {
    const carrier = await startSippServer({ scenario: sippScenario('options.uas.xml'), calls: 0, timeoutMs: 30_000 });
    const trunks = ['trunks:', '  - name: ip-carrier', `    proxy: ${carrier.address}`, '    allow: [127.0.0.1]', '    options_interval_s: 1'].join('\n');
    telephony = await startTelephony(
      anyNumberDialplan('      - hangup: {}'),
      { SPRACHROHR_RTP_PORTS: '43100-43119' },
      // Timer F (64 × T1) of 1.6 s: an OPTIONS nobody answers fails within the test's time.
      { files: { 'trunks.yaml': trunks }, timers: { t1Ms: 25, t2Ms: 400, t4Ms: 500 } },
    );
    const status = () => telephony!.service.trunkStatus()[0]!;
    expect(status()).toMatchObject({ name: 'ip-carrier', registrar: null, proxy: carrier.address, registration: null });
    await eventually(() => status().keepalive?.reachable === true, 3000);
    const first = status().keepalive!;
    expect(first).toMatchObject({ lastStatus: 200, lastError: null });
    expect(first.roundTripMs).toBeGreaterThanOrEqual(0);
    expect(first.roundTripMs).toBeLessThan(500);
    // Pinged again on the interval.
    await eventually(() => status().keepalive!.lastCheckedAt !== first.lastCheckedAt, 2500);
    await carrier.stop();
    await eventually(() => status().keepalive?.reachable === false, 5000);
    expect(status().keepalive!.lastError).toBe('no answer to OPTIONS');
  });
});
