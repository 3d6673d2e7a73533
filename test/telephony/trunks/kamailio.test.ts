/**
 * Kamailio (Debian's kamailio 5.6) as the carrier, as a real provider runs it: the gateway
 * registers with digest (Kamailio challenges in SHA-256 with qop auth and checks the answer),
 * SIPp calls a number of the account through Kamailio, which sends the call to the registered
 * gateway with the number dialled in To and stays in the dialog (Record-Route); the trunk's
 * route runs and hangs up through Kamailio. A call placed through the API goes out through
 * Kamailio (which challenges it with 407) to a SIPp callee, whose RTP port receives the route's
 * speech. At shutdown the binding is removed. Skipped, with the reason, only where Kamailio
 * cannot be installed.
 */
import { eventually } from '../../helpers/eventually.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogger } from '../../helpers/captured-logger.js';
import { kamailioMissing, startKamailio, type KamailioRun } from '../../helpers/kamailio.js';
import { callThroughCarrier, reminderDialplan } from '../../helpers/carrier-call.js';
import { assertSippPassed, freePort, runSipp, sippScenario } from '../../helpers/sipp.js';
import { startTelephony, type StartedTelephony } from '../../helpers/started-telephony.js';

const missing = kamailioMissing();
const DIALPLAN = [
  'name: carrier-numbers',
  'routes:',
  '  - number: "0441234567"',
  '    trunk: carrier',
  '    engines: synthetic',
  '    language: en',
  '    voice: jonas',
  '    steps:',
  '      - answer: {}',
  '      - hangup: { reason: through the carrier }',
].join('\n');

const REMINDER = reminderDialplan('Guten Tag, hier ist Ihr Anbieter. Wir erinnern Sie an Ihre Rechnung, die morgen fällig wird. Auf Wiederhören.');

describe.skipIf(missing !== null)(`Kamailio as the carrier${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let kamailio: KamailioRun;
  let telephony: StartedTelephony | null = null;
  let calleePort: number;
  const { logger, logs } = capturedLogger();
  beforeAll(async () => {
    calleePort = await freePort();
    kamailio = await startKamailio('provider.cfg', { user: 'gw-kam', password: 'Kamailio-Secret-7', callee: `127.0.0.1:${calleePort}` });
    process.env['TEST_KAMAILIO_PASSWORD'] = 'Kamailio-Secret-7';
    const trunks = [
      'trunks:',
      '  - name: carrier',
      `    registrar: ${kamailio.address}`,
      '    username: gw-kam',
      '    password_env: TEST_KAMAILIO_PASSWORD',
      '    allow: [127.0.0.1]',
    ].join('\n');
    // Only the trunk's address may call: the carrier, not the caller behind it.
    telephony = await startTelephony(
      DIALPLAN,
      { SPRACHROHR_RTP_PORTS: '43140-43159', SPRACHROHR_SIP_ALLOW: '127.0.0.9' },
      { logger, files: { 'trunks.yaml': trunks, 'reminder.yaml': REMINDER } },
    );
  });
  afterAll(async () => {
    await telephony?.close();
    await kamailio?.stop();
  });

  it('places a call through the carrier: challenged, authenticated, answered by the callee, which hears the route', async () => {
    const service = telephony!.service;
    await eventually(() => service.trunkStatus()[0]?.registration?.state === 'registered', 5000);
    const { record, packets } = await callThroughCarrier(service, { to: '+41791234567', trunk: 'carrier', calleePort });
    expect(record).toMatchObject({ state: 'completed', sipStatus: 200, trunk: 'carrier', endedBy: 'callee', earlyMedia: true });
    expect(record.target).toBe(`sip:+41791234567@${kamailio.address}`);
    expect(kamailio.log()).toContain('outbound call from gw-kam to +41791234567 over udp');
    expect(packets.filter((packet) => packet.payloadType === 0).length).toBeGreaterThan(60);
  }, 30_000);

  it('registers with SHA-256 digest, takes a call through the carrier on its route, and removes the binding at shutdown', async () => {
    const service = telephony!.service;
    await eventually(() => service.trunkStatus()[0]?.registration?.state === 'registered', 5000);
    expect(kamailio.log()).toContain('registered gw-kam with expires 600 algorithm SHA-256');
    // Kamailio answers the keep-alive's OPTIONS.
    await eventually(() => service.trunkStatus()[0]?.keepalive?.reachable === true, 3000);

    assertSippPassed(await runSipp({ scenario: sippScenario('bye-from-gateway.xml'), target: kamailio.address, service: '0441234567', timeoutMs: 15_000 }));
    // The call came to the registered Contact (user gw-kam): it was routed by the number in To,
    // the only route there is.
    expect(logs.filter((line) => line['msg'] === 'hanging up').map((line) => line['reason'])).toEqual(['through the carrier']);

    await telephony!.close();
    telephony = null;
    expect(kamailio.log()).toContain('registered gw-kam with expires 0 algorithm SHA-256');
    // Not registered any more: the carrier has nowhere to send the number.
    const after = await runSipp({ scenario: sippScenario('bye-from-gateway.xml'), target: kamailio.address, service: '0441234567', timeoutMs: 5000 });
    expect(after.exitCode).not.toBe(0);
    expect(after.report).toContain('480');
  }, 40_000);
});
