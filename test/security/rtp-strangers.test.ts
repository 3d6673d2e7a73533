/**
 * Probe: a stranger cannot take a call's audio by sending RTP to its port. The media thread,
 * over real sockets: the caller at 127.0.0.1 (the address its signalling came from), a
 * stranger at 127.0.0.2 (Linux answers on all of 127/8) that sends first and keeps sending.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MediaChannel } from '../../src/telephony/media/media-channel.js';
import { MediaThread } from '../../src/telephony/media/media-thread.js';
import { pcmuMedia as media, playPrompt, rtpEndpoint as endpoint, sendSilence, sleep, type RtpEndpoint } from '../helpers/rtp-endpoint.js';

const RANGE = { min: 33200, max: 33209 };
let thread: MediaThread;

beforeAll(async () => {
  thread = new MediaThread({ host: '127.0.0.1', rtpPorts: RANGE, logger: pino({ level: 'silent' }) });
  await thread.start();
}, 30_000);
afterAll(async () => {
  await thread?.close();
});

/** Sends `count` packets of stream `ssrc` from `from` to the call's port. */
const sendRtp = (from: RtpEndpoint, port: number, ssrc: number, count: number, firstSequence = 1): void =>
  sendSilence(from, '127.0.0.1', port, ssrc, count, firstSequence);

/** Plays a one-second prompt (50 packets) and waits until it has played out. */
const playSecond = (channel: MediaChannel): Promise<void> => playPrompt(channel, 1);

describe('strict RTP source', () => {
  it('latches only after three packets of one stream in sequence, not to a lone packet from an expected address', async () => {
    const caller = await endpoint('127.0.0.1');
    const sprayer = await endpoint('127.0.0.1');
    const channel = await thread.open();
    try {
      channel.negotiated(media('127.0.0.1', caller.port, '127.0.0.1'));
      // Single packets of ever new streams, as a spray of junk looks: none of them latches.
      for (let i = 0; i < 5; i++) sendRtp(sprayer, channel.port, 0x1000 + i, 1, 500 + i * 7);
      await sleep(60);
      sendRtp(caller, channel.port, 0x600d, 3);
      await sleep(60);
      await playSecond(channel);
      expect(caller.received.length).toBe(50);
      expect(sprayer.received).toEqual([]);
      await channel.close();
    } finally {
      caller.socket.close();
      sprayer.socket.close();
    }
  });

  it('ignores a stranger that sends first: the caller gets every prompt packet, the stranger none', async () => {
    const caller = await endpoint('127.0.0.1');
    const stranger = await endpoint('127.0.0.2');
    const channel = await thread.open();
    try {
      channel.negotiated(media('127.0.0.1', caller.port, '127.0.0.1'));
      sendRtp(stranger, channel.port, 0xbad, 5);
      await sleep(60);
      sendRtp(caller, channel.port, 0x600d, 3);
      await sleep(60);
      // The stranger goes on spraying while the prompt plays.
      const spray = setInterval(() => sendRtp(stranger, channel.port, 0xbad, 1, 100), 20);
      await playSecond(channel);
      clearInterval(spray);
      expect(caller.received.length).toBe(50);
      expect(stranger.received).toEqual([]);
      const quality = await channel.close();
      expect(quality['strangersDropped']).toBeGreaterThanOrEqual(5);
      expect(quality['packetsIn']).toBe(3);
    } finally {
      caller.socket.close();
      stranger.socket.close();
    }
  });

  it('takes a caller behind NAT from its signalling address, whatever private address its SDP names', async () => {
    const caller = await endpoint('127.0.0.1');
    const stranger = await endpoint('127.0.0.2');
    const channel = await thread.open();
    try {
      // The SDP names a private address no packet comes from; the INVITE came from 127.0.0.1.
      channel.negotiated(media('10.11.12.13', 4000, '127.0.0.1'));
      sendRtp(caller, channel.port, 0x600d, 3);
      await sleep(60);
      sendRtp(stranger, channel.port, 0x600d, 3, 50);
      await playSecond(channel);
      // The prompt goes where the caller's packets came from (its port, not the SDP's).
      expect(caller.received.length).toBe(50);
      expect(stranger.received).toEqual([]);
      const quality = await channel.close();
      expect(quality['packetsIn']).toBe(3);
      expect(quality['strangersDropped']).toBe(3);
    } finally {
      caller.socket.close();
      stranger.socket.close();
    }
  });

  it('lets the latched stream move port (a NAT rebinding) but not another stream from the caller’s address', async () => {
    const caller = await endpoint('127.0.0.1');
    const rebound = await endpoint('127.0.0.1');
    const intruder = await endpoint('127.0.0.1');
    const channel = await thread.open();
    try {
      channel.negotiated(media('127.0.0.1', caller.port, '127.0.0.1'));
      sendRtp(caller, channel.port, 0x600d, 3);
      await sleep(60);
      // Once latched, another stream from the expected address is refused.
      sendRtp(intruder, channel.port, 0xbad, 3, 10);
      await sleep(60);
      // The caller's own stream from a new port is followed.
      sendRtp(rebound, channel.port, 0x600d, 3, 20);
      await sleep(60);
      await playSecond(channel);
      expect(rebound.received.length).toBe(50);
      expect(caller.received).toEqual([]);
      expect(intruder.received).toEqual([]);
      const quality = await channel.close();
      expect(quality['strangersDropped']).toBe(3);
    } finally {
      for (const socket of [caller, rebound, intruder]) socket.socket.close();
    }
  });
});
