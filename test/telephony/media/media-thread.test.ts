/**
 * The media thread on its own, over real sockets: ports bound there and given back, a prompt
 * paced out and reported when played, caller audio and keys back as events, speech start heard
 * on arrival, barge-in stopped in the thread itself, the pacer's figures, and 503's cause when
 * the port range is used up.
 */
import dgram from 'node:dgram';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeMulaw, encodeMulaw } from '../../../src/audio/g711.js';
import type { MediaChannel } from '../../../src/telephony/media/media-channel.js';
import type { CallMedia } from '../../../src/telephony/media/media-protocol.js';
import { MediaThread } from '../../../src/telephony/media/media-thread.js';
import { RtpPortsExhausted } from '../../../src/telephony/media/rtp-port-pool.js';
import { DtmfReceiver, dtmfEventFrames } from '../../../src/telephony/rtp/dtmf.js';
import { parseRtp, serializeRtp, type RtpPacket } from '../../../src/telephony/rtp/rtp-packet.js';

const RANGE = { min: 33100, max: 33109 };
let thread: MediaThread;

beforeAll(async () => {
  thread = new MediaThread({ host: '127.0.0.1', rtpPorts: RANGE, logger: pino({ level: 'silent' }) });
  await thread.start();
}, 30_000);
afterAll(async () => {
  await thread?.close();
});

/** The far end: records the RTP it gets, with arrival times. */
async function farEnd(): Promise<{ socket: dgram.Socket; port: number; received: Array<{ packet: RtpPacket; at: number }> }> {
  const socket = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
  const received: Array<{ packet: RtpPacket; at: number }> = [];
  socket.on('message', (data) => {
    const packet = parseRtp(data);
    if (packet) received.push({ packet: { ...packet, payload: Uint8Array.from(packet.payload) }, at: performance.now() });
  });
  return { socket, port: socket.address().port, received };
}

/** Runs `test` on a channel whose media goes to a fresh far end; closes both after. */
async function onChannel<T>(test: (channel: MediaChannel, far: Awaited<ReturnType<typeof farEnd>>) => Promise<T>): Promise<T> {
  const far = await farEnd();
  const channel = await thread.open();
  try {
    channel.negotiated(mediaTo(far.port));
    return await test(channel, far);
  } finally {
    await channel.close();
    far.socket.close();
  }
}

/** Whether `frame` holds exactly `expected`'s samples. */
function equalSamples(frame: Int16Array | undefined, expected: Int16Array): boolean {
  return frame !== undefined && frame.length === expected.length && frame.every((sample, i) => sample === expected[i]);
}

const pcmu = { name: 'PCMU', payloadType: 0, clockRate: 8000, channels: 1 } as const;
const mediaTo = (port: number): CallMedia => ({
  codec: pcmu,
  telephoneEvent: 101,
  address: '127.0.0.1',
  port,
  rtcp: { address: '127.0.0.1', port: port + 1 },
  rtcpMux: false,
  direction: 'sendrecv',
  signallingAddress: '127.0.0.1',
});

/** A 440 Hz tone, `seconds` long at 8 kHz. */
const tone = (seconds: number): Int16Array =>
  Int16Array.from({ length: seconds * 8000 }, (_, i) => Math.round(6000 * Math.sin((2 * Math.PI * 440 * i) / 8000)));

const bindable = (port: number): Promise<boolean> =>
  new Promise((resolve) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', () => resolve(false));
    socket.bind(port, '127.0.0.1', () => socket.close(() => resolve(true)));
  });

describe('the media thread', () => {
  it('binds an even RTP port and the RTCP port above it in its range, and frees both on close', async () => {
    const channel = await thread.open();
    expect(channel.port % 2).toBe(0);
    expect(channel.port).toBeGreaterThanOrEqual(RANGE.min);
    expect(channel.port + 1).toBeLessThanOrEqual(RANGE.max);
    expect(await bindable(channel.port)).toBe(false);
    expect(await bindable(channel.port + 1)).toBe(false);
    expect(await channel.close()).toEqual({});
    expect(await bindable(channel.port)).toBe(true);
    expect(await bindable(channel.port + 1)).toBe(true);
  });

  it('paces a prompt out at 20 ms a frame, byte for byte, and reports it played to its end, with its first packet time', async () => {
    await onChannel(async (channel, far) => {
      const started = performance.now();
      channel.startPrompt(false);
      const audio = tone(1);
      channel.play(audio.subarray(0, 3000));
      channel.play(audio.subarray(3000));
      channel.endPrompt();
      const playout = await channel.playedOut();
      expect(playout?.playedSeconds).toBeCloseTo(1, 5);
      expect(playout!.complete).toBe(true);
      expect(playout!.firstPacketAtMs).toBeGreaterThan(started);
      expect(playout!.firstPacketAtMs - started).toBeLessThan(100);
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(far.received.length).toBe(50);
      const sent = far.received.map(({ packet }) => packet);
      expect(sent.every((packet) => packet.payloadType === 0 && packet.payload.length === 160)).toBe(true);
      expect(sent.map((packet) => (packet.timestamp - sent[0]!.timestamp) >>> 0)).toEqual(Array.from({ length: 50 }, (_, n) => n * 160));
      expect(sent[0]!.marker).toBe(true);
      expect(Buffer.concat(sent.map((packet) => packet.payload))).toEqual(Buffer.from(encodeMulaw(audio)));
      // Paced, not sent in a burst: a second of frames takes about a second.
      const span = far.received[49]!.at - far.received[0]!.at;
      expect(span).toBeGreaterThan(49 * 20 - 40);
      expect(span).toBeLessThan(49 * 20 + 200);
      const quality = await channel.close();
      expect(quality['packetsOut']).toBe(50);
    });
  });

  it('gives the caller’s audio back decoded, 20 ms a frame, and its RFC 4733 keys', async () => {
    // The test sends on its own timers: on a busy machine a packet can leave so late that the
    // jitter buffer rightly plays a gap. A run like that is repeated; one of three must be whole.
    let whole = false;
    for (let run = 0; run < 3 && !whole; run++)
      whole = await onChannel(async (channel, far) => {
        const frames: Int16Array[] = [];
        const keys: string[] = [];
        channel.on('audio', (pcm) => frames.push(Int16Array.from(pcm)));
        channel.on('dtmf', (key, via) => keys.push(`${key}/${via}`));
        const audio = tone(0.4);
        let sequence = 100;
        let timestamp = 4000;
        const send = (payloadType: number, payload: Uint8Array, marker: boolean, stepTimestamp = true): void => {
          if (stepTimestamp) timestamp += 160;
          far.socket.send(serializeRtp({ payloadType, sequenceNumber: sequence++, timestamp, ssrc: 99, marker, payload }), channel.port, '127.0.0.1');
        };
        // Sends more than 20 ms late against the first one's clock, which a busy machine makes.
        let lateSends = 0;
        const firstSendAt = performance.now();
        for (let n = 0; n < 20; n++) {
          if (performance.now() - firstSendAt > n * 20 + 20) lateSends++;
          send(0, encodeMulaw(audio.subarray(n * 160, (n + 1) * 160)), n === 0);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        for (const frame of dtmfEventFrames('7', { payloadType: 101, samplesPerFrame: 160 })) {
          send(101, frame.payload, frame.marker ?? false, !frame.repeatsTimestamp);
          await new Promise((resolve) => setTimeout(resolve, 20));
        }
        await new Promise((resolve) => setTimeout(resolve, 150));
        expect(keys).toEqual(['7/rfc4733']);
        expect(frames.length).toBeGreaterThanOrEqual(20);
        expect(frames.every((frame) => frame.length === 160)).toBe(true);
        // The tone comes back as sent (µ-law there and back), frame by frame in order.
        const heard = frames.findIndex((frame) => frame.some((sample) => sample !== 0));
        expect(heard).toBeGreaterThanOrEqual(0);
        const expected = (n: number): Int16Array => decodeMulaw(encodeMulaw(audio.subarray(n * 160, (n + 1) * 160)));
        const inOrder = Array.from({ length: 20 }, (_, n) => n).every((n) => equalSamples(frames[heard + n], expected(n)));
        if (!inOrder && lateSends > 0) return false;
        for (let n = 0; n < 20; n++) expect(frames[heard + n], `frame ${n}`).toEqual(expected(n));
        return true;
      });
    expect(whole).toBe(true);
  });

  it('hears speech start as the packets arrive, before the jitter buffer has played them out, and stops a barge-in prompt', async () => {
    await onChannel(async (channel, far) => {
      let voicedFrames = 0;
      let voicedBeforeStart = -1;
      channel.on('audio', (pcm) => (voicedFrames += pcm.some((sample) => sample !== 0) ? 1 : 0));
      channel.on('speech-start', () => (voicedBeforeStart = voicedFrames));
      channel.startPrompt(true);
      channel.play(tone(5));
      channel.endPrompt();
      let sequence = 7;
      let timestamp = 800;
      const send = (payload: Uint8Array): void => {
        timestamp += 160;
        far.socket.send(serializeRtp({ payloadType: 0, sequenceNumber: sequence++, timestamp, ssrc: 42, marker: false, payload }), channel.port, '127.0.0.1');
      };
      // A steady stream of silence, so that the jitter buffer is playing out on its schedule.
      for (let n = 0; n < 15; n++) {
        send(new Uint8Array(160).fill(0xff));
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      // Three voiced frames at once: played out one per tick from at least 20 ms on, but heard as they arrive.
      const voice = encodeMulaw(tone(0.06));
      for (let n = 0; n < 3; n++) send(voice.subarray(n * 160, (n + 1) * 160));
      const playout = await channel.playedOut();
      // Detected in the playout path, speech would start with the third voiced frame, after two had been played out.
      expect(voicedBeforeStart).toBeGreaterThanOrEqual(0);
      expect(voicedBeforeStart).toBeLessThan(2);
      expect(playout!.playedSeconds).toBeLessThan(1.5);
    });
  });

  it('counts voiced frames towards speech start only in unbroken sequence: a gap or a restart starts the count again, a late packet is not counted', async () => {
    await onChannel(async (channel, far) => {
      let started = 0;
      channel.on('speech-start', () => (started += 1));
      const voice = encodeMulaw(tone(0.02));
      const send = (sequence: number): void =>
        void far.socket.send(
          serializeRtp({ payloadType: 0, sequenceNumber: sequence, timestamp: sequence * 160, ssrc: 43, marker: false, payload: voice }),
          channel.port,
          '127.0.0.1',
        );
      const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, 20));
      // Two in a row, across the wrap.
      for (const sequence of [65534, 65535]) {
        send(sequence);
        await pause();
      }
      send(1); // 0 is missing
      await pause();
      send(0); // late: the jitter buffer may still use it, the speech detector does not
      await pause();
      send(2); // 1, 2: two in a row since the gap
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(started).toBe(0);
      send(3);
      await expect.poll(() => started).toBe(1);
      // The caller's numbering starts over far behind: counted afresh, not taken for late packets.
      for (const sequence of [40000, 40001, 40002]) {
        send(sequence);
        await pause();
      }
      await expect.poll(() => started).toBe(2);
    });
  });

  it('sends a key as RFC 4733 events that a receiver reads back as that key, and none without telephone-event', async () => {
    await onChannel(async (channel, far) => {
      expect(channel.sendDtmf('9')).toBe(true);
      await new Promise((resolve) => setTimeout(resolve, 400));
      const events = far.received.map(({ packet }) => packet).filter((packet) => packet.payloadType === 101);
      expect(events.length).toBeGreaterThan(3);
      expect(events[0]!.marker).toBe(true);
      // One timestamp for the whole event (RFC 4733 §2.5.1.2), read back as key 9.
      expect(new Set(events.map((packet) => packet.timestamp)).size).toBe(1);
      const receiver = new DtmfReceiver();
      expect(events.map((packet) => receiver.push(packet)).filter((key) => key !== null)).toEqual(['9']);
      channel.negotiated({ ...mediaTo(far.port), telephoneEvent: null });
      expect(channel.sendDtmf('1')).toBe(false);
    });
  });

  it('stops a barge-in prompt in the thread itself when a key comes, and reports how much was played (not all of it)', async () => {
    await onChannel(async (channel, far) => {
      channel.startPrompt(true);
      channel.play(tone(5));
      channel.endPrompt();
      await new Promise((resolve) => setTimeout(resolve, 300));
      let timestamp = 0;
      let sequence = 1;
      for (const frame of dtmfEventFrames('1', { payloadType: 101, samplesPerFrame: 160 })) {
        if (!frame.repeatsTimestamp) timestamp += 160;
        far.socket.send(
          serializeRtp({ payloadType: 101, sequenceNumber: sequence++, timestamp, ssrc: 5, marker: frame.marker ?? false, payload: frame.payload }),
          channel.port,
          '127.0.0.1',
        );
      }
      const playout = await channel.playedOut();
      expect(playout!.playedSeconds).toBeGreaterThan(0.2);
      expect(playout!.playedSeconds).toBeLessThan(1.5);
      expect(playout!.complete).toBe(false);
      const heardThen = far.received.length;
      await new Promise((resolve) => setTimeout(resolve, 200));
      // Nothing more of the prompt went out after the report (one packet may have been on its way).
      expect(far.received.length - heardThen).toBeLessThanOrEqual(1);
      expect(far.received.length).toBeCloseTo(playout!.playedSeconds * 50, 0);
      // Frames of the stopped prompt that are still on their way are dropped.
      channel.play(tone(0.2));
      await new Promise((resolve) => setTimeout(resolve, 100));
      expect(far.received.length - heardThen).toBeLessThanOrEqual(1);
    });
  });

  it('sends its RTCP reports to the a=rtcp port, or with rtcp-mux to the RTP port where it also takes the caller’s', async () => {
    const far = await farEnd();
    const farRtcp = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => farRtcp.bind(0, '127.0.0.1', resolve));
    const reportTypes: number[] = [];
    farRtcp.on('message', (data) => reportTypes.push(data[1]!));
    const plain = await thread.open();
    const muxed = await thread.open();
    try {
      plain.negotiated({ ...mediaTo(far.port), rtcp: { address: '127.0.0.1', port: farRtcp.address().port } });
      const muxedFar = await farEnd();
      const muxedTypes: number[] = [];
      muxedFar.socket.on('message', (data) => {
        if (data[1]! >= 200 && data[1]! <= 204) muxedTypes.push(data[1]!);
      });
      muxed.negotiated({ ...mediaTo(muxedFar.port), rtcpMux: true });
      muxed.startPrompt(false);
      muxed.play(tone(6));
      muxed.endPrompt();
      // Reports go out every 5 s.
      await new Promise((resolve) => setTimeout(resolve, 5400));
      expect(reportTypes).toContain(201); // a receiver report: nothing sent on that call
      expect(muxedTypes).toContain(200); // a sender report, on the RTP port
      // The caller's receiver report on our RTP port: a quarter of our packets lost.
      const ourSsrc = muxedFar.received[0]!.packet.ssrc;
      const report = Buffer.alloc(32);
      report.writeUInt8(0x81, 0);
      report.writeUInt8(201, 1);
      report.writeUInt16BE(7, 2);
      report.writeUInt32BE(0xfeed, 4);
      report.writeUInt32BE(ourSsrc, 8);
      report.writeUInt8(64, 12);
      muxedFar.socket.send(report, muxed.port, '127.0.0.1');
      await new Promise((resolve) => setTimeout(resolve, 100));
      const quality = await muxed.close();
      expect(quality['peerFractionLost']).toBe(0.25);
      muxedFar.socket.close();
    } finally {
      await Promise.all([plain.close(), muxed.close()]);
      far.socket.close();
      farRtcp.close();
    }
  }, 15_000);

  it('tells how punctual its pacer was, and starts the figures afresh on request', async () => {
    await onChannel(async () => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      const stats = await thread.pacingStats(true);
      expect(stats.ticks).toBeGreaterThan(5);
      expect(stats.p50LatenessMs).toBeGreaterThanOrEqual(0);
      expect(stats.maxLatenessMs).toBeGreaterThanOrEqual(stats.p99LatenessMs);
      const after = await thread.pacingStats();
      expect(after.ticks).toBeLessThan(stats.ticks);
    });
  });

  it('ends the media of its calls when the thread dies, and starts a fresh thread for the next call', async () => {
    const lostThread = new MediaThread({ host: '127.0.0.1', rtpPorts: { min: 33200, max: 33209 }, logger: pino({ level: 'silent' }) });
    try {
      const channel = await lostThread.open();
      const lost = new Promise<Error>((resolve) => channel.on('lost', resolve));
      channel.negotiated(mediaTo(9));
      channel.startPrompt(false);
      channel.play(tone(1));
      channel.endPrompt();
      const waiting = channel.playedOut();
      // The thread dies under the call (no public way to do that: a crash is what it stands for).
      await (lostThread as unknown as { running: { worker: { terminate(): Promise<number> } } }).running.worker.terminate();
      expect((await lost).message).toMatch(/exited/);
      expect(await waiting).toBeNull();
      expect(await channel.close()).toEqual({});
      const next = await lostThread.open();
      expect(next.port).toBeGreaterThanOrEqual(33200);
      await next.close();
    } finally {
      await lostThread.close();
    }
  });

  it('refuses a call when every port pair of the range is taken (the gateway answers 503)', async () => {
    const channels: MediaChannel[] = [];
    try {
      for (let n = 0; n < 5; n++) channels.push(await thread.open());
      await expect(thread.open()).rejects.toBeInstanceOf(RtpPortsExhausted);
      await channels.pop()!.close();
      channels.push(await thread.open());
    } finally {
      await Promise.all(channels.map((channel) => channel.close()));
    }
  });
});
