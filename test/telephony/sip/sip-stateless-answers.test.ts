/**
 * Requests the embedded SIP endpoint answers at once keep no transaction (RFC 3261 section
 * 8.2.7), over real UDP sockets: OPTIONS, unknown methods and requests for calls that do not
 * exist leave nothing behind; a retransmission is answered again with the same To tag; and a
 * full transaction table refuses new requests only until its transactions end. (Strangers'
 * refusals and the table's bound are probed in test/security/sip-probes.test.ts.)
 */
import { pino } from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import type { SipDialog } from '../../../src/telephony/sip/sip-dialog.js';
import { SipEndpoint, type SipEndpointOptions } from '../../../src/telephony/sip/sip-endpoint.js';
import type { SipMessage, SipResponse } from '../../../src/telephony/sip/sip-message.js';
import { Peer, sipRequest } from '../../helpers/sip-peer.js';

const TIMERS = { t1Ms: 40, t2Ms: 320, t4Ms: 200 };

const endpoints: SipEndpoint[] = [];
const peers: Array<{ close(): void }> = [];
const ringing: SipDialog[] = [];

/** An endpoint with a peer on loopback; every admitted call rings. */
async function start(options: Partial<SipEndpointOptions> = {}): Promise<{ endpoint: SipEndpoint; peer: Peer }> {
  const endpoint = new SipEndpoint({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }), timers: TIMERS, ...options });
  endpoint.onCall((dialog) => {
    ringing.push(dialog);
    dialog.ring();
  });
  await endpoint.listen();
  endpoints.push(endpoint);
  const peer = await Peer.udp(endpoint.ports.udp);
  peers.push(peer);
  return { endpoint, peer };
}

const answerTo = (callId: string, status?: number) => (message: SipMessage) =>
  message.kind === 'response' && message.headers.get('Call-ID') === callId && (status === undefined || message.status === status);
const toTagOf = (message: SipMessage) => /;\s*tag=([^;\s]+)/.exec(message.headers.get('To') ?? '')?.[1];
const branchOf = (message: SipMessage) => /branch=([^;\s]+)/.exec(message.headers.get('Via') ?? '')?.[1];

afterEach(() => {
  for (const dialog of ringing.splice(0)) dialog.reject(486);
  for (const peer of peers.splice(0)) peer.close();
});
afterAll(async () => {
  for (const endpoint of endpoints) await endpoint.close();
});

describe('requests answered at once', () => {
  it('leave no transaction: OPTIONS, unknown methods, requests for calls that do not exist', async () => {
    const { endpoint, peer } = await start();
    const probes: Array<[method: string, callId: string, status: number, toTag?: string]> = [
      ['OPTIONS', 'probe-options', 200],
      ['REGISTER', 'probe-register', 405],
      ['BYE', 'probe-bye', 481],
      ['CANCEL', 'probe-cancel', 481],
      ['INFO', 'probe-info', 481, 'no-such-dialog'],
    ];
    for (const [method, callId, , toTag] of probes) peer.write(sipRequest(peer, method, { callId, cseq: 1, ...(toTag ? { toTag } : {}) }));
    for (const [method, callId, status] of probes) {
      const answer = (await peer.next(answerTo(callId))) as SipResponse;
      expect([method, answer.status]).toEqual([method, status]);
    }
    expect(endpoint.serverTransactionCount).toBe(0);
  });

  it('answer a retransmission again with the same To tag, and another request with another', async () => {
    const { peer } = await start();
    const options = sipRequest(peer, 'OPTIONS', { callId: 'retransmitted', cseq: 1, branch: 'z9hG4bK-same' });
    peer.write(options);
    await peer.next(answerTo('retransmitted'));
    peer.write(options);
    await peer.next(answerTo('retransmitted'), 1);
    peer.write(sipRequest(peer, 'OPTIONS', { callId: 'another', cseq: 1 }));
    const other = await peer.next(answerTo('another'));
    const [first, second] = peer.received.filter(answerTo('retransmitted'));
    expect(toTagOf(first!)).toMatch(/^[0-9a-f]{16}$/);
    expect(toTagOf(second!)).toBe(toTagOf(first!));
    expect(toTagOf(other)).not.toBe(toTagOf(first!));
  });
});

describe('a full transaction table', () => {
  it('refuses new requests with 503 only until its transactions end', async () => {
    const { endpoint, peer } = await start({ maxServerTransactions: 2 });
    for (const callId of ['first', 'second']) peer.write(sipRequest(peer, 'INVITE', { callId, cseq: 1 }));
    await Promise.all(['first', 'second'].map((callId) => peer.next(answerTo(callId, 180))));
    peer.write(sipRequest(peer, 'INVITE', { callId: 'refused', cseq: 1 }));
    await peer.next(answerTo('refused', 503));
    // The ringing calls end busy; once their 486s are acknowledged (Timer I) the table is empty.
    for (const dialog of ringing.splice(0)) dialog.reject(486);
    for (const callId of ['first', 'second']) {
      const busy = await peer.next(answerTo(callId, 486));
      peer.write(sipRequest(peer, 'ACK', { callId, cseq: 1, toTag: toTagOf(busy)!, branch: branchOf(busy)! }));
    }
    while (endpoint.serverTransactionCount > 0) await new Promise((resolve) => setTimeout(resolve, 10));
    peer.write(sipRequest(peer, 'INVITE', { callId: 'later', cseq: 1 }));
    await peer.next(answerTo('later', 180));
  });
});
