/**
 * The embedded SIP endpoint over real UDP and TCP sockets, driven by a scripted peer: OPTIONS,
 * the INVITE/ACK/BYE dialog both ways, CANCEL, retransmissions and their timers (shortened),
 * re-INVITE, INFO, admission refusals and malformed requests.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SipDialog } from '../../../src/telephony/sip/sip-dialog.js';
import { SipEndpoint } from '../../../src/telephony/sip/sip-endpoint.js';
import type { SipResponse, SipRequest } from '../../../src/telephony/sip/sip-message.js';
import { Peer, request, response, sipRequest } from '../../helpers/sip-peer.js';

const TIMERS = { t1Ms: 40, t2Ms: 320, t4Ms: 200 };
const SDP = 'v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 6000 RTP/AVP 0\r\n';
const ANSWER = { contentType: 'application/sdp', body: Buffer.from(SDP.replace('6000', '7000')) };

let endpoint: SipEndpoint;
let refuseFrom: string | null = null;
const calls: SipDialog[] = [];
let onCall: (dialog: SipDialog) => void = () => {};

beforeAll(async () => {
  endpoint = new SipEndpoint({
    host: '127.0.0.1',
    port: 0,
    logger: pino({ level: 'silent' }),
    timers: TIMERS,
    admit: (invite) => (refuseFrom && invite.headers.get('Call-ID')!.startsWith(refuseFrom) ? { status: 403 } : null),
  });
  endpoint.onCall((dialog) => {
    calls.push(dialog);
    onCall(dialog);
  });
  await endpoint.listen();
});
afterAll(async () => endpoint.close());

describe('SIP endpoint', () => {
  it('answers OPTIONS with 200 and what it accepts', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    peer.write(sipRequest(peer, 'OPTIONS', { callId: 'opt-1', cseq: 1 }));
    const ok = (await peer.next(response(200, 'OPTIONS'))) as SipResponse;
    expect(ok.headers.get('Allow')).toContain('INVITE');
    expect(ok.headers.get('Accept')).toContain('application/sdp');
    peer.close();
  });

  it('runs a call: 100, 180, 200 retransmitted until the ACK, then BYE from the caller', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    const events: string[] = [];
    let acked!: Promise<unknown>;
    onCall = (dialog) => {
      dialog.on('bye', () => events.push('bye'));
      dialog.on('ended', (reason) => events.push(`ended:${reason}`));
      dialog.ring();
      acked = dialog.accept(ANSWER);
    };
    peer.write(sipRequest(peer, 'INVITE', { callId: 'call-1', cseq: 1, body: SDP }));
    await peer.next(response(100, 'INVITE'));
    await peer.next(response(180, 'INVITE'));
    const ok = (await peer.next(response(200, 'INVITE'))) as SipResponse;
    expect(ok.body.toString()).toContain('m=audio 7000');
    expect(ok.headers.get('Contact')).toMatch(/^<sip:127\.0\.0\.1:\d+>$/);
    const toTag = /tag=([^;]+)/.exec(ok.headers.get('To')!)![1]!;
    // No ACK yet: the 200 comes again (T1 = 40 ms, doubling).
    await new Promise((resolve) => setTimeout(resolve, 250));
    expect(peer.count(response(200, 'INVITE'))).toBeGreaterThanOrEqual(3);
    peer.write(sipRequest(peer, 'ACK', { callId: 'call-1', cseq: 1, toTag }));
    await acked;
    const after = peer.count(response(200, 'INVITE'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(peer.count(response(200, 'INVITE'))).toBe(after);
    peer.write(sipRequest(peer, 'BYE', { callId: 'call-1', cseq: 2, toTag }));
    await peer.next(response(200, 'BYE'));
    expect(events).toEqual(['bye', 'ended:bye']);
    expect(endpoint.activeDialogs).toBe(0);
    // A BYE for a dialog that is gone: 481.
    peer.write(sipRequest(peer, 'BYE', { callId: 'call-1', cseq: 3, toTag }));
    await peer.next(response(481, 'BYE'));
    peer.close();
  });

  it('hangs up from the gateway side with a BYE that the caller answers', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    let dialog!: SipDialog;
    onCall = (d) => {
      dialog = d;
      void d.accept(ANSWER);
    };
    peer.write(sipRequest(peer, 'INVITE', { callId: 'call-2', cseq: 1, body: SDP }));
    const ok = (await peer.next(response(200, 'INVITE'))) as SipResponse;
    const toTag = /tag=([^;]+)/.exec(ok.headers.get('To')!)![1]!;
    peer.write(sipRequest(peer, 'ACK', { callId: 'call-2', cseq: 1, toTag }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    const hungUp = dialog.hangup();
    const bye = (await peer.next(request('BYE'))) as SipRequest;
    expect(bye.uri).toBe(`sip:caller@127.0.0.1:${peer.port}`);
    expect(bye.headers.get('From')).toContain(`tag=${toTag}`);
    expect(bye.headers.get('To')).toContain('tag=caller-call-2');
    const via = bye.headers.get('Via')!;
    peer.write(
      `SIP/2.0 200 OK\r\nVia: ${via}\r\nFrom: ${bye.headers.get('From')}\r\nTo: ${bye.headers.get('To')}\r\nCall-ID: call-2\r\nCSeq: ${bye.headers.get('CSeq')}\r\nContent-Length: 0\r\n\r\n`,
    );
    await hungUp;
    expect(dialog.ended).toBe(true);
    peer.close();
  });

  it('cancels a ringing call: 200 to the CANCEL, 487 to the INVITE, whose ACK is absorbed', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    const events: string[] = [];
    onCall = (dialog) => {
      dialog.on('cancel', () => events.push('cancel'));
      dialog.ring();
    };
    peer.write(sipRequest(peer, 'INVITE', { callId: 'call-3', cseq: 1, body: SDP, branch: 'z9hG4bK-cancel-me' }));
    await peer.next(response(180, 'INVITE'));
    peer.write(sipRequest(peer, 'CANCEL', { callId: 'call-3', cseq: 1, branch: 'z9hG4bK-cancel-me' }));
    await peer.next(response(200, 'CANCEL'));
    const terminated = (await peer.next(response(487, 'INVITE'))) as SipResponse;
    expect(events).toEqual(['cancel']);
    // Without the ACK, the 487 is retransmitted; with it, it stops.
    await new Promise((resolve) => setTimeout(resolve, 150));
    expect(peer.count(response(487, 'INVITE'))).toBeGreaterThanOrEqual(2);
    const toTag = /tag=([^;]+)/.exec(terminated.headers.get('To')!)![1]!;
    peer.write(sipRequest(peer, 'ACK', { callId: 'call-3', cseq: 1, toTag, branch: 'z9hG4bK-cancel-me' }));
    await new Promise((resolve) => setTimeout(resolve, 100));
    const count = peer.count(response(487, 'INVITE'));
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(peer.count(response(487, 'INVITE'))).toBe(count);
    // A CANCEL for nothing: 481.
    peer.write(sipRequest(peer, 'CANCEL', { callId: 'call-3x', cseq: 1, branch: 'z9hG4bK-unknown' }));
    await peer.next(response(481, 'CANCEL'));
    peer.close();
  });

  it('answers a retransmitted INVITE with the last provisional response, not a second call', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    const before = calls.length;
    onCall = (dialog) => dialog.ring();
    const invite = sipRequest(peer, 'INVITE', { callId: 'call-4', cseq: 1, body: SDP, branch: 'z9hG4bK-again' });
    peer.write(invite);
    await peer.next(response(180, 'INVITE'));
    peer.write(invite);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(peer.count(response(180, 'INVITE'))).toBe(2);
    expect(calls.length).toBe(before + 1);
    calls[calls.length - 1]!.reject(486);
    await peer.next(response(486, 'INVITE'));
    peer.close();
  });

  it('takes re-INVITEs (491 while one is pending) and INFO inside the call', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    const infos: string[] = [];
    let pendingReply: ((answer: { contentType: string; body: Buffer } | number) => void) | null = null;
    onCall = (dialog) => {
      dialog.on('reoffer', (offer, reply) => {
        expect(offer?.body.toString()).toContain('a=sendonly');
        pendingReply = reply;
      });
      dialog.on('info', (info) => infos.push(info.body.toString()));
      void dialog.accept(ANSWER);
    };
    peer.write(sipRequest(peer, 'INVITE', { callId: 'call-5', cseq: 1, body: SDP }));
    const ok = (await peer.next(response(200, 'INVITE'))) as SipResponse;
    const toTag = /tag=([^;]+)/.exec(ok.headers.get('To')!)![1]!;
    peer.write(sipRequest(peer, 'ACK', { callId: 'call-5', cseq: 1, toTag }));
    const from = peer.received.length;
    peer.write(sipRequest(peer, 'INVITE', { callId: 'call-5', cseq: 2, toTag, body: `${SDP}a=sendonly\r\n` }));
    await peer.next(response(100, 'INVITE'), from);
    peer.write(sipRequest(peer, 'INVITE', { callId: 'call-5', cseq: 3, toTag, body: `${SDP}a=sendonly\r\n` }));
    await peer.next(response(491, 'INVITE'), from);
    pendingReply!({ contentType: 'application/sdp', body: Buffer.from(`${SDP}a=recvonly\r\n`) });
    const reOk = (await peer.next((m) => response(200, 'INVITE')(m) && m.headers.get('CSeq') === '2 INVITE', from)) as SipResponse;
    expect(reOk.body.toString()).toContain('a=recvonly');
    peer.write(
      sipRequest(peer, 'INFO', { callId: 'call-5', cseq: 4, toTag, extra: ['Content-Type: application/dtmf-relay'], body: 'Signal=5\r\nDuration=160\r\n' }),
    );
    await peer.next(response(200, 'INFO'), from);
    expect(infos).toEqual(['Signal=5\r\nDuration=160\r\n']);
    peer.write(sipRequest(peer, 'BYE', { callId: 'call-5', cseq: 5, toTag }));
    await peer.next(response(200, 'BYE'), from);
    peer.close();
  });

  it('sends BYE when the caller never acknowledges the 200', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    let ended = '';
    onCall = (dialog) => {
      dialog.on('ended', (reason) => (ended = reason));
      dialog.accept(ANSWER).catch(() => undefined);
    };
    peer.write(sipRequest(peer, 'INVITE', { callId: 'call-6', cseq: 1, body: SDP }));
    await peer.next(response(200, 'INVITE'));
    // 64 × T1 = 2.56 s with the test timers.
    await peer.next(request('BYE'), 0, 5000);
    expect(ended).toBe('ack-timeout');
    peer.close();
  });

  it('refuses calls the admission policy refuses, before any dialog exists', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    refuseFrom = 'blocked';
    const before = calls.length;
    peer.write(sipRequest(peer, 'INVITE', { callId: 'blocked-1', cseq: 1, body: SDP }));
    await peer.next(response(403, 'INVITE'));
    expect(calls.length).toBe(before);
    expect(peer.count(response(100, 'INVITE'))).toBe(0);
    refuseFrom = null;
    peer.close();
  });

  it('answers malformed requests with 400 and a Warning, refuses unknown methods and extensions, and keeps serving', async () => {
    const peer = await Peer.udp(endpoint.ports.udp);
    peer.write(sipRequest(peer, 'OPTIONS', { callId: 'bad-1', cseq: 1 }).replace('Content-Length: 0', 'Content-Length: 99'));
    const bad = (await peer.next(response(400, 'OPTIONS'))) as SipResponse;
    expect(bad.headers.get('Warning')).toMatch(/^399 sprachrohr ".*Content-Length 99/);
    peer.write(sipRequest(peer, 'REGISTER', { callId: 'reg-1', cseq: 1 }));
    expect(((await peer.next(response(405, 'REGISTER'))) as SipResponse).headers.get('Allow')).toContain('INVITE');
    peer.write(sipRequest(peer, 'INVITE', { callId: 'req-1', cseq: 1, body: SDP, extra: ['Require: 100rel'] }));
    expect(((await peer.next(response(420, 'INVITE'))) as SipResponse).headers.get('Unsupported')).toBe('100rel');
    peer.write('garbage that is not SIP at all\r\n\r\n');
    peer.write(sipRequest(peer, 'OPTIONS', { callId: 'opt-after', cseq: 1 }));
    await peer.next((m) => response(200, 'OPTIONS')(m) && m.headers.get('Call-ID') === 'opt-after');
    peer.close();
  });

  it('runs a call over TCP, responses on the same connection', async () => {
    const peer = await Peer.tcp(endpoint.ports.tcp);
    onCall = (dialog) => void dialog.accept(ANSWER);
    peer.write(sipRequest(peer, 'INVITE', { callId: 'tcp-1', cseq: 1, body: SDP, transport: 'TCP' }));
    const ok = (await peer.next(response(200, 'INVITE'))) as SipResponse;
    expect(ok.headers.get('Contact')).toContain('transport=tcp');
    const toTag = /tag=([^;]+)/.exec(ok.headers.get('To')!)![1]!;
    peer.write(sipRequest(peer, 'ACK', { callId: 'tcp-1', cseq: 1, toTag, transport: 'TCP' }));
    peer.write(sipRequest(peer, 'BYE', { callId: 'tcp-1', cseq: 2, toTag, transport: 'TCP' }));
    await peer.next(response(200, 'BYE'));
    peer.close();
  });
});
