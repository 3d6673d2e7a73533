/**
 * Calls through a drachtio-server: the telephony service with SPRACHROHR_DRACHTIO set, driven
 * through drachtio's TCP wire protocol. drachtio-server itself (C++) is on neither npm nor
 * Debian and cannot run here, so the far side is a fake that speaks its protocol
 * (`test/helpers/fake-drachtio.ts`); drachtio-srf, the call session, the media and the
 * dialplans are the real ones, with RTP over real sockets.
 */
import dgram from 'node:dgram';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResampler } from '../../src/audio/resampler.js';
import { ConfigError } from '../../src/config-values.js';
import { loadConfig } from '../../src/config.js';
import { drachtioHeaders } from '../../src/telephony/drachtio/drachtio-message.js';
import { dtmfEventFrames } from '../../src/telephony/rtp/dtmf.js';
import { parseRtp, serializeRtp, type RtpPacket } from '../../src/telephony/rtp/rtp-packet.js';
import type { SipMessage } from '../../src/telephony/sip/sip-message.js';
import { loadTelephonyConfig } from '../../src/telephony/telephony-config.js';
import { TelephonyService } from '../../src/telephony/telephony-service.js';
import type { EngineRegistry } from '../../engine/registry.js';
import { capturedLogger } from '../helpers/captured-logger.js';
import { FakeDrachtio, type AppSipMessage, type FakeCall } from '../helpers/fake-drachtio.js';
import { startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';

const DIALPLAN = `name: test
routes:
  - number: "keys"
    engines: synthetic
    language: en
    voice: jonas
    steps:
      - answer: {}
      - say:
          text: Press a key.
      - listen:
          speech: false
          timeout_ms: 5000
      - say:
          text: "You pressed {{digits}}."
      - hangup: {}
  - number: "talk"
    engines: synthetic
    language: en
    voice: jonas
    max_turns: 20
    steps:
      - answer: {}
      - id: turn
        listen:
          speech: false
          timeout_ms: 10000
      - goto: turn
  - number: "ring"
    engines: synthetic
    language: en
    voice: jonas
    steps:
      - say:
          text: This is early media before the answer, long enough to still be playing when the caller gives up.
      - hangup: {}
`;
const SECRET = 's3cret-for-tests';

let fake: FakeDrachtio;
let telephony: StartedTelephony;
let service: TelephonyService;
let engines: EngineRegistry;
let dir: string | undefined;
const { logger, logs } = capturedLogger();

const env = (extra: Record<string, string> = {}) => ({
  SPRACHROHR_TTS_ENGINE: 'none',
  SPRACHROHR_STT_ENGINE: 'none',
  // Set once the first service has made the folder; later services in this file share it.
  ...(dir ? { SPRACHROHR_DIALPLANS_DIR: dir } : {}),
  SPRACHROHR_RTP_PORTS: '31500-31599',
  SPRACHROHR_DRACHTIO: `127.0.0.1:${fake.port}`,
  SPRACHROHR_DRACHTIO_SECRET: SECRET,
  ...extra,
});

beforeAll(async () => {
  await loadResampler();
  fake = await FakeDrachtio.start({ secret: SECRET });
  telephony = await startTelephony(DIALPLAN, env(), { logger });
  ({ service, engines, dir } = telephony);
  await fake.ready();
}, 60_000);
afterAll(async () => {
  await telephony?.close();
  await fake?.close();
});

/** The caller's media socket: records what arrives, sends frames on a 20 ms schedule. */
class CallerMedia {
  readonly received: Array<{ packet: RtpPacket; atMs: number }> = [];
  private seq = 100;
  private timestamp = 1000;
  private constructor(
    private readonly socket: dgram.Socket,
    readonly port: number,
  ) {
    socket.on('message', (data) => {
      const packet = parseRtp(data);
      if (packet) this.received.push({ packet: { ...packet, payload: Uint8Array.from(packet.payload) }, atMs: performance.now() });
    });
  }

  static async open(): Promise<CallerMedia> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new CallerMedia(socket, socket.address().port);
  }

  /** RFC 4733 events for a key, in real time, to the gateway's RTP port. */
  async sendKey(key: string, to: number): Promise<void> {
    const frames = dtmfEventFrames(key, { payloadType: 101 });
    for (const frame of frames) {
      if (!frame.repeatsTimestamp) this.timestamp += 160;
      this.socket.send(
        serializeRtp({
          payloadType: frame.payloadType ?? 101,
          sequenceNumber: this.seq++ & 0xffff,
          timestamp: this.timestamp,
          ssrc: 0x4321,
          marker: frame.marker ?? false,
          payload: frame.payload,
        }),
        to,
        '127.0.0.1',
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  /** Waits until nothing has arrived for `quietMs` after at least `count` packets. */
  async quietAfter(count: number, quietMs = 300, timeoutMs = 15_000): Promise<void> {
    await until(() => this.received.length >= count && performance.now() - this.received[this.received.length - 1]!.atMs > quietMs, timeoutMs);
  }

  close(): void {
    this.socket.close();
  }
}

const offer = (rtpPort: number, direction = 'sendrecv') =>
  `v=0\r\no=caller 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${rtpPort} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=ptime:20\r\na=${direction}\r\n`;
const answerTo = (ourOffer: string, rtpPort: number) => {
  const payload = /m=audio \d+ RTP\/AVP (\d+)/.exec(ourOffer)![1];
  return `v=0\r\no=caller 2 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${rtpPort} RTP/AVP ${payload}\r\na=sendrecv\r\n`;
};
const mediaPort = (sdp: string) => Number(/m=audio (\d+)/.exec(sdp)![1]);
const until = async (condition: () => boolean, timeoutMs = 8000) => {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A message of the app's about one call: a response with this status (and CSeq method), or a request. */
const responseTo =
  (call: FakeCall, status: number, method = 'INVITE') =>
  (message: AppSipMessage) =>
    message.callId === call.callId &&
    message.written.kind === 'response' &&
    message.written.status === status &&
    (message.sent?.headers.get('CSeq') ?? '').endsWith(method);
const requestIn = (call: FakeCall, method: string) => (message: AppSipMessage) =>
  message.callId === call.callId && message.written.kind === 'request' && message.written.method === method;
const sentToNetwork = (call: FakeCall, status: number) => (message: SipMessage) =>
  message.kind === 'response' && message.status === status && message.headers.get('Call-ID') === call.callId;
const listened = () => logs.filter((entry) => entry['msg'] === 'listened');
const endReason = (call: FakeCall) => logs.find((entry) => entry['msg'] === 'call ended' && entry['callId'] === call.callId)?.['reason'];

describe('calls through drachtio-server (fake)', () => {
  it('connects with the secret and asks for INVITEs; the embedded endpoint is not there', () => {
    expect(fake.authentications).toEqual([SECRET]);
    expect(fake.routes).toContain('invite');
    expect(() => service.endpoint).toThrow(/drachtio/);
  });

  it('answers an INVITE with our SDP, carries RTP both ways, and hangs up from the dialplan with a BYE over the wire', async () => {
    const media = await CallerMedia.open();
    const call = fake.invite({ number: 'keys', sdp: offer(media.port) });
    const ok = await fake.next(responseTo(call, 200));
    // drachtio-server's own 100 went out first, then our 200 as the app wrote it.
    const out = fake.toNetwork.filter((message) => message.headers.get('Call-ID') === call.callId);
    expect(out.map((message) => (message.kind === 'response' ? message.status : message.method))).toEqual([100, 200]);
    expect(ok.written.headers.get('Content-Type')).toBe('application/sdp');
    const sdp = ok.written.body.toString();
    expect(sdp).toMatch(/m=audio \d+ RTP\/AVP 0 101/);
    expect(sdp).toContain('a=sendrecv');
    expect(ok.sent!.headers.get('To')).toMatch(/;tag=/);
    fake.ack(call);
    // The greeting reaches the caller's port: µ-law, 160 bytes a packet.
    await until(() => media.received.length >= 20);
    expect(media.received.slice(0, 20).every(({ packet }) => packet.payloadType === 0 && packet.payload.length === 160)).toBe(true);
    await media.quietAfter(20);
    // A key from the caller's socket reaches our port: the listen ends and the reply plays.
    const before = media.received.length;
    const heard = listened().length;
    await media.sendKey('5', mediaPort(sdp));
    await until(() => media.received.length > before + 10);
    await until(() => listened().length > heard);
    expect(listened().at(-1)).toMatchObject({ digits: '5' });
    // The dialplan's hangup: a BYE inside the dialog, completed by drachtio-server.
    const bye = await fake.next(requestIn(call, 'BYE'), 0, 15_000);
    expect(bye.dialogId).toBe(call.dialogId);
    expect(bye.sent!.headers.get('From')).toContain(`tag=${call.toTag}`);
    fake.respond(bye, 200);
    await until(() => service.activeCalls === 0);
    expect(endReason(call)).toBe('hangup');
    media.close();
  }, 30_000);

  it('offers in the 200 when the INVITE has no SDP, takes the answer from the ACK, and takes a BYE from the network', async () => {
    const media = await CallerMedia.open();
    const call = fake.invite({ number: 'keys' });
    const ok = await fake.next(responseTo(call, 200));
    const ourOffer = ok.written.body.toString();
    expect(ourOffer).toMatch(/m=audio \d+ RTP\/AVP/);
    fake.ack(call, answerTo(ourOffer, media.port));
    await until(() => media.received.length >= 10);
    const bye = fake.request(call, 'BYE');
    const answered = await fake.next((message) => message.transactionId === bye && message.written.kind === 'response');
    expect(answered.written.kind === 'response' && answered.written.status).toBe(200);
    await until(() => service.activeCalls === 0);
    expect(endReason(call)).toBe('bye');
    // The gateway sends no BYE of its own after the caller's.
    await sleep(200);
    expect(fake.fromApp.some(requestIn(call, 'BYE'))).toBe(false);
    media.close();
  }, 30_000);

  it('takes INFO keys and answers a re-INVITE to hold with recvonly', async () => {
    const media = await CallerMedia.open();
    const call = fake.invite({ number: 'talk', sdp: offer(media.port) });
    await fake.next(responseTo(call, 200));
    fake.ack(call);
    const heard = listened().length;
    const info = fake.request(call, 'INFO', { contentType: 'application/dtmf-relay', text: 'Signal=7\r\nDuration=160\r\n' });
    await fake.next((message) => message.transactionId === info && message.written.kind === 'response' && message.written.status === 200);
    await until(() => listened().length > heard);
    expect(listened().at(-1)).toMatchObject({ digits: '7' });
    const hold = fake.request(call, 'INVITE', { contentType: 'application/sdp', text: offer(media.port, 'sendonly') });
    const held = await fake.next((message) => message.transactionId === hold && message.written.kind === 'response');
    expect(held.written.kind === 'response' && held.written.status).toBe(200);
    expect(held.written.body.toString()).toContain('a=recvonly');
    expect(held.written.headers.get('Contact')).toBeTruthy();
    fake.ack(call);
    const bye = fake.request(call, 'BYE');
    await fake.next((message) => message.transactionId === bye && message.written.kind === 'response');
    await until(() => service.activeCalls === 0);
    media.close();
  }, 30_000);

  it('ends a call cancelled during early media: 487 from drachtio-server, nothing more from us', async () => {
    const media = await CallerMedia.open();
    const call = fake.invite({ number: 'ring', sdp: offer(media.port) });
    const progress = await fake.next(responseTo(call, 183));
    expect(progress.written.body.toString()).toContain('m=audio');
    await until(() => media.received.length >= 5);
    fake.cancel(call);
    expect(fake.toNetwork.some(sentToNetwork(call, 487))).toBe(true);
    await until(() => service.activeCalls === 0);
    expect(endReason(call)).toBe('cancel');
    await sleep(300);
    const ours = fake.fromApp.filter((message) => message.callId === call.callId);
    expect(ours.map((message) => message.written.kind === 'response' && message.written.status)).toEqual([183]);
    media.close();
  }, 30_000);

  it('refuses a source outside the allow-list with 403 and an unknown number with 404', async () => {
    const outside = fake.invite({ number: 'keys', sdp: offer(4000), caller: { address: '203.0.113.9', port: 5060 } });
    await fake.next(responseTo(outside, 403));
    const unknown = fake.invite({ number: 'nobody', sdp: offer(4000) });
    await fake.next(responseTo(unknown, 404));
    expect(service.activeCalls).toBe(0);
  });

  it('challenges for digest credentials with both challenges on lines of their own', async () => {
    const digestFake = await FakeDrachtio.start({ secret: SECRET });
    const config = loadConfig(
      env({ SPRACHROHR_DRACHTIO: `127.0.0.1:${digestFake.port}`, SPRACHROHR_SIP_DIGEST_USER: 'trunk', SPRACHROHR_SIP_DIGEST_PASSWORD: 'geheim' }),
    );
    const digestService = await TelephonyService.start(config.telephony, engines, capturedLogger().logger, { recordings: telephony.recordings });
    try {
      await digestFake.ready();
      const call = digestFake.invite({ number: 'keys', sdp: offer(4000) });
      const challenge = await digestFake.next(responseTo(call, 401));
      const challenges = challenge.sent!.headers.getAll('WWW-Authenticate');
      expect(challenges).toHaveLength(2);
      expect(challenges[0]).toMatch(/^Digest realm="sprachrohr", nonce="[^"]+", algorithm=SHA-256/);
      expect(challenges[1]).toMatch(/algorithm=MD5/);
    } finally {
      await digestService.close();
      await digestFake.close();
    }
  });

  it('refuses new calls with 503 and Retry-After once draining', async () => {
    const drainFake = await FakeDrachtio.start({ secret: SECRET });
    const config = loadConfig(env({ SPRACHROHR_DRACHTIO: `127.0.0.1:${drainFake.port}` }));
    const drainService = await TelephonyService.start(config.telephony, engines, capturedLogger().logger, { recordings: telephony.recordings });
    try {
      await drainFake.ready();
      drainService.drain(5);
      const call = drainFake.invite({ number: 'keys', sdp: offer(4000) });
      const refused = await drainFake.next(responseTo(call, 503));
      expect(refused.sent!.headers.get('Retry-After')).toBe('5');
      expect(drainService.activeCalls).toBe(0);
    } finally {
      await drainService.close();
      await drainFake.close();
    }
  });

  it('reconnects after drachtio-server drops the connection and takes calls again', async () => {
    const before = fake.authentications.length;
    fake.dropApp();
    await fake.ready();
    expect(fake.authentications.slice(before)).toEqual([SECRET]);
    const call = fake.invite({ number: 'nobody', sdp: offer(4000) });
    await fake.next(responseTo(call, 404));
  });

  it('fails the start clearly when drachtio-server refuses the secret, and stops connecting', async () => {
    const config = loadConfig(env({ SPRACHROHR_DRACHTIO_SECRET: 'not-the-secret' }));
    const before = fake.authentications.length;
    const start = TelephonyService.start(config.telephony, engines, capturedLogger().logger, { recordings: telephony.recordings });
    await expect(start).rejects.toThrow(ConfigError);
    await expect(start).rejects.toThrow(/SPRACHROHR_DRACHTIO_SECRET/);
    await sleep(800);
    expect(fake.authentications.slice(before)).toEqual(['not-the-secret']);
  });
});

describe('drachtio settings and headers', () => {
  it('reads SPRACHROHR_DRACHTIO as host:port and insists on its secret', () => {
    const base = { SPRACHROHR_DIALPLANS_DIR: '/tmp' };
    expect(loadTelephonyConfig(base).drachtio).toBeNull();
    expect(loadTelephonyConfig({ ...base, SPRACHROHR_DRACHTIO: 'drachtio:9023', SPRACHROHR_DRACHTIO_SECRET: 'x' }).drachtio).toEqual({
      host: 'drachtio',
      port: 9023,
      secret: 'x',
    });
    expect(loadTelephonyConfig({ ...base, SPRACHROHR_DRACHTIO: '[::1]', SPRACHROHR_DRACHTIO_SECRET: 'x' }).drachtio).toEqual({
      host: '::1',
      port: 9022,
      secret: 'x',
    });
    expect(() => loadTelephonyConfig({ ...base, SPRACHROHR_DRACHTIO: 'drachtio:9022' })).toThrow(/SPRACHROHR_DRACHTIO_SECRET/);
    expect(() => loadTelephonyConfig({ ...base, SPRACHROHR_DRACHTIO: 'drachtio:99999', SPRACHROHR_DRACHTIO_SECRET: 'x' })).toThrow(/SPRACHROHR_DRACHTIO:/);
    expect(() => loadTelephonyConfig({ ...base, SPRACHROHR_DRACHTIO: 'a:b:c', SPRACHROHR_DRACHTIO_SECRET: 'x' })).toThrow(/SPRACHROHR_DRACHTIO:/);
    expect(() => loadTelephonyConfig({ ...base, SPRACHROHR_DRACHTIO: 'drachtio', SPRACHROHR_DRACHTIO_SECRET: 'a|b' })).toThrow(/SPRACHROHR_DRACHTIO_SECRET/);
  });

  it('sends a repeated header (two digest challenges) as lines of its own', () => {
    expect(
      drachtioHeaders([
        ['WWW-Authenticate', 'Digest a'],
        ['Retry-After', '5'],
        ['www-authenticate', 'Digest b'],
      ]),
    ).toEqual({ 'WWW-Authenticate': 'Digest a\r\nWWW-Authenticate: Digest b', 'Retry-After': '5' });
  });
});
