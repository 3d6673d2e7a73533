/**
 * The media sockets' address lookup: IP literals answered in the same call (so a pacer tick's
 * packets leave within the tick, not a tick later), host names still resolved, and the sockets
 * of the RTP port pool sending with it to both.
 */
import dgram from 'node:dgram';
import { once } from 'node:events';
import { afterEach, describe, expect, it } from 'vitest';
import { literalAddressLookup } from '../../../src/telephony/media/literal-address-lookup.js';
import { RtpPortPool, type RtpPorts } from '../../../src/telephony/media/rtp-port-pool.js';

describe('literalAddressLookup', () => {
  it('answers IPv4 and IPv6 literals before it returns', () => {
    const answers: Array<[string, number]> = [];
    literalAddressLookup('192.0.2.7', 4, (error, address, family) => {
      expect(error).toBeNull();
      answers.push([address, family]);
    });
    literalAddressLookup('2001:db8::1', { family: 6 }, (error, address, family) => {
      expect(error).toBeNull();
      answers.push([address, family]);
    });
    expect(answers).toEqual([
      ['192.0.2.7', 4],
      ['2001:db8::1', 6],
    ]);
  });

  it('resolves a host name through the system resolver, and reports one that does not exist', async () => {
    const resolved = await new Promise<[string, number]>((resolve, reject) =>
      literalAddressLookup('localhost', 4, (error, address, family) => (error ? reject(error) : resolve([address, family]))),
    );
    expect(resolved).toEqual(['127.0.0.1', 4]);
    const failure = await new Promise<NodeJS.ErrnoException | null>((resolve) => literalAddressLookup('no-such-host.invalid', 4, (error) => resolve(error)));
    // Which code depends on the machine's resolver (no name server: a temporary failure).
    expect(failure?.code).toMatch(/^(ENOTFOUND|EAI_AGAIN|EAI_FAIL)$/);
  });
});

describe('RtpPortPool sockets', () => {
  let ports: RtpPorts | null = null;
  let receiver: dgram.Socket | null = null;
  afterEach(() => {
    ports?.release();
    receiver?.close();
    ports = null;
    receiver = null;
  });

  it('send to an address literal and to a host name', async () => {
    ports = await new RtpPortPool('127.0.0.1', { min: 43100, max: 43199 }).allocate();
    receiver = dgram.createSocket('udp4');
    receiver.bind(0, '127.0.0.1');
    await once(receiver, 'listening');
    const target = receiver.address().port;
    const received: string[] = [];
    receiver.on('message', (data) => received.push(data.toString()));
    ports.rtp.send(Buffer.from('literal'), target, '127.0.0.1');
    ports.rtp.send(Buffer.from('name'), target, 'localhost');
    await expect.poll(() => received.sort()).toEqual(['literal', 'name']);
  });
});
