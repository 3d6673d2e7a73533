/**
 * SIP over TLS is admitted like SIP over TCP, before the handshake costs anything, over real
 * loopback sockets: a connection from outside the allow-list (127.0.0.2; Linux answers on all
 * of 127/8) is closed before its handshake; TLS and TCP connections share the per-source
 * limit; and a handshake that never completes counts against the message deadline. (The TCP
 * side of the same rules is probed in test/security/sip-probes.test.ts.)
 */
import net from 'node:net';
import tls from 'node:tls';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SipEndpoint } from '../../../src/telephony/sip/sip-endpoint.js';
import { Peer, response, sipRequest } from '../../helpers/sip-peer.js';
import { makeTestCertificates, type TestCertificates } from '../../helpers/tls-certificates.js';

const DEADLINE_MS = 300;
/** Longer than the deadline with room for a loaded machine, far below any default. */
const PATIENCE_MS = DEADLINE_MS + 1500;

let endpoint: SipEndpoint;
let certificates: TestCertificates;

beforeAll(async () => {
  certificates = makeTestCertificates();
  endpoint = new SipEndpoint({
    host: '127.0.0.1',
    port: 0,
    tls: { port: 0, key: certificates.key, cert: certificates.cert },
    logger: pino({ level: 'silent' }),
    allowSource: (address) => address === '127.0.0.1',
    messageDeadlineMs: DEADLINE_MS,
    maxConnectionsPerSource: 2,
  });
  await endpoint.listen();
});
afterAll(async () => {
  await endpoint.close();
  certificates.remove();
});

/** How long after opening the server closed `socket`; null when it was still open after PATIENCE_MS. */
function closedAfter(socket: net.Socket): Promise<number | null> {
  const opened = performance.now();
  socket.on('error', () => undefined);
  return new Promise((resolve) => {
    const patience = setTimeout(() => resolve(null), PATIENCE_MS);
    socket.once('close', () => {
      clearTimeout(patience);
      resolve(performance.now() - opened);
    });
  });
}

/** Closes the peers and gives the server a moment to see it. */
async function closeAll(peers: Array<{ close(): void }>): Promise<void> {
  for (const peer of peers) peer.close();
  await new Promise((resolve) => setTimeout(resolve, 100));
}

describe('SIP over TLS', () => {
  it('serves an allowed source', async () => {
    const peer = await Peer.tls(endpoint.ports.tls!);
    peer.write(sipRequest(peer, 'OPTIONS', { callId: 'over-tls', cseq: 1, transport: 'TLS' }));
    await peer.next(response(200, 'OPTIONS'));
    await closeAll([peer]);
  });

  it('closes a connection from outside the allow-list before the handshake', async () => {
    let handshaken = false;
    const raw = net.connect({ port: endpoint.ports.tls!, host: '127.0.0.1', localAddress: '127.0.0.2' });
    const secure = tls.connect({ socket: raw, rejectUnauthorized: false }, () => (handshaken = true));
    const lasted = await closedAfter(secure);
    expect(lasted).not.toBeNull();
    expect(lasted!).toBeLessThan(DEADLINE_MS);
    expect(handshaken).toBe(false);
  });

  it('shares the per-source limit with TCP, and a closed connection gives its place back', async () => {
    const held = [await Peer.tls(endpoint.ports.tls!), await Peer.tcp(endpoint.ports.tcp)];
    let handshaken = false;
    const over = tls.connect({ port: endpoint.ports.tls!, host: '127.0.0.1', rejectUnauthorized: false }, () => (handshaken = true));
    const lasted = await closedAfter(over);
    expect(lasted).not.toBeNull();
    expect(lasted!).toBeLessThan(DEADLINE_MS);
    expect(handshaken).toBe(false);
    await closeAll(held.slice(0, 1));
    const again = await Peer.tls(endpoint.ports.tls!);
    again.write(sipRequest(again, 'OPTIONS', { callId: 'again', cseq: 1, transport: 'TLS' }));
    await again.next(response(200, 'OPTIONS'));
    await closeAll([held[1]!, again]);
  });

  it('closes a connection whose handshake never comes within the message deadline', async () => {
    const lasted = await closedAfter(net.connect({ port: endpoint.ports.tls!, host: '127.0.0.1' }));
    expect(lasted).not.toBeNull();
    expect(lasted!).toBeGreaterThanOrEqual(DEADLINE_MS - 20);
  });
});
