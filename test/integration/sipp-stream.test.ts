/**
 * Stream bots on real calls: a SIPp caller whose media is a socket of this test (eSpeak NG
 * speech from a capture, a key as RFC 4733 events) reaches a route whose `stream` step connects
 * to a local bot (a `ws` WebSocket server on loopback):
 * - a bot written for Twilio Media Streams gets connected, start, the caller's audio byte for
 *   byte, the key and stop, field by field as Twilio sends them; the audio it sends back reaches
 *   the caller's socket at the pace of the call, its marks come back once that audio has been
 *   played, and clear stops playback within a frame;
 * - a text bot hears the caller as transcripts, answers with text the caller hears, is told of
 *   barge-in and of bad messages, and hangs up; its clear stops a long say within a frame or
 *   two, and its transfer stops what is said and REFERs the caller (a declined REFER comes back
 *   as transfer.result, one that worked ends the session); a clear or transfer read together
 *   with its say stops that say before it plays, and its say.done says so;
 * - a bot that is down, slow, refuses the WebSocket or drops it mid-call leads to the spoken
 *   fallback and the step's on_fail, with the call kept; one that closes normally lets the
 *   dialplan go on.
 */
import fs from 'node:fs/promises';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createTcpServer, type Server as TcpServer, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket, { WebSocketServer } from 'ws';
import { capturedLogger } from '../helpers/captured-logger.js';
import { eventually } from '../helpers/eventually.js';
import { callWithMedia, RtpCaller } from '../helpers/rtp-caller.js';
import { assertSippPassed, freePort, removeSippRuns, requireSipp } from '../helpers/sipp.js';
import { startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';
import { dtmfPackets, readRtpPcap, writeSippCaptures, type RtpPacket } from './sipp/make-pcap.js';

type Message = Record<string, unknown> & { at: number };
type Behaviour = (socket: WebSocket, seen: Message[]) => void;

let telephony: StartedTelephony;
let logs: Array<Record<string, unknown>> = [];
let speech: RtpPacket[];
let wss: WebSocketServer;
let refusing: Server;
let silent: TcpServer;
const silentSockets: Socket[] = [];
const behaviours = new Map<string, Behaviour>();
const conversations = new Map<string, Message[]>();

/** A 20 ms µ-law frame whose first byte tags it; no 0x7F (µ-law's negative zero comes back as 0xFF). */
const tagged = (tag: number, frames: number): string => {
  const bytes = Buffer.alloc(160 * frames, 0x2a);
  for (let n = 0; n < frames; n++) bytes[n * 160] = tag;
  return bytes.toString('base64');
};
const framesTagged = <T extends { payload: Uint8Array }>(packets: readonly T[], tag: number): T[] =>
  packets.filter((packet) => packet.payload.length === 160 && packet.payload[0] === tag && packet.payload[80] === 0x2a && packet.payload[159] === 0x2a);
const next = (seen: Message[], when: (message: Message) => boolean, timeoutMs = 10_000): Promise<Message> =>
  new Promise((resolve, reject) => {
    const started = Date.now();
    const look = (): void => {
      const found = seen.find(when);
      if (found) return resolve(found);
      if (Date.now() - started > timeoutMs) return reject(new Error('the bot did not get the message in time'));
      setTimeout(look, 5);
    };
    look();
  });
const send = (socket: WebSocket, message: object): void => socket.send(JSON.stringify(message));
/**
 * Sends `messages` in one write on the bot's TCP socket, so that they reach the gateway in one
 * segment and it reads them at once: handled in the same tick, before anything they start gets
 * a turn of the event loop. (ws writes each frame on its own; the cork makes them one write.)
 */
const sendTogether = (socket: WebSocket, ...messages: object[]): void => {
  const tcp = (socket as unknown as { _socket: Socket })._socket;
  tcp.cork();
  for (const message of messages) send(socket, message);
  tcp.uncork();
};
/** Some twenty seconds of eSpeak NG: what a clear or a transfer cuts short. */
const LONG_SAY =
  'Thank you for calling. Please listen carefully, as our options have changed. Our opening hours are Monday to Friday ' +
  'from eight in the morning to six in the evening, and Saturday from nine to noon. For questions about your bill, ' +
  'please have your customer number ready. We are sorry for the wait and will be with you shortly.';
/** Some five seconds of eSpeak NG: a say that a clear or a transfer read with it stops before it starts. */
const SHORT_SAY = 'Thank you for calling. Please listen carefully, as our options have changed.';

beforeAll(async () => {
  await requireSipp();
  wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  wss.on('connection', (socket, request) => {
    const name = new URL(request.url ?? '/', 'ws://bot').pathname.slice(1);
    const seen: Message[] = [];
    conversations.set(name, seen);
    socket.on('message', (data) => seen.push({ ...(JSON.parse(String(data)) as Record<string, unknown>), at: performance.now() }));
    socket.on('close', (code) => seen.push({ event: 'closed', type: 'closed', code, at: performance.now() }));
    behaviours.get(name)?.(socket, seen);
  });
  await new Promise((resolve) => wss.on('listening', resolve));
  refusing = createHttpServer((_request, response) => response.writeHead(500).end('no'));
  await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
  silent = createTcpServer((socket) => silentSockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  const bot = `ws://127.0.0.1:${(wss.address() as AddressInfo).port}`;
  const down = await freePort('127.0.0.1', 't1');
  const route = (number: string, language: string, stream: string, after = '      - hangup: { reason: after the bot }') =>
    `  - number: "${number}"\n    language: ${language}\n    voice: jonas\n    steps:\n      - stream: ${stream}\n${after}\n`;
  const onFail = '      - hangup: { reason: no bot }\n      - id: sorry\n        hangup: { reason: bot failed here }';
  const captured = capturedLogger();
  logs = captured.logs;
  telephony = await startTelephony(
    'name: streams\nroutes:\n' +
      route('twilio', 'en', `{ url: "${bot}/twilio", parameters: { caller: "{{caller}}", team: support } }`) +
      route('textbot', 'en', `{ url: "${bot}/text", mode: text }`) +
      route('textclear', 'en', `{ url: "${bot}/textclear", mode: text }`) +
      route('texttransfer', 'en', `{ url: "${bot}/texttransfer", mode: text }`) +
      route('textclearnow', 'en', `{ url: "${bot}/textclearnow", mode: text }`) +
      route('texttransfernow', 'en', `{ url: "${bot}/texttransfernow", mode: text }`) +
      route('down', 'en', `{ url: "ws://127.0.0.1:${down}/x", on_fail: sorry }`, onFail) +
      route('refused', 'en', `{ url: "ws://127.0.0.1:${(refusing.address() as AddressInfo).port}/x", on_fail: sorry }`, onFail) +
      route('slow', 'en', `{ url: "ws://127.0.0.1:${(silent.address() as AddressInfo).port}/x", connect_timeout_ms: 500, on_fail: sorry }`, onFail) +
      route('dropped', 'en', `{ url: "${bot}/dropped", on_fail: sorry }`, onFail) +
      route('flood', 'en', `{ url: "${bot}/flood" }`) +
      route(
        'done',
        'en',
        `{ url: "${bot}/done", on_fail: sorry }`,
        '      - hangup: { reason: after the bot }\n      - id: sorry\n        hangup: { reason: bot failed here }',
      ),
    { SPRACHROHR_RTP_PORTS: '31700-31749', SPRACHROHR_STT_ENGINE: 'pocketsphinx', SPRACHROHR_TTS_ENGINE: 'espeak' },
    { logger: captured.logger },
  );
  const captures = await writeSippCaptures(telephony.dir);
  speech = readRtpPcap(await fs.readFile(captures.speechPcap));
}, 60_000);

afterAll(async () => {
  await telephony?.close();
  for (const socket of silentSockets) socket.destroy();
  await new Promise((resolve) => wss?.close(resolve));
  await new Promise((resolve) => refusing?.close(resolve));
  await new Promise((resolve) => silent?.close(resolve));
  await removeSippRuns();
});

/** How a call ends: the caller hangs up after `holdMs`, the gateway hangs up, or the gateway transfers it by REFER (the first declined). */
const SCENARIOS = { caller: 'stream-call.xml', gateway: 'stream-call-hungup.xml', refer: 'stream-refer.xml' } as const;

function call(number: string, caller: RtpCaller, ends: keyof typeof SCENARIOS, holdMs = 8000) {
  return callWithMedia(`127.0.0.1:${telephony.service.endpoint.ports.udp}`, number, caller, SCENARIOS[ends], holdMs);
}

/** The capture's speech, then key 5, as one stream of packets. */
function speechThenKey(): RtpPacket[] {
  const last = speech.at(-1)!;
  const key = dtmfPackets('5', { sequence: last.sequence + 1, timestamp: last.timestamp + 160, ssrc: last.ssrc, leadMs: 0 });
  return [...speech, ...key];
}

describe('a bot written for Twilio Media Streams', () => {
  it('hears the caller and the key, and its audio, marks and clear reach the call as Twilio would play them', { timeout: 60_000 }, async () => {
    const timeline: Record<string, number> = {};
    behaviours.set('twilio', (socket, seen) => {
      void (async () => {
        const start = await next(seen, (message) => message['event'] === 'start');
        const streamSid = start['streamSid'];
        // A greeting of 25 frames (0.5 s), sent at once, then a mark.
        timeline['greetingSent'] = performance.now();
        send(socket, { event: 'media', streamSid, media: { payload: tagged(0xa0, 25) } });
        send(socket, { event: 'mark', streamSid, mark: { name: 'greeting' } });
        await next(seen, (message) => message['event'] === 'mark' && (message['mark'] as { name: string }).name === 'greeting');
        // A long answer (4 s, in 20 ms messages, faster than real time), a mark, and clear 300 ms later.
        for (let n = 0; n < 200; n++) send(socket, { event: 'media', streamSid, media: { payload: tagged(0xb0, 1) } });
        send(socket, { event: 'mark', streamSid, mark: { name: 'answer' } });
        await new Promise((resolve) => setTimeout(resolve, 300));
        timeline['clearSent'] = performance.now();
        send(socket, { event: 'clear', streamSid });
      })();
    });
    const caller = await RtpCaller.open();
    try {
      const sipp = call('twilio', caller, 'caller', 9000);
      await caller.firstPacket();
      await caller.play(speechThenKey());
      assertSippPassed(await sipp);
    } finally {
      caller.close();
    }
    // The gateway tells the bot stop and closes the socket once it has the caller's BYE: that may
    // be a moment after SIPp had the 200 for it and exited.
    await eventually(() => conversations.get('twilio')!.some((message) => message['event'] === 'closed'), 5000, 'the bot to see stop and the close');

    // The greeting reached the caller whole, at the pace of the call (one frame every 20 ms).
    const greeting = framesTagged(caller.received, 0xa0);
    expect(greeting).toHaveLength(25);
    const greetingSpan = greeting.at(-1)!.atMs - greeting[0]!.atMs;
    expect(greetingSpan).toBeGreaterThan(24 * 20 - 30);
    expect(greetingSpan).toBeLessThan(24 * 20 + 30);
    // Sequence numbers and timestamps run on frame by frame.
    greeting.slice(1).forEach((packet, index) => {
      expect((packet.sequence - greeting[index]!.sequence) & 0xffff).toBe(1);
      expect((packet.timestamp - greeting[index]!.timestamp) >>> 0).toBe(160);
    });
    const seenMarks = conversations.get('twilio')!.filter((message) => message['event'] === 'mark');
    expect(seenMarks.map((message) => (message['mark'] as { name: string }).name)).toEqual(['greeting', 'answer']);
    // The mark came back once the greeting had been played, not when it was queued.
    expect(seenMarks[0]!.at).toBeGreaterThanOrEqual(greeting.at(-1)!.atMs - 1);
    expect(seenMarks[0]!.at - timeline['greetingSent']!).toBeGreaterThan(24 * 20 - 30);
    // The long answer played until clear; clear stopped it within one frame and sent its mark back.
    const answer = framesTagged(caller.received, 0xb0);
    const clearSent = timeline['clearSent']!;
    expect(answer.filter((packet) => packet.atMs < clearSent).length).toBeGreaterThan(10);
    expect(answer.filter((packet) => packet.atMs > clearSent).length).toBeLessThanOrEqual(1);
    expect(answer.length).toBeLessThan(200);
    expect(seenMarks[1]!.at).toBeGreaterThan(clearSent);
    expect(seenMarks[1]!.at - clearSent).toBeLessThan(100);

    const seen = conversations.get('twilio')!;
    const events = seen.map((message) => message['event']);
    expect(events[0]).toBe('connected');
    expect(seen[0]).toEqual({ event: 'connected', protocol: 'Call', version: '1.0.0', at: seen[0]!.at });

    // start, field by field.
    const start = seen[1]!;
    expect(start['event']).toBe('start');
    expect(start['sequenceNumber']).toBe('1');
    expect(start['streamSid']).toMatch(/^MZ[0-9a-f]{32}$/);
    const fields = start['start'] as Record<string, unknown>;
    expect(Object.keys(fields).sort()).toEqual(['accountSid', 'callSid', 'customParameters', 'mediaFormat', 'streamSid', 'tracks']);
    expect(fields['streamSid']).toBe(start['streamSid']);
    expect(fields['accountSid']).toMatch(/^AC[0-9a-f]{32}$/);
    expect(fields['callSid']).toMatch(/^CA[0-9a-f]{32}$/);
    expect(fields['tracks']).toEqual(['inbound']);
    expect(fields['mediaFormat']).toEqual({ encoding: 'audio/x-mulaw', sampleRate: 8000, channels: 1 });
    expect(fields['customParameters']).toEqual({ caller: expect.stringMatching(/^sip:sipp@127\.0\.0\.1/), team: 'support' });

    // Every message after connected is numbered "1", "2", … in order; media chunks count from "1".
    const numbered = seen.filter((message) => message['event'] !== 'connected' && message['event'] !== 'closed');
    expect(numbered.map((message) => message['sequenceNumber'])).toEqual(numbered.map((_, index) => String(index + 1)));
    const media = seen.filter((message) => message['event'] === 'media').map((message) => message['media'] as Record<string, string>);
    expect(media.length).toBeGreaterThan(150);
    expect(media.map((entry) => entry['chunk'])).toEqual(media.map((_, index) => String(index + 1)));
    for (const entry of media) {
      expect(Object.keys(entry).sort()).toEqual(['chunk', 'payload', 'timestamp', 'track']);
      expect(entry['track']).toBe('inbound');
      expect(entry['timestamp']).toMatch(/^[0-9]+$/);
      expect(Buffer.from(entry['payload']!, 'base64')).toHaveLength(160);
    }
    const times = media.map((entry) => Number(entry['timestamp']));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    expect(seen.filter((message) => message['event'] === 'media').every((message) => message['streamSid'] === start['streamSid'])).toBe(true);

    // The caller's speech reached the bot byte for byte, in order (µ-law's negative zero as positive zero).
    const heard = media.map((entry) => Buffer.from(entry['payload']!, 'base64').toString('hex')).join('|');
    // Distinct frames of speech only: frames of silence are alike and would match anywhere.
    const spoken = [...new Set(speech.map((packet) => Buffer.from(packet.payload.map((byte) => (byte === 0x7f ? 0xff : byte))).toString('hex')))].filter(
      (payload) => !/^(ff|fe|7e)+$/.test(payload),
    );
    expect(spoken.length).toBeGreaterThan(100);
    const found = spoken.filter((payload) => heard.includes(payload)).length;
    expect(found / spoken.length).toBeGreaterThan(0.95);
    // In order from the speech's start to its end: the frames that came through unchanged stand as
    // they were spoken, the first and the last of them among the speech's first and last ten. Not
    // every frame does: after a packet that came late (a busy machine) the gateway fades the next
    // frame in from the concealment of the gap, and that may be any frame, the last one too.
    const place = new Map(spoken.map((payload, index) => [payload, index]));
    const order = media.map((entry) => place.get(Buffer.from(entry['payload']!, 'base64').toString('hex'))).filter((index) => index !== undefined);
    expect(order).toEqual([...new Set(order)].sort((a, b) => a - b));
    expect(order[0]).toBeLessThan(10);
    expect(order.at(-1)).toBeGreaterThanOrEqual(spoken.length - 10);

    // The key, as Twilio sends it.
    const dtmf = seen.find((message) => message['event'] === 'dtmf')!;
    expect(dtmf).toMatchObject({ event: 'dtmf', streamSid: start['streamSid'], dtmf: { track: 'inbound_track', digit: '5' } });

    // The caller hung up: stop with the same ids as start, then the gateway closed the socket normally.
    const stop = seen.find((message) => message['event'] === 'stop')!;
    expect(stop).toMatchObject({ streamSid: start['streamSid'], stop: { accountSid: fields['accountSid'], callSid: fields['callSid'] } });
    expect(seen.at(-1)).toMatchObject({ event: 'closed', code: 1000 });
  });
});

describe('a bot that sends audio faster than real time', () => {
  it('is paced: played at the pace of the call, its socket not read beyond 60 s ahead, nothing dropped', { timeout: 40_000 }, async () => {
    let sentAt = 0;
    behaviours.set('flood', (socket, seen) => {
      void next(seen, (message) => message['event'] === 'start').then(() => {
        sentAt = performance.now();
        // 70 s of audio at once, one second per message.
        for (let n = 0; n < 70; n++) socket.send(JSON.stringify({ event: 'media', media: { payload: tagged(0xd0, 50) } }));
      });
    });
    const before = logs.length;
    const caller = await RtpCaller.open();
    try {
      assertSippPassed(await call('flood', caller, 'caller', 3000));
    } finally {
      caller.close();
    }
    const played = framesTagged(caller.received, 0xd0);
    const spanMs = played.at(-1)!.atMs - played[0]!.atMs;
    // One frame per 20 ms, however fast it came.
    expect(played.length).toBeGreaterThan(100);
    expect(Math.abs(spanMs / (played.length - 1) - 20)).toBeLessThan(1);
    expect(played[0]!.atMs - sentAt).toBeLessThan(200);
    const held = logs.slice(before).find((line) => line['msg'] === 'bot ahead: not reading');
    expect(held?.['aheadSeconds']).toBeGreaterThanOrEqual(60);
    expect(held?.['aheadSeconds']).toBeLessThanOrEqual(61);
    // The caller hung up: the held-back socket is read again so that the bot gets stop and a normal close.
    const seen = conversations.get('flood')!;
    await next(seen, (message) => message['event'] === 'closed');
    expect(seen.find((message) => message['event'] === 'stop')).toBeDefined();
    expect(seen.at(-1)).toMatchObject({ code: 1000 });
  });
});

describe('a text bot', () => {
  it('hears the caller as transcripts, is told of barge-in and bad messages, speaks its answer and hangs up', { timeout: 60_000 }, async () => {
    let finalAt = 0;
    behaviours.set('text', (socket, seen) => {
      void (async () => {
        await next(seen, (message) => message['type'] === 'session.start');
        send(socket, { type: 'dance' });
        send(socket, { type: 'say', text: 'Hello', voice: 'nobody', id: 'bad-voice' });
        send(socket, { type: 'say', text: 'Hello. Please tell me in a few words what you need today.', id: 'hello' });
        const final = await next(seen, (message) => message['type'] === 'transcript.final', 20_000);
        finalAt = performance.now();
        send(socket, { type: 'say', text: `You said ${String(final['text'])}. Goodbye.`, id: 'echo', barge_in: false });
        send(socket, { type: 'hangup', reason: 'done talking' });
      })();
    });
    const before = logs.length;
    const caller = await RtpCaller.open();
    try {
      const sipp = call('textbot', caller, 'gateway');
      await caller.firstPacket();
      await caller.play(speech);
      assertSippPassed(await sipp);
    } finally {
      caller.close();
    }
    const seen = conversations.get('text')!;
    expect(seen[0]).toMatchObject({
      type: 'session.start',
      call: { caller: expect.stringMatching(/^sip:sipp@/), called: 'textbot', route: 'textbot' },
      language: 'en',
      voice: 'jonas',
      dialect: null,
      parameters: {},
    });
    const types = seen.map((message) => message['type']);
    expect(seen.find((message) => message['type'] === 'error' && message['code'] === 'invalid_message')!['detail']).toMatch(/unknown type "dance"/);
    expect(seen.find((message) => message['type'] === 'error' && message['code'] === 'invalid_say')!['detail']).toMatch(/nobody/);
    const done = seen.filter((message) => message['type'] === 'say.done');
    expect(done.map((message) => message['id'])).toEqual(['bad-voice', 'hello', 'echo']);
    // The caller spoke over the greeting: speech_started came, and the greeting was cut short.
    expect(types.indexOf('speech_started')).toBeGreaterThan(0);
    expect(done[1]).toMatchObject({ interrupted: true });
    expect(done[1]!['played_seconds']).toBeLessThan(3);
    expect(done[2]).toMatchObject({ interrupted: false });
    expect(done[2]!['played_seconds']).toBeGreaterThan(1);
    // Transcripts: partials while the caller spoke, then the final with its words.
    expect(types.indexOf('transcript.partial')).toBeGreaterThan(types.indexOf('speech_started'));
    const final = seen.find((message) => message['type'] === 'transcript.final')!;
    expect(String(final['text']).length).toBeGreaterThan(0);
    expect(final['lang']).toBe('en');
    expect(final['confidence']).toBeGreaterThan(0);
    expect(final['confidence']).toBeLessThanOrEqual(1);
    const words = final['words'] as Array<{ w: string; start: number; end: number; conf: number }>;
    expect(words.map((word) => word.w).join(' ')).toBe(final['text']);
    // The answer was heard on the caller's socket, then the bot's hangup ended the call with its reason.
    expect(caller.received.filter((packet) => packet.atMs > finalAt).length).toBeGreaterThan(50);
    expect(seen.filter((message) => message['type'] === 'session.end')).toEqual([expect.objectContaining({ reason: 'bot_hangup' })]);
    expect(seen.at(-1)).toMatchObject({ type: 'closed', code: 1000 });
    expect(logs.slice(before).find((line) => line['msg'] === 'hanging up')).toMatchObject({ reason: 'done talking' });
  });
});

/**
 * The text bot at `name`: it says {@link LONG_SAY} (as `id`, no barge-in), waits until the
 * caller has received `frames` frames of sound, then goes on with `then`.
 */
function saysLong(name: string, caller: RtpCaller, id: string, frames: number, then: (socket: WebSocket, seen: Message[]) => Promise<void>): void {
  behaviours.set(name, (socket, seen) => {
    void (async () => {
      await next(seen, (message) => message['type'] === 'session.start');
      send(socket, { type: 'say', text: LONG_SAY, id, barge_in: false });
      await eventually(() => caller.voiced().length >= frames, 20_000, 'the long say');
      await then(socket, seen);
    })();
  });
}

/**
 * Waits until the text bot at `name` has seen its socket closed. After a transfer that worked
 * the gateway sends session.end and closes once the caller's side has answered its BYE: that
 * may be a moment after SIPp sent the 200 and exited.
 */
function sessionClosed(name: string): Promise<void> {
  return eventually(
    () => conversations.get(name)?.some((message) => message['type'] === 'closed') === true,
    5000,
    `the ${name} bot to see session.end and the close`,
  );
}

/**
 * What a text bot got that said one thing, then transferred twice on the `refer` scenario (the
 * first REFER declined), the recogniser's messages aside: one say.done, the declined transfer's
 * result, and the end of the session as transferred.
 */
function expectSaidThenDeclinedThenTransferred(seen: Message[]): void {
  const types = seen.map((message) => message['type']);
  expect(types.filter((type) => type !== 'transcript.partial' && type !== 'transcript.final' && type !== 'speech_started')).toEqual([
    'session.start',
    'say.done',
    'transfer.result',
    'session.end',
    'closed',
  ]);
  expect(seen.find((message) => message['type'] === 'transfer.result')).toMatchObject({ result: 'refused', status: 603 });
  expect(seen.find((message) => message['type'] === 'session.end')).toMatchObject({ reason: 'transferred' });
}

describe('a text bot that clears and transfers', () => {
  it('clear stops a long say within a frame or two; each say gets its say.done, in order', { timeout: 40_000 }, async () => {
    const caller = await RtpCaller.open();
    let clearSent = 0;
    // A second of the long say has reached the caller; a second say waits behind it.
    saysLong('textclear', caller, 'long', 50, async (socket, seen) => {
      send(socket, { type: 'say', text: 'This is never said.', id: 'queued' });
      clearSent = performance.now();
      send(socket, { type: 'clear' });
      await next(seen, (message) => message['type'] === 'say.done' && message['id'] === 'queued');
      send(socket, { type: 'hangup', reason: 'cleared' });
    });
    const before = logs.length;
    try {
      assertSippPassed(await call('textclear', caller, 'gateway'));
    } finally {
      caller.close();
    }
    expect(clearSent).toBeGreaterThan(0);
    // The say was being heard until clear, and no more than two frames of it came after.
    expect(caller.voiced(clearSent - 1000).length).toBeGreaterThan(10);
    expect(caller.voiced(clearSent).length).toBeLessThanOrEqual(2);
    const seen = conversations.get('textclear')!;
    const done = seen.filter((message) => message['type'] === 'say.done');
    expect(done).toEqual([
      expect.objectContaining({ id: 'long', interrupted: true }),
      expect.objectContaining({ id: 'queued', interrupted: true, played_seconds: 0 }),
    ]);
    expect(done[0]!['played_seconds']).toBeGreaterThan(0.9);
    expect(done[0]!['played_seconds']).toBeLessThan(10);
    expect(done[0]!.at).toBeGreaterThan(clearSent);
    expect(seen.filter((message) => message['type'] === 'session.end')).toEqual([expect.objectContaining({ reason: 'bot_hangup' })]);
    expect(seen.at(-1)).toMatchObject({ type: 'closed', code: 1000 });
    expect(logs.slice(before).find((line) => line['msg'] === 'hanging up')).toMatchObject({ reason: 'cleared' });
  });

  it('transfer stops the say and REFERs: a declined one is a transfer.result, one that worked ends the session', { timeout: 40_000 }, async () => {
    const caller = await RtpCaller.open();
    let transferSent = 0;
    saysLong('texttransfer', caller, 'hold', 10, async (socket, seen) => {
      transferSent = performance.now();
      send(socket, { type: 'transfer', target: '+41445550111', mode: 'refer' });
      await next(seen, (message) => message['type'] === 'transfer.result');
      send(socket, { type: 'transfer', target: '+41445550222', mode: 'refer' });
    });
    const before = logs.length;
    let localPort = 0;
    try {
      const result = await call('texttransfer', caller, 'refer');
      assertSippPassed(result);
      localPort = result.localPort;
    } finally {
      caller.close();
    }
    await sessionClosed('texttransfer');
    expect(transferSent).toBeGreaterThan(0);
    // The say stopped when the transfer came (the transfer waits for it to stop).
    expect(caller.voiced(transferSent).length).toBeLessThanOrEqual(2);
    const seen = conversations.get('texttransfer')!;
    expectSaidThenDeclinedThenTransferred(seen);
    expect(seen.find((message) => message['type'] === 'say.done')).toMatchObject({ id: 'hold', interrupted: true });
    expect(seen.at(-1)).toMatchObject({ code: 1000 });
    // Two REFERs on the caller's dialog: the first declined, the second done; then the gateway hung up.
    const refers = logs.slice(before).filter((line) => line['msg'] === 'refer');
    expect(refers).toEqual([
      expect.objectContaining({ target: `sip:+41445550111@127.0.0.1:${localPort}`, result: 'refused', status: 603 }),
      expect.objectContaining({ target: `sip:+41445550222@127.0.0.1:${localPort}`, result: 'transferred' }),
    ]);
  });
});

describe('a text bot whose clear or transfer comes in one read with its say', () => {
  it('clear stops the say before a frame or two of it reached the caller; the say and hangup after it are played and done', { timeout: 60_000 }, async () => {
    const caller = await RtpCaller.open();
    behaviours.set('textclearnow', (socket, seen) => {
      void next(seen, (message) => message['type'] === 'session.start').then(() =>
        sendTogether(
          socket,
          { type: 'say', text: SHORT_SAY, id: 'cut', barge_in: false },
          { type: 'clear' },
          { type: 'say', text: 'Goodbye.', id: 'bye', barge_in: false },
          { type: 'hangup', reason: 'cleared at once' },
        ),
      );
    });
    const before = logs.length;
    try {
      assertSippPassed(await call('textclearnow', caller, 'gateway'));
    } finally {
      caller.close();
    }
    const seen = conversations.get('textclearnow')!;
    const done = seen.filter((message) => message['type'] === 'say.done');
    expect(done).toEqual([expect.objectContaining({ id: 'cut', interrupted: true }), expect.objectContaining({ id: 'bye', interrupted: false })]);
    expect(done[0]!['played_seconds']).toBeLessThanOrEqual(0.04);
    const bye = Number(done[1]!['played_seconds']);
    expect(bye).toBeGreaterThan(0.2);
    // The caller heard the goodbye (its media works) and of the say before the clear no more than two frames.
    const voiced = caller.voiced().length;
    expect(voiced).toBeGreaterThan(10);
    expect(voiced).toBeLessThanOrEqual(Math.round(bye * 50) + 2);
    expect(seen.filter((message) => message['type'] === 'session.end')).toEqual([expect.objectContaining({ reason: 'bot_hangup' })]);
    expect(logs.slice(before).find((line) => line['msg'] === 'hanging up')).toMatchObject({ reason: 'cleared at once' });
  });

  it('transfer stops the say before a frame or two of it reached the caller, then REFERs', { timeout: 60_000 }, async () => {
    const caller = await RtpCaller.open();
    behaviours.set('texttransfernow', (socket, seen) => {
      void (async () => {
        await next(seen, (message) => message['type'] === 'session.start');
        sendTogether(socket, { type: 'say', text: SHORT_SAY, id: 'cut', barge_in: false }, { type: 'transfer', target: '+41445550111', mode: 'refer' });
        await next(seen, (message) => message['type'] === 'transfer.result', 20_000);
        send(socket, { type: 'transfer', target: '+41445550222', mode: 'refer' });
      })();
    });
    try {
      assertSippPassed(await call('texttransfernow', caller, 'refer'));
    } finally {
      caller.close();
    }
    await sessionClosed('texttransfernow');
    // Nothing else is said on this call: all the caller heard is what the transfer let through.
    expect(caller.voiced().length).toBeLessThanOrEqual(2);
    const seen = conversations.get('texttransfernow')!;
    expectSaidThenDeclinedThenTransferred(seen);
    const done = seen.find((message) => message['type'] === 'say.done')!;
    expect(done).toMatchObject({ id: 'cut', interrupted: true });
    expect(done['played_seconds']).toBeLessThanOrEqual(0.04);
  });
});

describe('a bot that fails leads to the fallback and on_fail, with the call kept', () => {
  behaviours.set('dropped', (socket, seen) => {
    void next(seen, (message) => message['event'] === 'start').then(() => socket.terminate());
  });
  const cases: Array<[string, string, RegExp]> = [
    ['down (connection refused)', 'down', /cannot be reached \(ECONNREFUSED\)/],
    ['refusing the WebSocket (HTTP 500)', 'refused', /answered 500 instead of a WebSocket/],
    ['too slow to accept (connect_timeout_ms)', 'slow', /cannot be reached .*timed out/],
    ['dropping the connection mid-call', 'dropped', /closed the connection \(1006\)/],
  ];
  for (const [how, number, reason] of cases) {
    it(how, { timeout: 40_000 }, async () => {
      const before = logs.length;
      const caller = await RtpCaller.open();
      try {
        assertSippPassed(await call(number, caller, 'gateway'));
      } finally {
        caller.close();
      }
      const lines = logs.slice(before);
      expect(lines.find((line) => line['msg'] === 'bot failed')).toMatchObject({ reason: expect.stringMatching(reason) });
      // The apology was said (the caller heard a second of it or more), then on_fail's step ended the call.
      expect(caller.received.length).toBeGreaterThan(50);
      expect(lines.find((line) => line['msg'] === 'hanging up')).toMatchObject({ reason: 'bot failed here' });
    });
  }

  it('a bot that closes normally lets the dialplan go on, after what it sent has been played', { timeout: 40_000 }, async () => {
    behaviours.set('done', (socket, seen) => {
      void next(seen, (message) => message['event'] === 'start').then(() => {
        socket.send(JSON.stringify({ event: 'media', media: { payload: tagged(0xc0, 10) } }));
        socket.close(1000);
      });
    });
    const before = logs.length;
    const caller = await RtpCaller.open();
    try {
      assertSippPassed(await call('done', caller, 'gateway'));
    } finally {
      caller.close();
    }
    expect(framesTagged(caller.received, 0xc0)).toHaveLength(10);
    const lines = logs.slice(before);
    expect(lines.some((line) => line['msg'] === 'bot failed')).toBe(false);
    expect(lines.find((line) => line['msg'] === 'hanging up')).toMatchObject({ reason: 'after the bot' });
  });
});
