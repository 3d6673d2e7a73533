/**
 * Blind transfer from the embedded endpoint: a SIPp caller is answered, then asked by REFER
 * to call a target (Refer-To, Referred-By and an extra header checked by the scenario), and
 * reports by NOTIFY with a message/sipfrag body; the outcome follows from the REFER's answer
 * and the NOTIFYs (transferred, refused, failed, or failed after no final NOTIFY in time).
 * The BYE that ends the call carries a Q.850 Reason. A scripted peer covers the orders SIPp
 * does not play: a NOTIFY that overtakes the 202, one after the caller's BYE, one of another
 * event package, and NOTIFY or REFER outside any call.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ReferOutcome } from '../../../src/telephony/call/call-dialog.js';
import type { SipDialog } from '../../../src/telephony/sip/sip-dialog.js';
import { SipEndpoint } from '../../../src/telephony/sip/sip-endpoint.js';
import type { SipRequest, SipResponse } from '../../../src/telephony/sip/sip-message.js';
import { Peer, request, response, sipRequest } from '../../helpers/sip-peer.js';
import { responseText } from '../../helpers/sip-responses.js';
import { assertSippPassed, removeSippRuns, requireSipp, sippScenario, startSipp, type SippTransport } from '../../helpers/sipp.js';

const TIMERS = { t1Ms: 100, t2Ms: 800, t4Ms: 500 };
const ANSWER = {
  contentType: 'application/sdp',
  body: Buffer.from('v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 7000 RTP/AVP 0\r\n'),
};
const TARGET = 'sip:+41441234567@192.0.2.10:5060';

let endpoint: SipEndpoint;

beforeAll(async () => {
  await requireSipp();
  endpoint = new SipEndpoint({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }), timers: TIMERS });
  await endpoint.listen();
});
afterAll(async () => {
  await endpoint?.close();
  await removeSippRuns();
});

/**
 * Answers the next call of a SIPp caller running `scenario`, hands the answered dialog to
 * `transfer`, hangs up after it and returns its outcome once SIPp passed.
 */
async function transferCall(
  scenario: string,
  variables: Record<string, string>,
  transfer: (dialog: SipDialog) => Promise<ReferOutcome>,
  transport: SippTransport = 'u1',
): Promise<ReferOutcome> {
  const called = new Promise<SipDialog>((resolve) => endpoint.onCall(resolve));
  const port = transport === 'u1' ? endpoint.ports.udp : endpoint.ports.tcp;
  const run = await startSipp({ scenario: sippScenario(scenario), target: `127.0.0.1:${port}`, transport, service: 'hotline', timeoutMs: 15_000, variables });
  const dialog = await Promise.race([called, run.result.then((result) => Promise.reject(new Error(`SIPp ended before calling:\n${result.report}`)))]);
  await dialog.accept(ANSWER);
  const outcome = await transfer(dialog);
  await dialog.hangup('transferred to the hotline');
  assertSippPassed(await run.result);
  expect(endpoint.activeDialogs).toBe(0);
  return outcome;
}

describe('REFER from an answered call', () => {
  it('reports transferred when the caller NOTIFYs 100 then 200 (UDP and TCP)', async () => {
    for (const transport of ['u1', 't1'] as const) {
      const outcome = await transferCall(
        'refer-transfer.xml',
        { final_status: '200' },
        (dialog) => dialog.refer(TARGET, { headers: [['X-Transfer-Reason', 'queue 7']] }),
        transport,
      );
      expect(outcome).toEqual({ result: 'transferred', status: 200 });
    }
  }, 30_000);

  it('reports refused with the status when the REFER is answered 603', async () => {
    const outcome = await transferCall('refer-declined.xml', {}, (dialog) => dialog.refer(TARGET));
    expect(outcome).toEqual({ result: 'refused', status: 603 });
  });

  it('reports failed with the sipfrag status when the target was busy (486)', async () => {
    const outcome = await transferCall('refer-transfer.xml', { final_status: '486' }, (dialog) =>
      dialog.refer(`<${TARGET}>`, { headers: [['X-Transfer-Reason', 'queue 7']], referredBy: 'sip:hotline@127.0.0.1' }),
    );
    expect(outcome).toEqual({ result: 'failed', status: 486 });
  });

  it('reports failed without a status when no final NOTIFY comes in time', async () => {
    const started = Date.now();
    const outcome = await transferCall('refer-unreported.xml', {}, (dialog) => dialog.refer(TARGET, { timeoutMs: 400 }));
    expect(outcome).toEqual({ result: 'failed', status: null });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('stops waiting when the signal aborts, and refuses targets that are not SIP URIs', async () => {
    const outcome = await transferCall('refer-unreported.xml', {}, async (dialog) => {
      await expect(dialog.refer('tel:+41441234567')).rejects.toThrow(RangeError);
      await expect(dialog.refer(TARGET, { headers: [['Refer-To', 'sip:elsewhere@192.0.2.1']] })).rejects.toThrow(/Refer-To/);
      await expect(dialog.refer(TARGET, { headers: [['X-Evil', 'a\r\nBye: now']] })).rejects.toThrow(/line break/);
      return dialog.refer(TARGET, {}, AbortSignal.timeout(300));
    });
    expect(outcome).toEqual({ result: 'failed', status: null });
  });
});

describe('NOTIFY and REFER as the scripted peer sends them', () => {
  /** A call from `peer`, answered; returns the dialog and our tag. */
  async function answeredCall(peer: Peer, callId: string): Promise<{ dialog: SipDialog; toTag: string }> {
    const called = new Promise<SipDialog>((resolve) => endpoint.onCall(resolve));
    peer.write(sipRequest(peer, 'INVITE', { callId, cseq: 1, body: 'v=0\r\n' }));
    const dialog = await called;
    const accepted = dialog.accept(ANSWER);
    const ok = (await peer.next(response(200, 'INVITE'))) as SipResponse;
    const toTag = /tag=([^;]+)/.exec(ok.headers.get('To')!)![1]!;
    peer.write(sipRequest(peer, 'ACK', { callId, cseq: 1, toTag }));
    await accepted;
    return { dialog, toTag };
  }

  const answer = (sent: SipRequest, status: number, reason: string): string => responseText(sent, status, { reason });
  const notify = (sipfrag: string, state: string, event = 'refer') => [
    `Event: ${event}`,
    `Subscription-State: ${state}`,
    'Content-Type: message/sipfrag',
    `Content-Length: ${sipfrag.length}`,
    '',
    sipfrag,
  ];
  /** A NOTIFY from the peer (headers written by hand: sipRequest has no room for a non-SDP body). */
  const notifyText = (peer: Peer, callId: string, toTag: string, cseq: number, lines: string[]): string =>
    sipRequest(peer, 'NOTIFY', { callId, cseq, toTag }).replace(/Content-Length: 0\r\n\r\n$/, lines.join('\r\n'));

  it('takes a final NOTIFY that overtakes the 202 and one that comes after the caller hung up', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    const { dialog, toTag } = await answeredCall(peer, 'refer-peer-1');
    const outcome = dialog.refer(TARGET);
    const refer = (await peer.next(request('REFER'))) as SipRequest;
    expect(refer.headers.get('Refer-To')).toBe(`<${TARGET}>`);
    expect(refer.headers.get('Referred-By')).toBe('<sip:100@127.0.0.1>');
    expect(refer.headers.get('Contact')).toMatch(/^<sip:127\.0\.0\.1:\d+>$/);
    const id = refer.headers.get('CSeq')!.split(' ')[0];
    // The caller hangs up at once; its subscription goes on (RFC 6665 section 4.5.2).
    peer.write(sipRequest(peer, 'BYE', { callId: 'refer-peer-1', cseq: 2, toTag }));
    await peer.next(response(200, 'BYE'));
    peer.write(notifyText(peer, 'refer-peer-1', toTag, 3, notify('SIP/2.0 200 OK\r\n', 'terminated;reason=noresource', `refer;id=${id}`)));
    await peer.next(response(200, 'NOTIFY'));
    peer.write(answer(refer, 202, 'Accepted'));
    expect(await outcome).toEqual({ result: 'transferred', status: 200 });
    expect(dialog.ended).toBe(true);
    // Only now is the dialog forgotten.
    peer.write(notifyText(peer, 'refer-peer-1', toTag, 4, notify('SIP/2.0 200 OK\r\n', 'terminated')));
    await peer.next(response(481, 'NOTIFY'));
    peer.close();
  });

  it('fails a transfer whose subscription ends without a final status, and refuses other event packages', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    const { dialog, toTag } = await answeredCall(peer, 'refer-peer-2');
    // No REFER yet: a refer NOTIFY matches nothing.
    peer.write(notifyText(peer, 'refer-peer-2', toTag, 2, notify('SIP/2.0 100 Trying\r\n', 'active')));
    await peer.next(response(481, 'NOTIFY'));
    const outcome = dialog.refer(TARGET);
    const refer = (await peer.next(request('REFER'))) as SipRequest;
    peer.write(answer(refer, 202, 'Accepted'));
    peer.write(notifyText(peer, 'refer-peer-2', toTag, 3, notify('', 'active', 'dialog')));
    expect(((await peer.next(response(489, 'NOTIFY'))) as SipResponse).headers.get('Allow-Events')).toBe('refer');
    peer.write(notifyText(peer, 'refer-peer-2', toTag, 4, notify('SIP/2.0 180 Ringing\r\n', 'active')));
    peer.write(notifyText(peer, 'refer-peer-2', toTag, 5, notify('', 'terminated;reason=timeout')));
    expect(await outcome).toEqual({ result: 'failed', status: null });
    // A REFER from the caller is declined.
    peer.write(sipRequest(peer, 'REFER', { callId: 'refer-peer-2', cseq: 6, toTag, extra: [`Refer-To: <${TARGET}>`] }));
    await peer.next(response(603, 'REFER'));
    const hungUp = dialog.hangup('done "now"');
    const bye = (await peer.next(request('BYE'))) as SipRequest;
    expect(bye.headers.get('Reason')).toBe('Q.850;cause=16;text="done \\"now\\""');
    peer.write(answer(bye, 200, 'OK'));
    await hungUp;
    peer.close();
  });

  it('answers NOTIFY outside a call 481 and declines REFER there', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    peer.write(sipRequest(peer, 'NOTIFY', { callId: 'stray-notify', cseq: 1, extra: ['Event: refer'] }));
    await peer.next(response(481, 'NOTIFY'));
    peer.write(sipRequest(peer, 'REFER', { callId: 'stray-refer', cseq: 1, extra: [`Refer-To: <${TARGET}>`] }));
    await peer.next(response(603, 'REFER'));
    peer.close();
  });
});
