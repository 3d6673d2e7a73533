/**
 * Calls from a trunk's sources (its `allow`) take the routes that name the trunk: SIPp calls
 * the same number from the trunk's address (127.0.0.2) and from another allowed one
 * (127.0.0.1), and each call runs its own route.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogger } from '../../helpers/captured-logger.js';
import { assertSippPassed, runSipp, sippScenario } from '../../helpers/sipp.js';
import { startTelephony, type StartedTelephony } from '../../helpers/started-telephony.js';

const route = (trunk: string | null, reason: string) =>
  [
    '  - number: "0441234567"',
    ...(trunk ? [`    trunk: ${trunk}`] : []),
    '    engines: synthetic',
    '    language: en',
    '    voice: jonas',
    '    steps:',
    '      - answer: {}',
    `      - hangup: { reason: ${reason} }`,
  ].join('\n');
const DIALPLAN = ['name: trunks', 'routes:', route('carrier', 'from-carrier'), route(null, 'from-elsewhere')].join('\n');
const TRUNKS = ['trunks:', '  - name: carrier', '    proxy: 127.0.0.2:5060', '    allow: [127.0.0.2]', '    options_interval_s: 0'].join('\n');

let telephony: StartedTelephony;
const { logger, logs } = capturedLogger();
beforeAll(async () => {
  telephony = await startTelephony(
    DIALPLAN,
    { SPRACHROHR_RTP_PORTS: '43120-43139', SPRACHROHR_SIP_ALLOW: '127.0.0.1' },
    { logger, files: { 'trunks.yaml': TRUNKS } },
  );
});
afterAll(async () => telephony?.close());

const target = () => `127.0.0.1:${telephony.service.endpoint.ports.udp}`;
const reasons = () => logs.filter((line) => line['msg'] === 'hanging up').map((line) => line['reason']);

describe('routes by trunk', () => {
  it("runs the trunk's route for a call from its address, and the general route for others", async () => {
    assertSippPassed(
      await runSipp({ scenario: sippScenario('bye-from-gateway.xml'), target: target(), localIp: '127.0.0.2', service: '0441234567', timeoutMs: 15_000 }),
    );
    assertSippPassed(await runSipp({ scenario: sippScenario('bye-from-gateway.xml'), target: target(), service: '0441234567', timeoutMs: 15_000 }));
    expect(reasons()).toEqual(['from-carrier', 'from-elsewhere']);
  }, 40_000);
});
