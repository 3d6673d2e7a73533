/**
 * Two calls bridged in the media thread, over real sockets: each far end's packets reach the
 * other far end as they arrive, on the other call's own stream (its SSRC, sequence numbers
 * running on from its prompts, timestamps 20 ms apart), converted where the codecs differ; keys
 * as RFC 4733 events where the other side takes them; held sides not sent to; unbridging or
 * closing one call gives the other its prompts back.
 */
import dgram from 'node:dgram';
import opus from '@discordjs/opus';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeAlaw, decodeMulaw, encodeAlaw, encodeMulaw } from '../../../src/audio/g711.js';
import type { MediaChannel } from '../../../src/telephony/media/media-channel.js';
import type { CallMedia } from '../../../src/telephony/media/media-protocol.js';
import { MediaThread } from '../../../src/telephony/media/media-thread.js';
import { DtmfReceiver, dtmfEventFrames } from '../../../src/telephony/rtp/dtmf.js';
import { parseRtp, serializeRtp, type RtpPacket } from '../../../src/telephony/rtp/rtp-packet.js';
import type { MediaCodec } from '../../../src/telephony/sdp/media-codec.js';
import { tonePcm } from '../../helpers/audio-fixtures.js';
import { pcmuMedia, sleep } from '../../helpers/rtp-endpoint.js';

let thread: MediaThread;

beforeAll(async () => {
  thread = new MediaThread({ host: '127.0.0.1', rtpPorts: { min: 33300, max: 33319 }, logger: pino({ level: 'silent' }) });
  await thread.start();
}, 30_000);
afterAll(async () => {
  await thread?.close();
});

const PCMU: MediaCodec = { name: 'PCMU', payloadType: 0, clockRate: 8000, channels: 1 };
const PCMA: MediaCodec = { name: 'PCMA', payloadType: 8, clockRate: 8000, channels: 1 };
const OPUS: MediaCodec = { name: 'opus', payloadType: 111, clockRate: 48000, channels: 2 };

/** One call: its channel, and the far end (a caller's phone) with what it received. */
interface Leg {
  readonly channel: MediaChannel;
  readonly media: CallMedia;
  readonly socket: dgram.Socket;
  readonly received: RtpPacket[];
  /** Sends one packet to the gateway, numbered on from the last. */
  send(payloadType: number, payload: Uint8Array, options?: { marker?: boolean; sameTimestamp?: boolean }): void;
}

/** Opens a call negotiated with `codec` to a fresh far end on loopback. */
async function leg(codec: MediaCodec, changes: Partial<CallMedia> = {}): Promise<Leg> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const received: RtpPacket[] = [];
  socket.on('message', (data) => {
    const packet = parseRtp(data);
    if (packet) received.push({ ...packet, payload: Uint8Array.from(packet.payload) });
  });
  const telephoneEvent = codec.clockRate === 8000 ? 101 : 102;
  const media: CallMedia = { ...pcmuMedia('127.0.0.1', socket.address().port, '127.0.0.1'), codec, telephoneEvent, ...changes };
  const channel = await thread.open();
  channel.negotiated(media);
  const ssrc = Math.floor(Math.random() * 2 ** 32) >>> 0;
  let sequence = 1000;
  let timestamp = 5000;
  const send: Leg['send'] = (payloadType, payload, options = {}) => {
    if (!options.sameTimestamp) timestamp += codec.clockRate / 50;
    const datagram = serializeRtp({ payloadType, sequenceNumber: sequence++ & 0xffff, timestamp, ssrc, marker: options.marker ?? false, payload });
    socket.send(datagram, channel.port, '127.0.0.1');
  };
  return { channel, media, socket, received, send };
}

async function closeAll(...legs: Leg[]): Promise<void> {
  await Promise.all(legs.map((one) => one.channel.close()));
  for (const one of legs) one.socket.close();
}

/** Runs `test` on two calls, bridged (and given a moment to be so in the media thread); closes both after. */
async function bridged(first: Leg | Promise<Leg>, second: Leg | Promise<Leg>, test: (a: Leg, b: Leg) => Promise<void>): Promise<void> {
  const [a, b] = await Promise.all([first, second]);
  try {
    a.channel.bridge(b.channel);
    await sleep(30);
    await test(a, b);
  } finally {
    await closeAll(a, b);
  }
}

/** 20 ms frames of a tone at 8 kHz, each frame different from the one before. */
function frames8k(count: number, frequency = 440): Int16Array[] {
  const tone = tonePcm(count * 0.02, 8000, frequency);
  return Array.from({ length: count }, (_, n) => tone.subarray(n * 160, (n + 1) * 160));
}

/** The strongest frequency (in 10 Hz steps, 100–1000 Hz) of the second half of `pcm`: where a tone came through. */
function strongestHz(pcm: Int16Array, rate: number): number {
  const half = pcm.subarray(pcm.length >> 1);
  let best = { hz: 0, power: -1 };
  for (let hz = 100; hz <= 1000; hz += 10) {
    let re = 0;
    let im = 0;
    for (let i = 0; i < half.length; i++) {
      re += half[i]! * Math.cos((2 * Math.PI * hz * i) / rate);
      im += half[i]! * Math.sin((2 * Math.PI * hz * i) / rate);
    }
    if (re * re + im * im > best.power) best = { hz, power: re * re + im * im };
  }
  return best.hz;
}

/** Sends `payloads` from `from` at 20 ms a packet, as its codec's audio, and waits for the last to have arrived and gone on. */
async function stream(from: Leg, payloads: Uint8Array[]): Promise<void> {
  for (const payload of payloads) {
    from.send(from.media.codec.payloadType, payload);
    await sleep(20);
  }
  await sleep(30);
}

/** `count` frames of a tone as µ-law payloads. */
const mulawTone = (count: number, frequency = 440): Uint8Array[] => frames8k(count, frequency).map((frame) => encodeMulaw(frame));

/** What arrived after the first `skip` packets, audio of payload type `payloadType` only. */
const audioOf = (one: Leg, payloadType: number, skip = 0): RtpPacket[] => one.received.slice(skip).filter((packet) => packet.payloadType === payloadType);

/** Our stream as one far end sees it: one SSRC, each sequence number one more than the last. */
function expectOneStream(packets: RtpPacket[]): void {
  expect(new Set(packets.map((packet) => packet.ssrc)).size).toBe(1);
  for (let n = 1; n < packets.length; n++) expect((packets[n]!.sequenceNumber - packets[n - 1]!.sequenceNumber) & 0xffff, `packet ${n}`).toBe(1);
}

/** Timestamps of consecutive forwarded packets are `step` apart. */
function expectSteps(packets: RtpPacket[], step: number): void {
  for (let n = 1; n < packets.length; n++) expect((packets[n]!.timestamp - packets[n - 1]!.timestamp) >>> 0, `packet ${n}`).toBe(step);
}

/** The `count` audio packets a far end received, in its codec, as one stream with a frame's timestamp step between them. */
function forwardedTo(one: Leg, count: number): RtpPacket[] {
  const packets = audioOf(one, one.media.codec.payloadType);
  expect(packets.length).toBe(count);
  expectOneStream(packets);
  expectSteps(packets, one.media.codec.clockRate / 50);
  return packets;
}

/** Both far ends send `payloads` at once: how many audio packets each then received, A's count first. */
async function exchange(a: Leg, b: Leg, payloads: Uint8Array[]): Promise<[number, number]> {
  const before = [audioOf(a, 0).length, audioOf(b, 0).length] as const;
  await Promise.all([stream(a, payloads), stream(b, payloads)]);
  return [audioOf(a, 0).length - before[0], audioOf(b, 0).length - before[1]];
}

/** Plays `samples` of a steady level as a prompt and waits for its report. */
async function prompt(one: Leg, samples: number): Promise<number> {
  one.channel.startPrompt(false);
  one.channel.play(new Int16Array(samples).fill(1000));
  one.channel.endPrompt();
  return (await one.channel.playedOut())!.playedSeconds;
}

describe('bridged calls', () => {
  it('pass each caller’s PCMU packets to the other as they are, on the other call’s own stream, both ways', async () => {
    await bridged(leg(PCMU), leg(PCMU), async (a, b) => {
      expect(a.channel.bridgedTo).toBe(b.channel);
      expect(b.channel.bridgedTo).toBe(a.channel);
      const fromA = mulawTone(20);
      const fromB = mulawTone(20, 300);
      await Promise.all([stream(a, fromA), stream(b, fromB)]);
      for (const [to, sent] of [
        [b, fromA],
        [a, fromB],
      ] as const) {
        const got = audioOf(to, 0);
        expect(got.map((packet) => Buffer.from(packet.payload))).toEqual(sent.map((payload) => Buffer.from(payload)));
        expectOneStream(got);
        expectSteps(got, 160);
        expect(got[0]!.marker).toBe(true);
        expect(got.slice(1).some((packet) => packet.marker)).toBe(false);
      }
    });
  });

  it('forward on arrival: a packet reaches the other far end within a few milliseconds, not on a pacer tick', async () => {
    await bridged(leg(PCMU), leg(PCMU), async (a, b) => {
      const delays: number[] = [];
      for (let n = 0; n < 25; n++) {
        const before = b.received.length;
        const sent = performance.now();
        a.send(0, new Uint8Array(160).fill(n));
        await expect.poll(() => b.received.length, { interval: 0.2, timeout: 500 }).toBe(before + 1);
        delays.push(performance.now() - sent);
        await sleep(7 + (n % 5) * 3);
      }
      delays.sort((x, y) => x - y);
      // A tick's wait would be up to 20 ms; the median shows there is none.
      expect(delays[12]).toBeLessThan(5);
    });
  });

  it('keep one SSRC and unbroken sequence numbers per call from prompt to bridge to prompt, and stop the prompt playing when bridged', async () => {
    const [a, b] = await Promise.all([leg(PCMU), leg(PCMU)]);
    try {
      const playing = prompt(b, 8000 * 3);
      await sleep(200);
      a.channel.bridge(b.channel);
      expect(await playing).toBeLessThan(1);
      const promptPackets = b.received.length;
      expect(promptPackets).toBeGreaterThan(3);
      await sleep(60);
      // Nothing more of the prompt (one packet may have been on its way), and none while bridged.
      expect(b.received.length - promptPackets).toBeLessThanOrEqual(1);
      const beforeForwarding = b.received.length;
      expect(await prompt(b, 8000)).toBe(0);
      await stream(a, mulawTone(10));
      const forwarded = b.received.slice(beforeForwarding);
      expect(forwarded.length).toBe(10);
      expect(forwarded[0]!.marker).toBe(true);
      expect((forwarded[0]!.timestamp - b.received[beforeForwarding - 1]!.timestamp) | 0).toBeGreaterThan(0);
      a.channel.unbridge();
      expect(b.channel.bridgedTo).toBeNull();
      expect(await prompt(b, 1600)).toBeCloseTo(0.2, 5);
      await sleep(60);
      const after = b.received.slice(beforeForwarding + 10);
      expect(after.length).toBe(10);
      expect(after[0]!.marker).toBe(true);
      expect((after[0]!.timestamp - forwarded[9]!.timestamp) | 0).toBeGreaterThan(0);
      expectOneStream(b.received);
    } finally {
      await closeAll(a, b);
    }
  });

  it('convert PCMU to PCMA and back, sample for sample within G.711’s steps', async () => {
    await bridged(leg(PCMU), leg(PCMA), async (a, b) => {
      const tone = frames8k(15);
      await Promise.all([
        stream(
          a,
          tone.map((frame) => encodeMulaw(frame)),
        ),
        stream(
          b,
          tone.map((frame) => encodeAlaw(frame)),
        ),
      ]);
      const atB = forwardedTo(b, 15);
      const atA = forwardedTo(a, 15);
      // Within one quantisation step of the coarser law at that level: 1/16 of the value, 16 at least.
      const close = (heard: Int16Array, sent: Int16Array): boolean =>
        heard.every((sample, i) => Math.abs(sample - sent[i]!) <= Math.max(16, Math.abs(sent[i]!) / 16));
      for (let n = 0; n < 15; n++) {
        expect(close(decodeAlaw(atB[n]!.payload), decodeMulaw(encodeMulaw(tone[n]!))), `frame ${n} at B`).toBe(true);
        expect(close(decodeMulaw(atA[n]!.payload), decodeAlaw(encodeAlaw(tone[n]!))), `frame ${n} at A`).toBe(true);
      }
    });
  });

  it('convert PCMU to Opus (48 kHz clock, 960 a packet) and Opus to PCMU, the tone heard on the other side', async () => {
    await bridged(leg(PCMU), leg(OPUS), async (a, b) => {
      const encoder = new opus.OpusEncoder(48000, 1);
      const wide = tonePcm(0.6, 48000, 200);
      const opusFrames = Array.from({ length: 30 }, (_, n) => {
        const frame = wide.subarray(n * 960, (n + 1) * 960);
        return Uint8Array.from(encoder.encode(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength)));
      });
      await Promise.all([stream(a, mulawTone(30, 200)), stream(b, opusFrames)]);
      const atB = forwardedTo(b, 30);
      const atA = forwardedTo(a, 30);
      expect(atA.every((packet) => packet.payload.length === 160)).toBe(true);
      const decoder = new opus.OpusEncoder(48000, 1);
      const heardByB = Int16Array.from(
        atB.flatMap((packet) => {
          const pcm = decoder.decode(Buffer.from(packet.payload));
          return Array.from(new Int16Array(pcm.buffer, pcm.byteOffset, pcm.byteLength / 2));
        }),
      );
      const heardByA = decodeMulaw(Buffer.concat(atA.map((packet) => packet.payload)));
      expect(strongestHz(heardByB, 48000)).toBe(200);
      expect(strongestHz(heardByA, 8000)).toBe(200);
    });
  });

  it('pass keys as RFC 4733 events under the other side’s payload type, and drop them for a side without telephone-event', async () => {
    const c = await leg(PCMU, { telephoneEvent: null });
    try {
      await bridged(leg(PCMU), leg(PCMU, { telephoneEvent: 96 }), async (a, b) => {
        const keysAtA: string[] = [];
        a.channel.on('dtmf', (key) => keysAtA.push(key));
        const pressFromA = async (): Promise<void> => {
          for (const frame of dtmfEventFrames('5', { payloadType: 101 })) {
            a.send(101, frame.payload, { marker: frame.marker, sameTimestamp: frame.repeatsTimestamp });
            await sleep(20);
          }
        };
        await stream(a, mulawTone(3));
        await pressFromA();
        await sleep(50);
        const events = b.received.filter((packet) => packet.payloadType === 96);
        expect(events.length).toBe(dtmfEventFrames('5', { payloadType: 101 }).length);
        expect(new Set(events.map((packet) => packet.timestamp)).size).toBe(1);
        expect(events[0]!.marker).toBe(true);
        expectOneStream(b.received);
        const receiver = new DtmfReceiver();
        expect(events.map((packet) => receiver.push(packet)).filter((key) => key !== null)).toEqual(['5']);
        // The call still hears its own caller's keys.
        expect(keysAtA).toEqual(['5']);

        a.channel.bridge(c.channel);
        expect(b.channel.bridgedTo).toBeNull();
        await sleep(30);
        await pressFromA();
        await stream(a, mulawTone(3));
        expect(c.received.some((packet) => packet.payloadType !== 0)).toBe(false);
        expect(audioOf(c, 0).length).toBe(3);
        expectOneStream(c.received);
      });
    } finally {
      await closeAll(c);
    }
  });

  it('send nothing to a side that holds the call, and start a new talkspurt when it resumes', async () => {
    await bridged(leg(PCMU), leg(PCMU), async (a, b) => {
      const tone = mulawTone(5);
      await stream(a, tone);
      // B holds: it sends (music), we may not send to it.
      b.channel.negotiated({ ...b.media, direction: 'recvonly' });
      await sleep(30);
      expect(await exchange(a, b, tone)).toEqual([5, 0]);
      b.channel.negotiated(b.media);
      await sleep(30);
      await stream(a, tone);
      const atB = audioOf(b, 0);
      expect(atB.length).toBe(10);
      expect(atB[5]!.marker).toBe(true);
      // The pause shows in the timestamps: at least the five packets dropped.
      expect((atB[5]!.timestamp - atB[4]!.timestamp) >>> 0).toBeGreaterThanOrEqual(6 * 160);
      expectOneStream(atB);
    });
  });

  it('stop forwarding when unbridged, and when one call closes give the other its prompts back', async () => {
    await bridged(leg(PCMU), leg(PCMU), async (a, b) => {
      const tone = mulawTone(5);
      await stream(a, tone);
      expect(audioOf(b, 0).length).toBe(5);
      b.channel.unbridge();
      await sleep(30);
      expect(await exchange(a, b, tone)).toEqual([0, 0]);

      a.channel.bridge(b.channel);
      await sleep(30);
      await stream(b, tone);
      expect(audioOf(a, 0).length).toBe(5);
      await a.channel.close();
      expect(b.channel.bridgedTo).toBeNull();
      const heardByB = b.received.length;
      await stream(b, tone);
      expect(b.received.length).toBe(heardByB);
      expect(await prompt(b, 1600)).toBeCloseTo(0.2, 5);
      await sleep(60);
      expect(b.received.length - heardByB).toBe(10);
      expectOneStream(b.received);
    });
  });

  it('refuse to bridge a call to itself', async () => {
    const a = await leg(PCMU);
    try {
      expect(() => a.channel.bridge(a.channel)).toThrow(/itself/);
    } finally {
      await closeAll(a);
    }
  });
});
