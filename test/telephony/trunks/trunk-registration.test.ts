/**
 * A registration's timing against a scripted registrar (the SIP exchange itself is tested
 * with SIPp and Kamailio): a binding whose refreshes go unanswered stays registered until it
 * runs out, is tried again before that, and then shows failed.
 */
import { describe, expect, it } from 'vitest';
import { SipHeaders, type SipRequest, type SipResponse } from '../../../src/telephony/sip/sip-message.js';
import { checkTrunks } from '../../../src/telephony/trunks/trunk-loader.js';
import { refreshDelayMs, TrunkRegistration } from '../../../src/telephony/trunks/trunk-registration.js';
import { eventually } from '../../helpers/eventually.js';

const [trunk] = checkTrunks('trunks.yaml', 'trunks:\n  - name: t\n    registrar: 192.0.2.1\n    username: gw\n    password_env: P\n', { P: 'secret' });

/** A 200 granting `seconds` to the REGISTER's Contact. */
function granted(request: SipRequest, seconds: number): SipResponse {
  const headers = new SipHeaders([
    ['Via', request.headers.get('Via')!],
    ['Contact', `${request.headers.get('Contact')!};expires=${seconds}`],
  ]);
  return { kind: 'response', status: 200, reason: 'OK', headers, body: Buffer.alloc(0) };
}

describe('a registration whose refreshes go unanswered', () => {
  it('stays registered while the binding runs, retries before it runs out, then shows failed', async () => {
    const sent: number[] = [];
    let answering = true;
    const client = {
      product: undefined,
      contactFor: () => ({ host: '127.0.0.1', port: 5060 }),
      async request(request: SipRequest) {
        sent.push(performance.now());
        return answering ? granted(request, 3) : null;
      },
    };
    const registration = new TrunkRegistration(trunk!, client, { retryBaseMs: 100, retryMaxMs: 60_000, unregisterTimeoutMs: 100 });
    registration.start();
    await eventually(() => registration.status().state === 'registered', 1000);
    const binding = Date.parse(registration.status().expiresAt!);
    answering = false;
    // The refresh at half the 3 s goes unanswered: still registered, the next try well before the end.
    await eventually(() => registration.status().failures === 1, refreshDelayMs(3) + 1000);
    expect(registration.status()).toMatchObject({ state: 'registered', lastError: 'no answer from the registrar' });
    expect(Date.parse(registration.status().nextAttemptAt!)).toBeLessThan(binding);
    await eventually(() => Date.now() > binding, 3000);
    expect(registration.status()).toMatchObject({ state: 'failed', expiresAt: null });
    expect(sent.length).toBeGreaterThanOrEqual(3);
    await registration.stop();
    expect(registration.status().state).toBe('unregistered');
  });
});
