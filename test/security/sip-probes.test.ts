/**
 * Probes of the embedded SIP endpoint over real sockets, from an allowed source (127.0.0.1)
 * and from a stranger (127.0.0.2; Linux answers on all of 127/8): refusals that cannot be
 * turned into a flood, TCP connections that cannot be hoarded or held open by trickling bytes,
 * and a transaction table that stays bounded.
 */
import net from 'node:net';
import { pino } from 'pino';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CallAdmission } from '../../src/telephony/sip/call-admission.js';
import type { SipDialog } from '../../src/telephony/sip/sip-dialog.js';
import { SipEndpoint, type SipEndpointOptions } from '../../src/telephony/sip/sip-endpoint.js';
import type { SipResponse } from '../../src/telephony/sip/sip-message.js';
import { Peer, response, sipRequest } from '../helpers/sip-peer.js';

const TIMERS = { t1Ms: 40, t2Ms: 320, t4Ms: 200 };
const DEADLINE_MS = 300;
const STRANGER = '127.0.0.2';

const endpoints: SipEndpoint[] = [];
const dialogs: SipDialog[] = [];

async function start(options: Partial<SipEndpointOptions> = {}): Promise<SipEndpoint> {
  const admission = new CallAdmission({ allow: ['127.0.0.1'], maxCalls: 100, maxCallsPerSource: 100 });
  const endpoint = new SipEndpoint({
    host: '127.0.0.1',
    port: 0,
    logger: pino({ level: 'silent' }),
    timers: TIMERS,
    admit: (invite, source) => admission.check(invite, source),
    allowSource: (address) => admission.allows(address),
    messageDeadlineMs: DEADLINE_MS,
    maxConnectionsPerSource: 3,
    ...options,
  });
  endpoint.onCall((dialog) => {
    dialogs.push(dialog);
    dialog.ring();
  });
  await endpoint.listen();
  endpoints.push(endpoint);
  return endpoint;
}

afterEach(() => {
  for (const dialog of dialogs.splice(0)) dialog.reject(486);
});
afterAll(async () => {
  for (const endpoint of endpoints) await endpoint.close();
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Opens a raw TCP connection and resolves when the server closes it (or after `waitMs`). */
function rawConnection(port: number, from: string): { socket: net.Socket; closed: Promise<number> } {
  const opened = performance.now();
  const socket = net.connect({ port, host: '127.0.0.1', localAddress: from });
  socket.on('error', () => undefined);
  return { socket, closed: new Promise((resolve) => socket.once('close', () => resolve(performance.now() - opened))) };
}

describe('requests from outside the allow-list', () => {
  let endpoint: SipEndpoint;
  beforeAll(async () => {
    endpoint = await start();
  });

  it('get one 403, never retransmitted, and no call', async () => {
    const stranger = await Peer.udp(endpoint.ports.udp, STRANGER);
    stranger.write(sipRequest(stranger, 'INVITE', { callId: 'stranger-invite', cseq: 1, body: 'v=0\r\n' }));
    await stranger.next(response(403, 'INVITE'));
    // With T1 = 40 ms a transaction would have resent its 403 about eight times by now.
    await sleep(20 * TIMERS.t1Ms);
    expect(stranger.count(response(403, 'INVITE'))).toBe(1);
    expect(endpoint.activeDialogs).toBe(0);
    expect(endpoint.serverTransactionCount).toBe(0);
    // OPTIONS too: a stranger learns nothing about the gateway.
    stranger.write(sipRequest(stranger, 'OPTIONS', { callId: 'stranger-options', cseq: 1 }));
    await stranger.next(response(403, 'OPTIONS'));
    expect(stranger.count(response(200, 'OPTIONS'))).toBe(0);
    expect(endpoint.strangersRefused).toBe(2);
    stranger.close();
  });

  it('get nothing at all when the gateway is set to drop them', async () => {
    const silent = await start({ strangers: 'drop' });
    const stranger = await Peer.udp(silent.ports.udp, STRANGER);
    stranger.write(sipRequest(stranger, 'INVITE', { callId: 'dropped-invite', cseq: 1 }));
    stranger.write(sipRequest(stranger, 'OPTIONS', { callId: 'dropped-options', cseq: 1 }));
    stranger.write('junk that is not SIP\r\n\r\n');
    await sleep(10 * TIMERS.t1Ms);
    expect(stranger.received).toEqual([]);
    expect(silent.strangersRefused).toBe(2);
    // The allowed source is still served.
    const friend = await Peer.udp(silent.ports.udp);
    friend.write(sipRequest(friend, 'OPTIONS', { callId: 'friend-options', cseq: 1 }));
    await friend.next(response(200, 'OPTIONS'));
    stranger.close();
    friend.close();
  });

  it('cannot open a TCP connection: it is closed at accept, unread', async () => {
    const { socket, closed } = rawConnection(endpoint.ports.tcp, STRANGER);
    socket.write(sipRequest({ port: 1 } as Peer, 'OPTIONS', { callId: 'tcp-stranger', cseq: 1, transport: 'TCP' }));
    expect(await closed).toBeLessThan(DEADLINE_MS);
    expect(socket.bytesRead).toBe(0);
  });
});

describe('SIP over TCP', () => {
  let endpoint: SipEndpoint;
  beforeAll(async () => {
    endpoint = await start();
  });

  it('takes at most the per-source number of connections from one address', async () => {
    const held = await Promise.all([1, 2, 3].map(() => Peer.tcp(endpoint.ports.tcp)));
    for (const [index, peer] of held.entries()) peer.write(sipRequest(peer, 'OPTIONS', { callId: `held-${index}`, cseq: 1, transport: 'TCP' }));
    await Promise.all(held.map((peer) => peer.next(response(200, 'OPTIONS'))));
    const fourth = rawConnection(endpoint.ports.tcp, '127.0.0.1');
    expect(await fourth.closed).toBeLessThan(DEADLINE_MS);
    // Another allowed address is not affected by the first one's connections.
    held[0]!.close();
    await sleep(50);
    const again = await Peer.tcp(endpoint.ports.tcp);
    again.write(sipRequest(again, 'OPTIONS', { callId: 'again', cseq: 1, transport: 'TCP' }));
    await again.next(response(200, 'OPTIONS'));
    for (const peer of [...held.slice(1), again]) peer.close();
    // The server sees the closes a moment later; the next test starts with none of them open.
    await sleep(100);
  });

  it('closes a connection that trickles a message slower than the deadline allows', async () => {
    const { socket, closed } = rawConnection(endpoint.ports.tcp, '127.0.0.1');
    const message = sipRequest({ port: socket.localPort ?? 1 } as Peer, 'OPTIONS', { callId: 'trickle', cseq: 1, transport: 'TCP' });
    let sent = 0;
    const trickle = setInterval(() => {
      if (sent < message.length && !socket.destroyed) socket.write(message[sent++]!);
    }, 20);
    const lasted = await closed;
    clearInterval(trickle);
    // Each byte came well inside any idle timeout; the message as a whole did not arrive in time.
    expect(lasted).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
    expect(lasted).toBeLessThan(DEADLINE_MS + 500);
    expect(sent).toBeLessThan(message.length);
  });

  it('closes a connection that never sends a message', async () => {
    const { closed } = rawConnection(endpoint.ports.tcp, '127.0.0.1');
    const lasted = await closed;
    expect(lasted).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
    expect(lasted).toBeLessThan(DEADLINE_MS + 500);
  });

  it('keeps a connection whose messages arrive whole, across pauses longer than the deadline', async () => {
    const peer = await Peer.tcp(endpoint.ports.tcp);
    peer.write(sipRequest(peer, 'OPTIONS', { callId: 'keep-1', cseq: 1, transport: 'TCP' }));
    await peer.next(response(200, 'OPTIONS'));
    await sleep(DEADLINE_MS * 2);
    peer.write(sipRequest(peer, 'OPTIONS', { callId: 'keep-2', cseq: 2, transport: 'TCP' }));
    const second = (await peer.next((message) => message.kind === 'response' && message.headers.get('Call-ID') === 'keep-2')) as SipResponse;
    expect(second.status).toBe(200);
    peer.close();
  });
});

describe('the transaction table', () => {
  it('is bounded: a request beyond it gets one stateless 503 with Retry-After', async () => {
    const endpoint = await start({ maxServerTransactions: 4 });
    const peer = await Peer.udp(endpoint.ports.udp);
    // Four ringing calls hold four INVITE transactions.
    for (let i = 0; i < 4; i++) peer.write(sipRequest(peer, 'INVITE', { callId: `ringing-${i}`, cseq: 1 }));
    while (endpoint.activeDialogs < 4) await sleep(10);
    peer.write(sipRequest(peer, 'INVITE', { callId: 'one-too-many', cseq: 1 }));
    const refused = (await peer.next((message) => message.kind === 'response' && message.headers.get('Call-ID') === 'one-too-many')) as SipResponse;
    expect(refused.status).toBe(503);
    expect(refused.headers.get('Retry-After')).toBe('5');
    await sleep(10 * TIMERS.t1Ms);
    expect(peer.count((message) => message.kind === 'response' && message.headers.get('Call-ID') === 'one-too-many')).toBe(1);
    expect(endpoint.serverTransactionCount).toBe(4);
    peer.close();
  });

  it('keeps nothing for OPTIONS: a flood of them leaves it empty', async () => {
    const endpoint = await start();
    const peer = await Peer.udp(endpoint.ports.udp);
    // In bursts of 50, each answered before the next, so that no datagram is lost on loopback.
    for (let burst = 0; burst < 10; burst++) {
      for (let i = 0; i < 50; i++) peer.write(sipRequest(peer, 'OPTIONS', { callId: `flood-${burst}-${i}`, cseq: 1 }));
      while (peer.count(response(200, 'OPTIONS')) < (burst + 1) * 50) await sleep(5);
      expect(endpoint.serverTransactionCount).toBe(0);
    }
    peer.close();
  });
});
