/**
 * Strict RTP source with the addresses written as sockets report them: IPv4-mapped senders on
 * a dual-stack socket and IPv6 written differently in the SDP than on the wire. The rule on its
 * own, then the media thread bound to `::` over real sockets: a stranger at 127.0.0.2 sends
 * first; the caller at 127.0.0.1 (or ::1) still gets every prompt packet, the stranger none.
 */
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalAddress, ExpectedSources } from '../../../src/telephony/media/expected-sources.js';
import { MediaThread } from '../../../src/telephony/media/media-thread.js';
import { pcmuMedia, playPrompt, rtpEndpoint, sendSilence, sleep } from '../../helpers/rtp-endpoint.js';

describe('expected sources', () => {
  it('writes addresses as a socket reports a sender', () => {
    expect(canonicalAddress('192.0.2.7')).toBe('192.0.2.7');
    expect(canonicalAddress('::ffff:192.0.2.7')).toBe('192.0.2.7');
    expect(canonicalAddress('::FFFF:192.0.2.7')).toBe('192.0.2.7');
    expect(canonicalAddress('2001:DB8:0:0:0:0:0:1')).toBe('2001:db8::1');
    expect(canonicalAddress('0:0:0:0:0:0:0:1')).toBe('::1');
    expect(canonicalAddress('fe80::1%eth0')).toBe('fe80::1%eth0');
    expect(canonicalAddress('media.example')).toBe('media.example');
  });

  it('takes the SDP’s and the signalling’s address, plain or IPv4-mapped, and nothing else', () => {
    const expected = new ExpectedSources('10.0.0.5', '::ffff:198.51.100.9');
    for (const address of ['10.0.0.5', '198.51.100.9', '::ffff:10.0.0.5', '::ffff:198.51.100.9']) expect(expected.has(address)).toBe(true);
    for (const address of ['10.0.0.50', '0.0.5', '::ffff:10.0.0.50', '::1', '98.51.100.9']) expect(expected.has(address)).toBe(false);
    expected.set('2001:DB8::0:1', '203.0.113.1');
    expect(expected.has('2001:db8::1')).toBe(true);
    expect(expected.has('10.0.0.5')).toBe(false);
  });
});

const RANGE = { min: 33300, max: 33309 };

describe('strict RTP source on a dual-stack media socket', () => {
  let thread: MediaThread;

  beforeAll(async () => {
    thread = new MediaThread({ host: '::', rtpPorts: RANGE, logger: pino({ level: 'silent' }) });
    await thread.start();
  }, 30_000);
  afterAll(async () => {
    await thread?.close();
  });

  /**
   * A stranger at 127.0.0.2 sends three packets first, then the caller at `callerAddress`
   * sends three to the media port at `portAddress`, then a half-second prompt (25 packets) plays.
   */
  async function strangerFirst(call: { callerAddress: string; portAddress: string; sdpAddress: string; signallingAddress: string }) {
    const caller = await rtpEndpoint(call.callerAddress);
    const stranger = await rtpEndpoint('127.0.0.2');
    const channel = await thread.open();
    try {
      channel.negotiated(pcmuMedia(call.sdpAddress, caller.port, call.signallingAddress));
      sendSilence(stranger, '127.0.0.1', channel.port, 0xbad, 3);
      await sleep(60);
      sendSilence(caller, call.portAddress, channel.port, 0x600d, 3);
      await sleep(60);
      await playPrompt(channel, 0.5);
      const quality = await channel.close();
      return { caller: caller.received, stranger: stranger.received, quality };
    } finally {
      caller.socket.close();
      stranger.socket.close();
    }
  }

  it('reads an IPv4 caller reported as ::ffff: as the SDP’s address and drops a stranger that sent first', async () => {
    const heard = await strangerFirst({ callerAddress: '127.0.0.1', portAddress: '127.0.0.1', sdpAddress: '127.0.0.1', signallingAddress: '127.0.0.1' });
    expect(heard.caller).toHaveLength(25);
    expect(heard.stranger).toEqual([]);
    expect(heard.quality['packetsIn']).toBe(3);
    expect(heard.quality['strangersDropped']).toBe(3);
  });

  it('takes an IPv6 caller whose SDP writes its address in long form, behind a proxy that signals from elsewhere', async () => {
    // The INVITE came through a proxy at 192.0.2.7; only the SDP names the caller.
    const heard = await strangerFirst({ callerAddress: '::1', portAddress: '::1', sdpAddress: '0:0:0:0:0:0:0:1', signallingAddress: '192.0.2.7' });
    expect(heard.caller).toHaveLength(25);
    expect(heard.stranger).toEqual([]);
    expect(heard.quality['packetsIn']).toBe(3);
    expect(heard.quality['strangersDropped']).toBe(3);
  });
});
