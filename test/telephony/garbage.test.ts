/**
 * The gateway under garbage: a thousand random datagrams (and RTP-looking ones from a stranger)
 * on its SIP port and on a call's RTP port. The process keeps serving, the call keeps its audio
 * going to the real caller, and both ends still talk SIP afterwards.
 */
import dgram from 'node:dgram';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResampler } from '../../src/audio/resampler.js';
import type { TelephonyService } from '../../src/telephony/telephony-service.js';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/rtp-packet.js';
import type { SipResponse } from '../../src/telephony/sip/sip-message.js';
import { Peer, response, sipRequest } from '../helpers/sip-peer.js';
import { anyNumberDialplan, startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';

const DIALPLAN = anyNumberDialplan(`      - answer: {}
      - say:
          text: This prompt runs long enough to be sending audio while garbage arrives, it goes on and on for several seconds.
          barge_in: false
      - hangup: {}
`);

let started: StartedTelephony;
let service: TelephonyService;

beforeAll(async () => {
  await loadResampler();
  started = await startTelephony(DIALPLAN, { SPRACHROHR_RTP_PORTS: '31100-31199' });
  service = started.service;
}, 60_000);
afterAll(async () => started?.close());

async function spray(port: number, datagrams: Buffer[]): Promise<void> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  for (let i = 0; i < datagrams.length; i++) {
    socket.send(datagrams[i]!, port, '127.0.0.1');
    // A breath every 50 datagrams keeps the loopback buffer from dropping them.
    if (i % 50 === 49) await new Promise((resolve) => setTimeout(resolve, 2));
  }
  await new Promise((resolve) => setTimeout(resolve, 50));
  socket.close();
}

/** Random bytes, truncated SIP, RTP headers with random fields (some valid-looking), huge datagrams. */
function garbage(count: number): Buffer[] {
  return Array.from({ length: count }, (_, i) => {
    switch (i % 5) {
      case 0:
        return randomBytes(1 + (i % 1400));
      case 1:
        return Buffer.from(`INVITE sip:x@y SIP/2.0\r\nVia: SIP/2.0/UDP ${'a'.repeat(i % 300)}\r\nCSeq: x\r\n`.slice(0, 10 + (i % 90)));
      case 2:
        return Buffer.from(
          serializeRtp({ payloadType: i % 128, sequenceNumber: i, timestamp: i * 160, ssrc: 0xbad00000 + i, marker: false, payload: randomBytes(160) }),
        );
      case 3:
        return Buffer.concat([Buffer.from([0x80, 0x00]), randomBytes(i % 11)]);
      default:
        return randomBytes(60_000);
    }
  });
}

describe('garbage on the SIP and RTP ports', () => {
  it('survives 1,000 garbage datagrams on each port and keeps the call and the signalling working', async () => {
    const sip = await Peer.udp(service.endpoint.ports.udp);
    const caller = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => caller.bind(0, '127.0.0.1', resolve));
    let received = 0;
    caller.on('message', (data) => {
      if (parseRtp(data)) received += 1;
    });
    const offer = `v=0\r\no=c 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${caller.address().port} RTP/AVP 0\r\n`;
    sip.write(sipRequest(sip, 'INVITE', { callId: 'garbage-1', cseq: 1, body: offer }));
    const ok = (await sip.next(response(200, 'INVITE'))) as SipResponse;
    const toTag = /tag=([^;]+)/.exec(ok.headers.get('To')!)![1]!;
    sip.write(sipRequest(sip, 'ACK', { callId: 'garbage-1', cseq: 1, toTag }));
    const rtpPort = Number(/m=audio (\d+)/.exec(ok.body.toString())![1]);
    // The caller's own packets latch the call's media to it.
    for (let i = 0; i < 5; i++)
      caller.send(
        serializeRtp({ payloadType: 0, sequenceNumber: i, timestamp: i * 160, ssrc: 77, marker: i === 0, payload: new Uint8Array(160).fill(0xff) }),
        rtpPort,
        '127.0.0.1',
      );
    await new Promise((resolve) => setTimeout(resolve, 200));
    const before = received;
    await Promise.all([spray(service.endpoint.ports.udp, garbage(1000)), spray(rtpPort, garbage(1000))]);
    // Audio still flows to the caller, not to the stranger.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received - before).toBeGreaterThan(20);
    // Signalling still answers, and the call still hangs up properly.
    sip.write(sipRequest(sip, 'OPTIONS', { callId: 'after-garbage', cseq: 1 }));
    await sip.next((m) => response(200, 'OPTIONS')(m) && m.headers.get('Call-ID') === 'after-garbage');
    sip.write(sipRequest(sip, 'BYE', { callId: 'garbage-1', cseq: 2, toTag }));
    await sip.next(response(200, 'BYE'));
    const deadline = Date.now() + 5000;
    while (service.activeCalls > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
    expect(service.activeCalls).toBe(0);
    sip.close();
    caller.close();
  }, 30_000);
});
