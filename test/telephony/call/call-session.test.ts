/**
 * Whole calls through the telephony service over real sockets: a scripted caller (SIP over UDP,
 * RTP µ-law from a real recording) against the echo flow on the synthetic engines, so what is
 * tested is the call path itself — SDP, the paced prompt, listening, keys, barge-in, hold and
 * the caller or the gateway hanging up, with every port given back.
 */
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResampler, Resampler } from '../../../src/audio/resampler.js';
import { encodeMulaw } from '../../../src/audio/g711.js';
import { TelephonyService } from '../../../src/telephony/telephony-service.js';
import { parseRtp, serializeRtp, type RtpPacket } from '../../../src/telephony/rtp/rtp-packet.js';
import { dtmfEventFrames } from '../../../src/telephony/rtp/dtmf.js';
import type { PacedFrame } from '../../../src/telephony/rtp/paced-stream.js';
import type { SipResponse } from '../../../src/telephony/sip/sip-message.js';
import { ServiceMetrics } from '../../../src/operations/service-metrics.js';
import { parsePrometheusText } from '../../helpers/prometheus-text.js';
import { Peer, request, response, sipRequest } from '../../helpers/sip-peer.js';
import { startTelephony, type StartedTelephony } from '../../helpers/started-telephony.js';

const DIALPLAN = `name: test
routes:
  - number: "echo"
    engines: synthetic
    language: en
    voice: jonas
    max_turns: 1
    steps:
      - answer: {}
      - say:
          text: Hello, this is the echo line. Say something and I will repeat it.
      - id: turn
        listen:
          timeout_ms: 3000
          max_ms: 8000
      - say:
          text: "You said {{heard}}."
      - goto: turn
  - number: "ring"
    language: en
    voice: jonas
    steps:
      - say:
          text: Early media before the answer.
      - hangup: {}
`;

let telephony: StartedTelephony;
let service: TelephonyService;
/** The metrics the calls are reported to, as the server reports them. */
const metrics = new ServiceMetrics();

/** 8 kHz µ-law frames of Debian's "go forward ten meters". */
let speechFrames: Uint8Array[];

beforeAll(async () => {
  await loadResampler();
  telephony = await startTelephony(DIALPLAN, { SPRACHROHR_RTP_PORTS: '31000-31099' }, { timers: { t1Ms: 100, t2Ms: 800, t4Ms: 500 }, observer: metrics });
  service = telephony.service;
  const raw = readFileSync('/usr/share/pocketsphinx/test/data/goforward.raw');
  const resampler = new Resampler(16000, 8000);
  const narrow = resampler.process(new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length)));
  speechFrames = [];
  for (let at = 0; at + 160 <= narrow.length; at += 160) speechFrames.push(encodeMulaw(narrow.subarray(at, at + 160)));
}, 60_000);
afterAll(async () => {
  await telephony?.close();
  metrics.close();
});

/** The caller's media socket: records what arrives, sends frames on a 20 ms schedule. */
class CallerMedia {
  readonly received: Array<{ packet: RtpPacket; atMs: number }> = [];
  /** RTCP packet types (200 SR, 201 RR) received on the port above. */
  readonly rtcpTypes: number[] = [];
  private rtcp: dgram.Socket | null = null;
  private seq = 1000;
  private timestamp = 5000;
  port = 0;
  private constructor(readonly socket: dgram.Socket) {
    socket.on('message', (data) => {
      const packet = parseRtp(data);
      if (packet) this.received.push({ packet: { ...packet, payload: Uint8Array.from(packet.payload) }, atMs: performance.now() });
    });
  }

  /** An even RTP port with its RTCP port above it, from a range the gateway does not use. */
  static async open(): Promise<CallerMedia> {
    for (let attempt = 0; attempt < 50; attempt++) {
      const port = 32000 + 2 * Math.floor(Math.random() * 500);
      const rtp = dgram.createSocket('udp4');
      const rtcp = dgram.createSocket('udp4');
      const bound = (socket: dgram.Socket, at: number) =>
        new Promise<boolean>((resolve) => {
          socket.once('error', () => resolve(false));
          socket.bind(at, '127.0.0.1', () => resolve(true));
        });
      if ((await bound(rtp, port)) && (await bound(rtcp, port + 1))) {
        const media = new CallerMedia(rtp);
        media.port = port;
        media.rtcp = rtcp;
        rtcp.on('message', (data) => media.rtcpTypes.push(data[1]!));
        return media;
      }
      rtp.close();
      rtcp.close();
    }
    throw new Error('no free port pair for the caller');
  }

  /** Sends payloads in real time to the gateway's RTP port. */
  async send(frames: ReadonlyArray<Uint8Array | PacedFrame>, to: number): Promise<void> {
    const start = performance.now();
    for (let i = 0; i < frames.length; i++) {
      const frame = frames[i]!;
      const isEvent = !(frame instanceof Uint8Array);
      if (!isEvent || !frame.repeatsTimestamp) this.timestamp += 160;
      const packet = serializeRtp({
        payloadType: isEvent ? (frame.payloadType ?? 0) : 0,
        sequenceNumber: this.seq++ & 0xffff,
        timestamp: this.timestamp,
        ssrc: 0x1234,
        marker: isEvent ? (frame.marker ?? false) : i === 0,
        payload: isEvent ? frame.payload : frame,
      });
      this.socket.send(packet, to, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + (i + 1) * 20 - performance.now())));
    }
  }

  close(): void {
    this.socket.close();
    this.rtcp?.close();
  }
}

const offer = (rtpPort: number, extra = '') =>
  `v=0\r\no=caller 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${rtpPort} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=ptime:20\r\n${extra}`;
const gatewayRtpPort = (sdp: string) => Number(/m=audio (\d+)/.exec(sdp)![1]);
const toTagOf = (message: SipResponse) => /tag=([^;]+)/.exec(message.headers.get('To')!)![1]!;
const until = async (condition: () => boolean, timeoutMs = 8000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

/** Calls `number` with an offer from a fresh media socket and acknowledges the 200. */
async function placeCall(
  callId: string,
  number = 'echo',
): Promise<{ sip: Peer & { close(): void }; media: CallerMedia; ok: SipResponse; toTag: string; rtpPort: number }> {
  const sip = await Peer.udp(service.endpoint.ports.udp);
  const media = await CallerMedia.open();
  sip.write(sipRequest(sip, 'INVITE', { callId, cseq: 1, body: offer(media.port) }).replace('sip:100@127.0.0.1 SIP/2.0', `sip:${number}@127.0.0.1 SIP/2.0`));
  const ok = (await sip.next(response(200, 'INVITE'))) as SipResponse;
  const toTag = toTagOf(ok);
  sip.write(sipRequest(sip, 'ACK', { callId, cseq: 1, toTag }));
  return { sip, media, ok, toTag, rtpPort: gatewayRtpPort(ok.body.toString()) };
}

/** Answers the gateway's BYE with 200. */
async function answerBye(sip: Peer, callId: string): Promise<void> {
  const bye = await sip.next(request('BYE'), 0, 20_000);
  sip.write(
    `SIP/2.0 200 OK\r\nVia: ${bye.headers.get('Via')}\r\nFrom: ${bye.headers.get('From')}\r\nTo: ${bye.headers.get('To')}\r\nCall-ID: ${callId}\r\nCSeq: ${bye.headers.get('CSeq')}\r\nContent-Length: 0\r\n\r\n`,
  );
}

describe('calls through the telephony service', () => {
  it('answers, plays the greeting paced at 20 ms, hears the caller, replies, and takes the BYE', async () => {
    const { sip, media, ok, rtpPort } = await placeCall('echo-1');
    expect(ok.body.toString()).toMatch(/m=audio \d+ RTP\/AVP 0 101/);
    expect(ok.body.toString()).toContain('a=sendrecv');
    // The greeting: paced µ-law frames, one SSRC, sequence and timestamp stepping.
    await until(() => media.received.length >= 50);
    const greeting = media.received.slice(0, 50);
    expect(new Set(greeting.map(({ packet }) => packet.ssrc)).size).toBe(1);
    greeting.slice(1).forEach(({ packet }, i) => {
      expect(packet.sequenceNumber).toBe((greeting[i]!.packet.sequenceNumber + 1) & 0xffff);
      expect(packet.timestamp).toBe((greeting[i]!.packet.timestamp + 160) >>> 0);
      expect(packet.payload.length).toBe(160);
    });
    const span = greeting[49]!.atMs - greeting[0]!.atMs;
    expect(span).toBeGreaterThan(49 * 20 - 60);
    expect(span).toBeLessThan(49 * 20 + 60);
    // Wait for the greeting to end, then speak.
    await until(() => media.received.length > 0 && performance.now() - media.received[media.received.length - 1]!.atMs > 300, 15_000);
    const beforeReply = media.received.length;
    await media.send([...speechFrames, ...Array.from({ length: 50 }, () => new Uint8Array(160).fill(0xff))], rtpPort);
    // The reply comes back as audio, then the gateway hangs up (max_turns 1).
    await until(() => media.received.length > beforeReply + 25, 10_000);
    await answerBye(sip, 'echo-1');
    await until(() => service.activeCalls === 0);
    const usage = service.stats.usage.find((entry) => entry.callId === 'echo-1');
    expect(usage?.ttsSeconds).toBeGreaterThan(1);
    expect(usage?.sttSeconds).toBeGreaterThan(1);
    expect(service.stats.turnLatenciesMs.length).toBeGreaterThan(0);
    // The turn and the call's end (the gateway hung up) moved their series.
    const exposition = parsePrometheusText(await metrics.text());
    expect(exposition.value('sprachrohr_call_turns_total')).toBe(service.stats.turnLatenciesMs.length);
    expect(exposition.value('sprachrohr_call_turn_latency_seconds_count')).toBe(service.stats.turnLatenciesMs.length);
    expect(exposition.value('sprachrohr_calls_total', { direction: 'inbound', outcome: 'hangup' })).toBe(1);
    // The call lasted over 5 s while the gateway sent audio: a sender report came to port + 1.
    expect(media.rtcpTypes).toContain(200);
    sip.close();
    media.close();
  }, 60_000);

  it('stops the prompt within a few frames when the caller barges in, and takes RFC 4733 keys', async () => {
    const { sip, media, rtpPort } = await placeCall('echo-2');
    await until(() => media.received.length >= 10);
    // Talk over the greeting.
    const talking = media.send(speechFrames.slice(0, 40), rtpPort);
    const startedAt = performance.now();
    await until(() => media.received.length > 0 && performance.now() - media.received[media.received.length - 1]!.atMs > 200, 5000);
    const lastPromptPacket = media.received[media.received.length - 1]!.atMs;
    // Three voiced frames (60 ms) are speech starting, heard as they arrive.
    expect(lastPromptPacket - startedAt).toBeLessThan(250);
    await talking;
    // During the listen, a key as RFC 4733 events ends the step at once.
    await media.send(dtmfEventFrames('5', { payloadType: 101 }), rtpPort);
    await answerBye(sip, 'echo-2');
    sip.close();
    media.close();
  }, 60_000);

  it('puts the call on hold and back with re-INVITEs, answering recvonly and sendrecv', async () => {
    const { sip, media, toTag } = await placeCall('echo-3');
    await until(() => media.received.length >= 5);
    const from = sip.received.length;
    sip.write(sipRequest(sip, 'INVITE', { callId: 'echo-3', cseq: 2, toTag, body: offer(media.port, 'a=sendonly\r\n') }));
    const held = (await sip.next((m) => response(200, 'INVITE')(m) && m.headers.get('CSeq') === '2 INVITE', from)) as SipResponse;
    expect(held.body.toString()).toContain('a=recvonly');
    expect(held.body.toString()).toMatch(/o=\S+ \d+ 2 IN IP4/);
    sip.write(sipRequest(sip, 'ACK', { callId: 'echo-3', cseq: 2, toTag }));
    // On hold the gateway sends nothing.
    await new Promise((resolve) => setTimeout(resolve, 100));
    const count = media.received.length;
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(media.received.length).toBe(count);
    sip.write(sipRequest(sip, 'INVITE', { callId: 'echo-3', cseq: 3, toTag, body: offer(media.port) }));
    const resumed = (await sip.next((m) => response(200, 'INVITE')(m) && m.headers.get('CSeq') === '3 INVITE', from)) as SipResponse;
    expect(resumed.body.toString()).toContain('a=sendrecv');
    sip.write(sipRequest(sip, 'ACK', { callId: 'echo-3', cseq: 3, toTag }));
    sip.write(sipRequest(sip, 'BYE', { callId: 'echo-3', cseq: 4, toTag }));
    await sip.next(response(200, 'BYE'), from);
    await until(() => service.activeCalls === 0);
    sip.close();
    media.close();
  }, 30_000);

  it('changes codec on a re-INVITE: the next prompt goes out as A-law, timestamps in its clock', async () => {
    const { sip, media, toTag } = await placeCall('echo-4');
    await until(() => media.received.length >= 5);
    const from = sip.received.length;
    const alawOffer = `v=0\r\no=caller 1 2 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${media.port} RTP/AVP 8\r\na=rtpmap:8 PCMA/8000\r\n`;
    sip.write(sipRequest(sip, 'INVITE', { callId: 'echo-4', cseq: 2, toTag, body: alawOffer }));
    const changed = (await sip.next((m) => response(200, 'INVITE')(m) && m.headers.get('CSeq') === '2 INVITE', from)) as SipResponse;
    expect(changed.body.toString()).toMatch(/m=audio \d+ RTP\/AVP 8\r\n/);
    sip.write(sipRequest(sip, 'ACK', { callId: 'echo-4', cseq: 2, toTag }));
    // The listen times out after 3 s; the reply prompt then comes as A-law.
    await until(() => media.received.filter(({ packet }) => packet.payloadType === 8).length >= 10, 10_000);
    const alaw = media.received.filter(({ packet }) => packet.payloadType === 8).slice(0, 10);
    alaw.slice(1).forEach(({ packet }, i) => expect(packet.timestamp).toBe((alaw[i]!.packet.timestamp + 160) >>> 0));
    sip.write(sipRequest(sip, 'BYE', { callId: 'echo-4', cseq: 3, toTag }));
    await sip.next(response(200, 'BYE'), from);
    await until(() => service.activeCalls === 0);
    sip.close();
    media.close();
  }, 30_000);

  it('plays early media with 183 before the answer, and refuses an offer it cannot take with 488', async () => {
    const sip = await Peer.udp(service.endpoint.ports.udp);
    const media = await CallerMedia.open();
    sip.write(
      sipRequest(sip, 'INVITE', { callId: 'ring-1', cseq: 1, body: offer(media.port) }).replace('sip:100@127.0.0.1 SIP/2.0', 'sip:ring@127.0.0.1 SIP/2.0'),
    );
    const progress = (await sip.next(response(183, 'INVITE'))) as SipResponse;
    expect(progress.body.toString()).toContain('m=audio');
    // The route has no live TTS here (engine none): the call ends, 480 before any answer.
    await sip.next(response(480, 'INVITE'), 0, 5000);
    const g729 = 'v=0\r\no=caller 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio 4000 RTP/AVP 18\r\na=rtpmap:18 G729/8000\r\n';
    sip.write(sipRequest(sip, 'INVITE', { callId: 'g729-1', cseq: 1, body: g729 }).replace('sip:100@127.0.0.1 SIP/2.0', 'sip:echo@127.0.0.1 SIP/2.0'));
    const refused = (await sip.next(response(488, 'INVITE'))) as SipResponse;
    expect(refused.headers.get('Warning')).toMatch(/G729/);
    await until(() => service.activeCalls === 0);
    sip.close();
    media.close();
  }, 30_000);
});
