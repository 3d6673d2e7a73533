/**
 * Calls the embedded endpoint places (the second leg of a bridged transfer), against SIPp as
 * the callee: answered after 180 and 183 with early media, then hung up by us with BYE (UDP
 * and TCP); answered and hung up by the callee after an INFO and a re-INVITE, its requests let
 * past an allow-list that admits nobody else; refused 486 and 603, each final acknowledged on
 * the INVITE's branch; unanswered until the ring timeout, then CANCEL, 487 and its ACK; and
 * given up by the caller's signal. A scripted peer stands in where SIPp cannot: a target that
 * never answers (Timer A retransmissions), a retransmitted and a forked 2xx, and shutdown.
 */
import net from 'node:net';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SipEndpoint } from '../../../src/telephony/sip/sip-endpoint.js';
import type { SipRequest } from '../../../src/telephony/sip/sip-message.js';
import type { OutboundCallRequest, OutboundCallResult } from '../../../src/telephony/sip/sip-outbound-call.js';
import type { OutboundDialog } from '../../../src/telephony/sip/sip-outbound-dialog.js';
import { Peer, request, response, sipRequest } from '../../helpers/sip-peer.js';
import { responseText } from '../../helpers/sip-responses.js';
import { assertSippPassed, removeSippRuns, requireSipp, sippScenario, startSippServer, type SippRun, type SippTransport } from '../../helpers/sipp.js';

const TIMERS = { t1Ms: 100, t2Ms: 800, t4Ms: 500 };
const OFFER = {
  contentType: 'application/sdp',
  body: Buffer.from('v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 7000 RTP/AVP 0\r\na=rtpmap:0 PCMU/8000\r\n'),
};
const CALLER_ID = '"Hotline Zürich" <sip:+41445550000@127.0.0.1>';

let endpoint: SipEndpoint;

beforeAll(async () => {
  await requireSipp();
  // Nobody is on the allow-list: only the targets of our own calls may send us requests.
  endpoint = new SipEndpoint({
    host: '127.0.0.1',
    port: 0,
    logger: pino({ level: 'silent' }),
    timers: TIMERS,
    allowSource: () => false,
    product: 'sprachrohr-test',
  });
  await endpoint.listen();
});
afterAll(async () => {
  await endpoint?.close();
  await removeSippRuns();
});

/** SIPp as the callee of one call. */
const callee = (scenario: string, transport: SippTransport = 'u1', localIp = '127.0.0.1', variables?: Record<string, string>): Promise<SippRun> =>
  startSippServer({ scenario: sippScenario(scenario), transport, localIp, calls: 1, timeoutMs: 15_000, ...(variables ? { variables } : {}) });

const call = (run: SippRun, extra: Partial<OutboundCallRequest> = {}): OutboundCallRequest => ({
  target: `sip:+41441234567@${run.address}${run.transport === 't1' ? ';transport=tcp' : ''}`,
  from: CALLER_ID,
  offer: OFFER,
  ringTimeoutMs: 5000,
  ...extra,
});

function answered(result: OutboundCallResult): OutboundDialog {
  if (!('answered' in result)) throw new Error(`the call was not answered: ${JSON.stringify(result)}`);
  return result.answered;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('calls the endpoint places, to SIPp', () => {
  it("answers the carrier's 401 with the trunk's credentials, sending the INVITE again (CSeq 2, same Call-ID and tag)", async () => {
    const run = await callee('outbound-challenge.uas.xml', 'u1', '127.0.0.1', { username: 'gw-out', password: 'Carrier-Secret' });
    const progress: number[] = [];
    const result = await endpoint.placeCall(
      call(run, { credentials: { username: 'gw-out', password: 'Carrier-Secret' }, onProgress: (status) => progress.push(status) }),
    );
    const dialog = answered(result);
    expect(progress).toEqual([180]);
    await dialog.hangup('done');
    assertSippPassed(await run.result);
  });

  it('fails with the 401 without credentials, and when the answer is challenged again', async () => {
    const accounts = { username: 'gw-out', password: 'Carrier-Secret' };
    const bare = await callee('outbound-challenge.uas.xml', 'u1', '127.0.0.1', accounts);
    expect(await endpoint.placeCall(call(bare))).toEqual({ failed: 401 });
    await bare.stop();
    const wrong = await callee('outbound-challenge.uas.xml', 'u1', '127.0.0.1', accounts);
    expect(await endpoint.placeCall(call(wrong, { credentials: { username: 'gw-out', password: 'wrong' } }))).toEqual({ failed: 401 });
    assertSippPassed(await wrong.result);
  });

  it('is answered after 180 and 183 with early media, acknowledged, and hung up with BYE (UDP and TCP)', async () => {
    for (const transport of ['u1', 't1'] as const) {
      const run = await callee('outbound-answer.uas.xml', transport);
      const progress: Array<[number, string | null]> = [];
      const result = await endpoint.placeCall(
        call(run, {
          headers: [
            ['Diversion', '<sip:+41441111111@127.0.0.1>;reason=unconditional'],
            ['X-Case', 'ticket-42'],
          ],
          onProgress: (status, body) => progress.push([status, body?.contentType ?? null]),
        }),
      );
      const dialog = answered(result);
      expect(progress).toEqual([
        [180, null],
        [183, 'application/sdp'],
      ]);
      expect('answer' in result && result.answer?.body.toString()).toContain('m=audio 6009');
      expect(endpoint.outboundCalls).toBe(1);
      const ended = new Promise((resolve) => dialog.once('ended', resolve));
      await dialog.hangup('the caller hung up');
      expect(await ended).toBe('hangup');
      assertSippPassed(await run.result);
      expect(endpoint.outboundCalls).toBe(0);
    }
  }, 30_000);

  it('takes the callee’s INFO, re-INVITE and BYE, past an allow-list that refuses a stranger meanwhile (UDP and TCP)', async () => {
    for (const transport of ['u1', 't1'] as const) {
      const run = await callee('outbound-callee-hangs-up.uas.xml', transport, '127.0.0.2');
      const dialog = answered(await endpoint.placeCall(call(run)));
      const infos: string[] = [];
      dialog.on('info', (info) => infos.push(`${info.contentType} ${info.body.toString()}`));
      const ended = new Promise((resolve) => dialog.once('ended', resolve));
      const stranger = await Peer.udp(endpoint.ports.udp, '127.0.0.3');
      stranger.write(sipRequest(stranger, 'OPTIONS', { callId: `stranger-${transport}`, cseq: 1 }));
      await stranger.next(response(403, 'OPTIONS'));
      stranger.close();
      expect(await ended).toBe('bye');
      expect(infos).toHaveLength(1);
      expect(infos[0]).toMatch(/^application\/dtmf-relay Signal=5/);
      assertSippPassed(await run.result);
    }
  });

  it('fails with 486 after ringing, and acknowledges the 486 on the INVITE’s branch (a target named by host name)', async () => {
    const run = await callee('outbound-busy.uas.xml');
    const progress: number[] = [];
    const target = `sip:+41441234567@localhost:${run.localPort}`;
    expect(await endpoint.placeCall(call(run, { target, onProgress: (status) => progress.push(status) }))).toEqual({ failed: 486 });
    expect(progress).toEqual([180]);
    assertSippPassed(await run.result);
  });

  it('fails with 603 when declined at once', async () => {
    const run = await callee('outbound-decline.uas.xml', 't1');
    expect(await endpoint.placeCall(call(run))).toEqual({ failed: 603 });
    assertSippPassed(await run.result);
  });

  it('cancels a call that rings past the ring timeout: CANCEL, 487, ACK', async () => {
    const run = await callee('cancel.uas.xml');
    const started = Date.now();
    expect(await endpoint.placeCall(call(run, { ringTimeoutMs: 600 }))).toEqual({ failed: 'timeout' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(590);
    assertSippPassed(await run.result);
  });

  it('cancels a ringing call when the signal aborts', async () => {
    const run = await callee('cancel.uas.xml', 't1');
    const abort = new AbortController();
    const result = endpoint.placeCall(call(run, { onProgress: () => abort.abort() }), abort.signal);
    expect(await result).toEqual({ failed: 'cancelled' });
    assertSippPassed(await run.result);
    expect(await endpoint.placeCall(call(run), AbortSignal.abort())).toEqual({ failed: 'cancelled' });
  });
});

describe('calls the endpoint places, to a scripted peer', () => {
  /** A UDP socket standing in for a callee: what it receives, parsed, and a way to answer. */
  async function scriptedCallee(): Promise<Peer & { close(): void }> {
    return Peer.udp(endpoint.ports.udp);
  }
  const answer = (invite: SipRequest, status: number, toTag: string, sdp = ''): string =>
    responseText(invite, status, { toTag, contact: '<sip:callee@127.0.0.1:9>', sdp });

  it('retransmits the INVITE over UDP (Timer A) to a silent target, and reports it unreachable', async () => {
    const peer = await scriptedCallee();
    const result = await endpoint.placeCall({ target: `sip:silent@127.0.0.1:${peer.port}`, from: 'sip:gateway@127.0.0.1', offer: OFFER, ringTimeoutMs: 1000 });
    expect(result).toEqual({ failed: 'unreachable' });
    // Sent at 0, T1, 3 × T1 and 7 × T1 (T1 = 100 ms): one INVITE, on one branch.
    const invites = peer.received.filter(request('INVITE')) as SipRequest[];
    expect(invites.length).toBeGreaterThanOrEqual(3);
    expect(new Set(invites.map((invite) => invite.headers.get('Via'))).size).toBe(1);
    // A provisional response that comes after all is met with a CANCEL.
    peer.write(answer(invites[0]!, 180, 'late'));
    const cancel = (await peer.next(request('CANCEL'))) as SipRequest;
    expect(cancel.headers.get('Via')).toBe(invites[0]!.headers.get('Via'));
    expect(cancel.headers.get('CSeq')).toBe('1 CANCEL');
    peer.close();
  });

  it('reports a TCP target that refuses the connection as unreachable at once', async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const started = Date.now();
    expect(
      await endpoint.placeCall({ target: `sip:nobody@127.0.0.1:${port};transport=tcp`, from: 'sip:gateway@127.0.0.1', offer: OFFER, ringTimeoutMs: 10_000 }),
    ).toEqual({ failed: 'unreachable' });
    expect(Date.now() - started).toBeLessThan(2000);
  });

  it('acknowledges a retransmitted 2xx again, and hangs up a second fork', async () => {
    const peer = await scriptedCallee();
    const placed = endpoint.placeCall({ target: `sip:forked@127.0.0.1:${peer.port}`, from: 'sip:gateway@127.0.0.1', offer: OFFER, ringTimeoutMs: 5000 });
    const invite = (await peer.next(request('INVITE'))) as SipRequest;
    const sdp = 'v=0\r\no=callee 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 6010 RTP/AVP 0\r\n';
    peer.write(answer(invite, 200, 'first', sdp));
    const dialog = answered(await placed);
    expect(dialog.remoteTag).toBe('first');
    await peer.next(request('ACK'));
    peer.write(answer(invite, 200, 'first', sdp));
    await sleep(100);
    const acks = peer.received.filter(request('ACK')) as SipRequest[];
    expect(acks).toHaveLength(2);
    // The same ACK both times: its own branch, not the INVITE's.
    expect(acks[1]!.headers.get('Via')).toBe(acks[0]!.headers.get('Via'));
    expect(acks[0]!.headers.get('Via')).not.toBe(invite.headers.get('Via'));
    // Another fork answers too: acknowledged, then hung up.
    peer.write(answer(invite, 200, 'second', sdp));
    const bye = (await peer.next((message) => request('BYE')(message) && /tag=second/.test(message.headers.get('To') ?? ''))) as SipRequest;
    expect(peer.count((message) => request('ACK')(message) && /tag=second/.test(message.headers.get('To') ?? ''))).toBe(1);
    expect(bye.headers.get('Reason')).toMatch(/^Q\.850;cause=16;text=/);
    expect(dialog.ended).toBe(false);
    const hungUp = dialog.hangup();
    const ours = (await peer.next((message) => request('BYE')(message) && /tag=first/.test(message.headers.get('To') ?? ''))) as SipRequest;
    peer.write(responseText(ours, 200));
    await hungUp;
    peer.close();
  });

  it('refuses what cannot be sent', async () => {
    const base = { target: 'sip:x@127.0.0.1:5999', from: 'sip:gateway@127.0.0.1', offer: OFFER, ringTimeoutMs: 1000 };
    await expect(endpoint.placeCall({ ...base, target: 'tel:+41441234567' })).rejects.toThrow(RangeError);
    await expect(endpoint.placeCall({ ...base, from: 'not a uri' })).rejects.toThrow(RangeError);
    await expect(endpoint.placeCall({ ...base, headers: [['Call-ID', 'mine']] })).rejects.toThrow(/Call-ID/);
    await expect(endpoint.placeCall({ ...base, target: 'sip:x@127.0.0.1:5999;transport=sctp' })).resolves.toEqual({ failed: 'unreachable' });
  });

  it('gives up its calls when it closes: CANCEL for a ringing one, BYE for an answered one', async () => {
    const own = new SipEndpoint({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }), timers: TIMERS });
    await own.listen();
    const peer = await Peer.udp(own.ports.udp);
    const base = { from: 'sip:gateway@127.0.0.1', offer: OFFER, ringTimeoutMs: 5000 };
    const ringing = own.placeCall({ ...base, target: `sip:ringing@127.0.0.1:${peer.port}` });
    const up = own.placeCall({ ...base, target: `sip:up@127.0.0.1:${peer.port}` });
    const invites = [await peer.next(request('INVITE')), await peer.next(request('INVITE'), 1)] as SipRequest[];
    const byUser = (user: string) => invites.find((invite) => invite.uri.startsWith(`sip:${user}@`))!;
    peer.write(answer(byUser('ringing'), 180, 'r'));
    peer.write(answer(byUser('up'), 200, 'u', 'v=0\r\n'));
    answered(await up);
    await peer.next(request('ACK'));
    await sleep(50);
    await own.close();
    expect(await ringing).toEqual({ failed: 'cancelled' });
    await peer.next(request('CANCEL'));
    await peer.next(request('BYE'));
    peer.close();
  });
});
