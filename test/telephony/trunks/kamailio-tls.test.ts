/**
 * A trunk over TLS against a real TLS peer. SIPp from Debian (sip-tester 3.6.1) is built
 * without OpenSSL (`sipp -t l1` says "To use a TLS transport you must compile SIPp with
 * OpenSSL"), so Kamailio from Debian is the carrier, with its tls module (the package
 * kamailio-tls-modules, bookworm main) on a free loopback port, as a carrier runs SIP over TLS.
 * The carrier's certificate is issued by a private CA that the test makes with openssl, for
 * `localhost` only: the trunk names its registrar `localhost:PORT` and trusts the CA through
 * `tls_ca_file`, so the connection is verified as a deployment verifies it — against the name
 * in the trunk file, not the address it resolved to.
 *
 * Over that connection the gateway registers with digest (Kamailio challenges in SHA-256 and
 * checks the answer), has its OPTIONS keep-alive answered, refreshes the 4-second binding
 * Kamailio grants, places a call through the API that Kamailio challenges (407) and relays to a
 * SIPp callee (over UDP: SIPp has no TLS), which answers, receives the route's speech as RTP and
 * hangs up through Kamailio; and at shutdown it removes the binding. The callee's BYE comes
 * back from Kamailio on a TLS connection of its own, to the Contact the gateway gave: the
 * gateway's own TLS listener. A trunk to the same carrier without `tls_ca_file` is refused at
 * once (the public roots do not know the CA), and its registration and keep-alive say why.
 * Skipped, with the reason, only where Kamailio or its tls module cannot be installed.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogger } from '../../helpers/captured-logger.js';
import { eventually } from '../../helpers/eventually.js';
import { kamailioTlsMissing, startKamailio, type KamailioRun } from '../../helpers/kamailio.js';
import { callThroughCarrier, reminderDialplan } from '../../helpers/carrier-call.js';
import { freePort } from '../../helpers/sipp.js';
import { anyNumberDialplan, startTelephony, type StartedTelephony } from '../../helpers/started-telephony.js';
import { makeTestCertificates, type TestCertificates } from '../../helpers/tls-certificates.js';
import { trunkFile, type TrunkFields } from '../../helpers/trunk-file.js';

const missing = kamailioTlsMissing();

const REMINDER = reminderDialplan('Guten Tag, hier ist Ihr Anbieter. Wir erinnern Sie an Ihre Rechnung, die morgen fällig wird.');

/** Kamailio's TLS settings: its certificate and key; it asks nothing of the gateway's. */
const TLS_CFG = [
  '[server:default]',
  'method = TLSv1.2+',
  'verify_certificate = no',
  'require_certificate = no',
  'private_key = {{key}}',
  'certificate = {{cert}}',
  '',
  '[client:default]',
  'method = TLSv1.2+',
  'verify_certificate = no',
  'require_certificate = no',
  '',
].join('\n');

describe.skipIf(missing !== null)(`a trunk over TLS, Kamailio as the carrier${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let certificates: TestCertificates;
  let kamailio: KamailioRun;
  let telephony: StartedTelephony | null = null;
  let calleePort: number;
  let carrier: TrunkFields;
  const { logger, logs } = capturedLogger();
  beforeAll(async () => {
    certificates = makeTestCertificates({ dnsNames: ['localhost'] });
    calleePort = await freePort();
    kamailio = await startKamailio(
      'provider.cfg',
      { user: 'gw-tls', password: 'Tls-Secret-42', callee: `127.0.0.1:${calleePort}`, key: certificates.keyFile, cert: certificates.certFile },
      { tls: true, defines: { WITH_TLS: '1', MAX_EXPIRES: '4' }, files: { 'tls.cfg': TLS_CFG } },
    );
    process.env['TEST_KAMAILIO_TLS_PASSWORD'] = 'Tls-Secret-42';
    carrier = {
      name: 'carrier',
      registrar: `localhost:${kamailio.tlsPort}`,
      transport: 'tls',
      tls_ca_file: certificates.caFile,
      username: 'gw-tls',
      password_env: 'TEST_KAMAILIO_TLS_PASSWORD',
      // The first OPTIONS goes at once, beside the first REGISTER, on the same connection.
      options_interval_s: 60,
    };
    // The gateway's own listener (the same test certificate) takes the connections Kamailio opens to its Contact.
    telephony = await startTelephony(
      anyNumberDialplan('      - hangup: {}'),
      {
        SPRACHROHR_RTP_PORTS: '43360-43379',
        SPRACHROHR_SIP_TLS_CERT: certificates.certFile,
        SPRACHROHR_SIP_TLS_KEY: certificates.keyFile,
        SPRACHROHR_SIP_TLS_PORT: '0',
      },
      { logger, files: { 'trunks.yaml': trunkFile(carrier), 'reminder.yaml': REMINDER } },
    );
  });
  afterAll(async () => {
    await telephony?.close();
    await kamailio?.stop();
    certificates?.remove();
  });

  it('registers over TLS with SHA-256 digest, has its keep-alive answered, and refreshes the binding before it runs out', async () => {
    const service = telephony!.service;
    const registration = () => service.trunkStatus()[0]!.registration!;
    await eventually(() => registration().state === 'registered', 5000, 'the registration over TLS');
    expect(service.trunkStatus()[0]).toMatchObject({ transport: 'TLS', registrar: `localhost:${kamailio.tlsPort}` });
    // Kamailio answers the keep-alive's OPTIONS over TLS too.
    await eventually(() => service.trunkStatus()[0]?.keepalive?.reachable === true, 3000, 'the keep-alive over TLS');
    // Kamailio granted 4 s of the 600 asked for.
    const first = registration();
    expect(Date.parse(first.expiresAt!) - Date.parse(first.lastRegisteredAt!)).toBeLessThanOrEqual(4000);
    await eventually(() => registration().lastRegisteredAt !== first.lastRegisteredAt, 5000, 'the refresh');
    expect(registration()).toMatchObject({ state: 'registered', failures: 0, lastError: null });
    // Each REGISTER came over TLS: Kamailio's log names the transport it received it on.
    const registered = kamailio.log().match(/registered gw-tls with expires 600 algorithm SHA-256 over tls/g) ?? [];
    expect(registered.length).toBeGreaterThanOrEqual(2);
    expect(logs.filter((line) => line['msg'] === 'SIP connection to the peer failed')).toEqual([]);
    // With a TLS listener of its own the gateway has nothing to warn about.
    expect(logs.filter((line) => String(line['msg']).startsWith('TLS trunks, but no SIP TLS listener'))).toEqual([]);
  }, 20_000);

  it('places a call through the TLS trunk: challenged, answered by the callee, which hears the route', async () => {
    const service = telephony!.service;
    await eventually(() => service.trunkStatus()[0]?.registration?.state === 'registered', 5000);
    const { record, packets } = await callThroughCarrier(service, { to: '+41791234567', trunk: 'carrier', calleePort });
    expect(record).toMatchObject({ state: 'completed', sipStatus: 200, trunk: 'carrier', endedBy: 'callee' });
    expect(record.target).toBe(`sip:+41791234567@localhost:${kamailio.tlsPort};transport=tls`);
    expect(kamailio.log()).toContain('outbound call from gw-tls to +41791234567 over tls');
    expect(packets.filter((packet) => packet.payloadType === 0).length).toBeGreaterThan(60);
  }, 30_000);

  it('does not trust the carrier for a trunk without its CA: refused at once, and the trunk says why', async () => {
    const service = telephony!.service;
    // The same carrier, reached by the same name, but trusting only the public roots.
    const untrusted = { ...Object.fromEntries(Object.entries(carrier).filter(([field]) => field !== 'tls_ca_file')), name: 'untrusted', username: 'gw-other' };
    await fs.writeFile(path.join(telephony!.dir, 'trunks.yaml'), trunkFile(carrier, untrusted));
    const status = () => service.trunkStatus().find((trunk) => trunk.name === 'untrusted')?.registration;
    // Long before Timer F (32 s) would give up on a registrar that does not answer.
    await eventually(() => (status()?.failures ?? 0) >= 1, 3000, 'the refusal');
    expect(status()).toMatchObject({ state: 'failed', lastError: 'no connection to the registrar: unable to verify the first certificate' });
    await eventually(() => service.trunkStatus().find((trunk) => trunk.name === 'untrusted')?.keepalive?.reachable === false, 3000);
    expect(service.trunkStatus().find((trunk) => trunk.name === 'untrusted')?.keepalive?.lastError).toBe(
      'no connection to the proxy: unable to verify the first certificate',
    );
    expect(logs.find((line) => line['msg'] === 'SIP connection to the peer failed')).toMatchObject({
      serverName: 'localhost',
      err: 'unable to verify the first certificate',
    });
    // The trusted trunk's connection was not lent to it, and stays registered.
    expect(kamailio.log()).not.toContain('gw-other');
    expect(service.trunkStatus().find((trunk) => trunk.name === 'carrier')?.registration?.state).toBe('registered');
  });

  it('removes the binding at shutdown, over TLS', async () => {
    await telephony!.close();
    telephony = null;
    expect(kamailio.log()).toMatch(/registered gw-tls with expires 0 algorithm SHA-256 over tls/);
  });
});
