/**
 * The TLS connections the embedded stack opens (to a trunk's registrar or proxy, to the first
 * hop of a call it places) check the peer's certificate, over real loopback sockets against a
 * `node:tls` server whose certificate a private CA issued for `localhost` only. It is accepted
 * when the CA is the peer's and the name is the one the peer was reached by (also sent as SNI);
 * it is refused without the CA (the public roots do not know it), with another CA, and when
 * only the address is known — at once, and the log names the reason, since it would look like
 * silence otherwise. The refused peers have the address of the trusted one, whose connection is
 * still open: a connection verified for one name and CA is not lent to a peer asking for others.
 * Also: where a SIP URI or a trunk names a host, TLS is checked against that name, not the
 * address it resolved to; and a TLS trunk on a gateway without a TLS listener is warned about.
 */
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseSipUri } from '../../../src/telephony/sip/sip-headers.js';
import { peerForUri, withTlsCa } from '../../../src/telephony/sip/sip-target.js';
import { SipTransport, type SipPeer } from '../../../src/telephony/sip/sip-transport.js';
import { trunkPeer } from '../../../src/telephony/trunks/trunk-peer.js';
import { capturedLogger } from '../../helpers/captured-logger.js';
import { anyNumberDialplan, startTelephony } from '../../helpers/started-telephony.js';
import { trunkFile } from '../../helpers/trunk-file.js';
import { makeTestCertificates, type TestCertificates } from '../../helpers/tls-certificates.js';

let certificates: TestCertificates;
let stranger: TestCertificates;
let server: tls.Server;
let port: number;
let transport: SipTransport;
const { logger, logs } = capturedLogger();
/** What the server received, by connection: the name the client asked for (SNI) and the bytes. */
const received: Array<{ servername: string | false | null; data: string }> = [];

beforeAll(async () => {
  certificates = makeTestCertificates({ dnsNames: ['localhost'] });
  stranger = makeTestCertificates({ dnsNames: ['localhost'] });
  server = tls.createServer({ key: certificates.key, cert: certificates.cert }, (socket) => {
    const connection = { servername: socket.servername, data: '' };
    received.push(connection);
    socket.on('data', (chunk: Buffer) => (connection.data += chunk.toString('latin1')));
    socket.on('error', () => socket.destroy());
  });
  // A refused handshake is the client's business; the server only notes it.
  server.on('tlsClientError', () => undefined);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as { port: number }).port;
  transport = new SipTransport({ host: '127.0.0.1', port: 0, logger });
  await transport.listen();
});
afterAll(async () => {
  await transport?.close();
  await new Promise((resolve) => server?.close(resolve));
  certificates?.remove();
  stranger?.remove();
});

/** Sends a line to the server as `peer`; resolves with the send's error, or null once the server has the line. */
function send(peer: SipPeer, line: string): Promise<Error | null> {
  return new Promise((resolve) => {
    const waiting = setInterval(() => {
      if (received.some((connection) => connection.data.includes(line))) {
        clearInterval(waiting);
        resolve(null);
      }
    }, 10);
    transport.send(Buffer.from(`${line}\r\n`), peer, (error) => {
      clearInterval(waiting);
      resolve(error);
    });
  });
}

const failures = (): string[] => logs.filter((line) => line['msg'] === 'SIP connection to the peer failed').map((line) => String(line['err']));

describe('TLS connections the stack opens', () => {
  it("are made when the certificate chains to the peer's CA and names the host it was reached by", async () => {
    const peer: SipPeer = { transport: 'TLS', address: '127.0.0.1', port, tls: { serverName: 'localhost', ca: certificates.ca.toString() } };
    expect(await send(peer, 'trusted')).toBeNull();
    expect(received.find((connection) => connection.data.includes('trusted'))?.servername).toBe('localhost');
    // The next request for the same peer takes the same connection.
    expect(await send(peer, 'trusted-again')).toBeNull();
    expect(received).toHaveLength(1);
    expect(failures()).toEqual([]);
  });

  /** A refused case: the name and CA the peer is given ('ours', 'stranger' or none), and the reason logged. */
  interface Refusal {
    readonly serverName?: string;
    readonly ca?: 'ours' | 'stranger';
    readonly reason: RegExp;
  }
  const refusals: Array<[string, Refusal]> = [
    ['without a CA of its own: the public roots do not know a private CA', { serverName: 'localhost', reason: /unable to verify the first certificate/ }],
    ['with another CA', { serverName: 'localhost', ca: 'stranger', reason: /unable to verify the first certificate/ }],
    ['by its address alone: the certificate names localhost', { ca: 'ours', reason: /IP: 127\.0\.0\.1 is not in the cert's list/ }],
    ['under another name', { serverName: 'carrier.example.ch', ca: 'ours', reason: /Host: carrier\.example\.ch\. is not in the cert's altnames/ }],
  ];
  it.each(refusals)('are refused %s, at once, and the log says why', async (_case, { serverName, ca, reason }) => {
    const pem = ca === 'ours' ? certificates.ca.toString() : ca === 'stranger' ? stranger.ca.toString() : undefined;
    const before = failures().length;
    const peer: SipPeer = { transport: 'TLS', address: '127.0.0.1', port, tls: { ...(serverName ? { serverName } : {}), ...(pem ? { ca: pem } : {}) } };
    const error = await send(peer, `refused-${before}`);
    expect(error?.message).toMatch(reason);
    expect(failures().slice(before)).toEqual([expect.stringMatching(reason)]);
    expect(received.some((connection) => connection.data.includes(`refused-${before}`))).toBe(false);
  });
});

describe('where a TLS peer is named', () => {
  it('checks a SIP URI or a trunk against the host name it gives, and an address against itself', async () => {
    const uri = (text: string) => parseSipUri(text)!;
    expect(await peerForUri(uri('sips:+41441234567@localhost:5071'), 4)).toEqual({
      transport: 'TLS',
      address: '127.0.0.1',
      port: 5071,
      tls: { serverName: 'localhost' },
    });
    expect(await peerForUri(uri('sip:+41441234567@127.0.0.1;transport=tls'), 4)).toEqual({ transport: 'TLS', address: '127.0.0.1', port: 5061 });
    // Over UDP and TCP there is no certificate to check.
    expect(await peerForUri(uri('sip:+41441234567@localhost:5060;transport=tcp'), 4)).toEqual({ transport: 'TCP', address: '127.0.0.1', port: 5060 });
    expect(withTlsCa({ transport: 'TCP', address: '127.0.0.1', port: 5060 }, 'PEM')).toEqual({ transport: 'TCP', address: '127.0.0.1', port: 5060 });

    expect(await trunkPeer({ host: 'localhost', port: 5061 }, { transport: 'TLS', tlsCa: 'PEM' }, '127.0.0.1')).toEqual({
      transport: 'TLS',
      address: '127.0.0.1',
      port: 5061,
      tls: { serverName: 'localhost', ca: 'PEM' },
    });
    expect(await trunkPeer({ host: '127.0.0.1', port: 5061 }, { transport: 'TLS', tlsCa: null }, '127.0.0.1')).toEqual({
      transport: 'TLS',
      address: '127.0.0.1',
      port: 5061,
    });
  });
});

describe('a TLS trunk on a gateway without a TLS listener', () => {
  it('is warned about: the Contact it is given names a port where nothing speaks TLS', async () => {
    const captured = capturedLogger();
    const trunks = trunkFile({ name: 'pbx', proxy: 'localhost:5061', transport: 'tls', options_interval_s: 0 }, { name: 'plain', proxy: 'localhost:5060' });
    const telephony = await startTelephony(
      anyNumberDialplan('      - hangup: {}'),
      { SPRACHROHR_RTP_PORTS: '43380-43399' },
      { logger: captured.logger, files: { 'trunks.yaml': trunks } },
    );
    try {
      const warnings = captured.logs.filter((line) => String(line['msg']).startsWith('TLS trunks, but no SIP TLS listener'));
      expect(warnings).toMatchObject([{ level: 40, trunks: ['pbx'] }]);
    } finally {
      await telephony.close();
    }
  });
});
