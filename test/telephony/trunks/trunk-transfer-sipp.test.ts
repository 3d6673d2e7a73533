/**
 * A transfer through a trunk: SIPp calls the gateway, whose dialplan puts the caller through
 * to a number via the trunk; the bridged INVITE goes to the trunk's proxy (SIPp as the
 * carrier, which challenges with 401 and checks the answer), with the trunk's Caller ID in its
 * domain and only the trunk's codecs offered; the caller hangs up and the gateway hangs up the
 * carrier's leg.
 */
import { readFile } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { capturedLogger } from '../../helpers/captured-logger.js';
import { eventually } from '../../helpers/eventually.js';
import { assertSippPassed, freePort, runSipp, sippScenario, startSippServer } from '../../helpers/sipp.js';
import { anyNumberDialplan, startTelephony, type StartedTelephony } from '../../helpers/started-telephony.js';

let telephony: StartedTelephony;
let carrierPort: number;
const { logger, logs } = capturedLogger();
beforeAll(async () => {
  carrierPort = await freePort();
  process.env['TEST_TRANSFER_TRUNK'] = 'Carrier-Secret';
  const trunks = [
    'trunks:',
    '  - name: carrier',
    `    proxy: 127.0.0.1:${carrierPort}`,
    '    username: gw-out',
    '    password_env: TEST_TRANSFER_TRUNK',
    '    caller_id: "+41445550000"',
    '    from_domain: carrier.test',
    '    codecs: [PCMU]',
    '    options_interval_s: 0',
  ].join('\n');
  telephony = await startTelephony(
    anyNumberDialplan(['      - answer: {}', '      - transfer: { to: "0791234567", trunk: carrier, ring_timeout_s: 10 }', '      - hangup: {}'].join('\n')),
    { SPRACHROHR_RTP_PORTS: '43160-43179' },
    { logger, files: { 'trunks.yaml': trunks } },
  );
});
afterAll(async () => telephony?.close());

describe('a transfer through a trunk', () => {
  it("bridges the caller to a number through the trunk's proxy, with its Caller ID and credentials", async () => {
    const carrier = await startSippServer({
      scenario: sippScenario('outbound-challenge.uas.xml'),
      localPort: carrierPort,
      calls: 1,
      timeoutMs: 20_000,
      variables: { username: 'gw-out', password: 'Carrier-Secret' },
    });
    const caller = await runSipp({
      scenario: sippScenario('caller-hangs-up.xml'),
      target: `127.0.0.1:${telephony.service.endpoint.ports.udp}`,
      service: '0441234567',
      timeoutMs: 15_000,
    });
    assertSippPassed(caller);
    const result = await carrier.result;
    assertSippPassed(result);
    const messages = await readFile(carrier.files.messages, 'latin1');
    expect(messages).toContain(`INVITE sip:0791234567@127.0.0.1:${carrierPort} SIP/2.0`);
    expect(messages).toMatch(/^From: <sip:\+41445550000@carrier\.test>;tag=/m);
    // The trunk's codecs only (the deployment's would add PCMA and Opus).
    expect(messages).toMatch(/^m=audio \d+ RTP\/AVP 0 101\r?$/m);
    // The step logs its outcome once the gateway has the carrier's 200 for its BYE, which may
    // be a moment after the carrier's SIPp sent it and exited.
    await eventually(() => logs.some((line) => line['msg'] === 'transfer'), 5000, 'the transfer step to log its outcome');
    expect(logs.find((line) => line['msg'] === 'transfer')).toMatchObject({ result: 'bridged' });
  }, 40_000);
});
