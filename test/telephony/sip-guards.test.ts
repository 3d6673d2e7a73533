/**
 * The SIP guards as configured: `SPRACHROHR_SIP_REFUSE` and
 * `SPRACHROHR_SIP_MAX_CONNECTIONS_PER_SOURCE` are read and checked, and reach the embedded
 * endpoint of a started telephony service, with `SPRACHROHR_SIP_ALLOW` narrowed to 127.0.0.1
 * and a stranger on 127.0.0.2 (Linux answers on all of 127/8).
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TelephonyService } from '../../src/telephony/telephony-service.js';
import { loadTelephonyConfig, TELEPHONY_CONFIG_VARIABLES } from '../../src/telephony/telephony-config.js';
import { Peer, response, sipRequest } from '../helpers/sip-peer.js';
import { anyNumberDialplan, startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';

const DIALPLAN = anyNumberDialplan('      - hangup: {}\n');

describe('configuration', () => {
  it('reads the refusal policy and the per-source connection limit, with their defaults', () => {
    expect(loadTelephonyConfig({})).toMatchObject({ refuse: '403', maxConnectionsPerSource: 16 });
    expect(loadTelephonyConfig({ SPRACHROHR_SIP_REFUSE: 'drop', SPRACHROHR_SIP_MAX_CONNECTIONS_PER_SOURCE: '4' })).toMatchObject({
      refuse: 'drop',
      maxConnectionsPerSource: 4,
    });
    expect(() => loadTelephonyConfig({ SPRACHROHR_SIP_REFUSE: '404' })).toThrow(/SPRACHROHR_SIP_REFUSE/);
    expect(() => loadTelephonyConfig({ SPRACHROHR_SIP_MAX_CONNECTIONS_PER_SOURCE: '0' })).toThrow(/SPRACHROHR_SIP_MAX_CONNECTIONS_PER_SOURCE/);
    const documented = TELEPHONY_CONFIG_VARIABLES.map(([name]) => name);
    expect(documented).toContain('SPRACHROHR_SIP_REFUSE');
    expect(documented).toContain('SPRACHROHR_SIP_MAX_CONNECTIONS_PER_SOURCE');
  });
});

describe('a telephony service with a narrowed allow-list', () => {
  let started: StartedTelephony;
  let service: TelephonyService;

  beforeAll(async () => {
    started = await startTelephony(DIALPLAN, {
      SPRACHROHR_RTP_PORTS: '31700-31719',
      SPRACHROHR_SIP_ALLOW: '127.0.0.1/32',
      SPRACHROHR_SIP_REFUSE: 'drop',
      SPRACHROHR_SIP_MAX_CONNECTIONS_PER_SOURCE: '1',
    });
    service = started.service;
  }, 60_000);
  afterAll(async () => started?.close());

  it('drops a stranger without an answer and takes one TCP connection per source', async () => {
    const stranger = await Peer.udp(service.endpoint.ports.udp, '127.0.0.2');
    const friend = await Peer.udp(service.endpoint.ports.udp);
    stranger.write(sipRequest(stranger, 'OPTIONS', { callId: 'stranger', cseq: 1 }));
    friend.write(sipRequest(friend, 'OPTIONS', { callId: 'friend', cseq: 1 }));
    await friend.next(response(200, 'OPTIONS'));
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(stranger.received).toEqual([]);
    expect(service.endpoint.strangersRefused).toBe(1);
    stranger.close();
    friend.close();

    const first = await Peer.tcp(service.endpoint.ports.tcp);
    const second = net.connect({ port: service.endpoint.ports.tcp, host: '127.0.0.1' });
    second.on('error', () => undefined);
    await new Promise((resolve) => second.once('close', resolve));
    first.write(sipRequest(first, 'OPTIONS', { callId: 'first', cseq: 1, transport: 'TCP' }));
    await first.next(response(200, 'OPTIONS'));
    first.close();
  });
});
