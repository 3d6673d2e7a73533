/**
 * SIPp (Debian's sip-tester) against the gateway: every caller scenario of
 * test/integration/sipp/ calls the telephony service over real sockets — OPTIONS, a call with
 * speech played from a capture (UDP and TCP), CANCEL before the answer, BYE from the gateway,
 * re-INVITE hold and resume, RFC 4733 keys, INFO keys, and malformed and oversized messages
 * after which the gateway must still answer. The routes use the synthetic engines, so what is
 * tested is the SIP and media path.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResampler } from '../../src/audio/resampler.js';
import { TelephonyService } from '../../src/telephony/telephony-service.js';
import {
  assertSippPassed,
  malformedSipMessages,
  oversizedTcpInvite,
  removeSippRuns,
  requireSipp,
  runSipp,
  sendTcp,
  sendUdp,
  sippScenario,
} from '../helpers/sipp.js';
import { writeSippCaptures, type SippCaptures } from './sipp/make-pcap.js';
import { capturedLogger } from '../helpers/captured-logger.js';
import { startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';

const DIALPLAN = `name: sipp
routes:
  - number: "talk"
    engines: synthetic
    language: en
    voice: jonas
    steps:
      - answer: {}
      - id: turn
        listen:
          timeout_ms: 20000
          max_ms: 20000
          max_digits: 3
      - say:
          text: "You said {{heard}}."
      - goto: turn
  - number: "early"
    engines: synthetic
    language: en
    voice: jonas
    steps:
      - say:
          text: Please hold the line while we connect you, this message plays before the call is answered.
      - answer: {}
  - number: "short"
    engines: synthetic
    language: en
    voice: jonas
    steps:
      - answer: {}
      - say:
          text: Goodbye.
      - hangup: {}
`;

let telephony: StartedTelephony;
let service: TelephonyService;
let captures: SippCaptures;
let logs: Array<Record<string, unknown>> = [];

beforeAll(async () => {
  await requireSipp();
  await loadResampler();
  const captured = capturedLogger();
  logs = captured.logs;
  telephony = await startTelephony(DIALPLAN, { SPRACHROHR_RTP_PORTS: '31200-31299' }, { logger: captured.logger });
  service = telephony.service;
  captures = await writeSippCaptures(telephony.dir);
}, 60_000);

afterAll(async () => {
  await telephony?.close();
  await removeSippRuns();
});

const target = () => `127.0.0.1:${service.endpoint.ports.udp}`;
const callLog = (callId: string, msg: string) =>
  logs.filter((line) => line['msg'] === msg && String(line['callId'] ?? '').length > 0 && (callId === '*' || line['callId'] === callId));

async function settled(): Promise<void> {
  const deadline = Date.now() + 5000;
  while (service.activeCalls > 0 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20));
  expect(service.activeCalls).toBe(0);
}

describe('SIPp against the gateway', () => {
  it('options.xml: OPTIONS answered 200 over UDP and TCP', async () => {
    for (const transport of ['u1', 't1'] as const) {
      assertSippPassed(
        await runSipp({ scenario: sippScenario('options.xml'), target: target(), transport, service: 'talk', calls: 3, rate: 20, timeoutMs: 10_000 }),
        3,
      );
    }
  });

  it('basic-call.xml: answered with PCMU and telephone-event, the speech is heard, the caller hangs up; over UDP and TCP', async () => {
    for (const transport of ['u1', 't1'] as const) {
      const before = service.stats.usage.length;
      const result = await runSipp({
        scenario: sippScenario('basic-call.xml'),
        target: target(),
        transport,
        service: 'talk',
        timeoutMs: 20_000,
        variables: { speech_pcap: captures.speechPcap },
      });
      assertSippPassed(result);
      await settled();
      const usage = service.stats.usage.slice(before);
      expect(usage).toHaveLength(1);
      // The recogniser heard the 3.3 s the capture played (and the silence after it).
      expect(usage[0]!.sttSeconds).toBeGreaterThan(2.5);
    }
  }, 60_000);

  it('cancel.xml: early media (183), then CANCEL: 200 for it, 487 for the INVITE', async () => {
    assertSippPassed(await runSipp({ scenario: sippScenario('cancel.xml'), target: target(), service: 'early', timeoutMs: 15_000 }));
    await settled();
  }, 30_000);

  it('bye-from-gateway.xml: the dialplan hangs up and SIPp answers the BYE', async () => {
    assertSippPassed(await runSipp({ scenario: sippScenario('bye-from-gateway.xml'), target: target(), service: 'short', timeoutMs: 15_000 }));
    await settled();
  }, 30_000);

  it('reinvite-hold.xml: hold answered recvonly, resume answered sendrecv', async () => {
    const holdsBefore = callLog('*', 'hold').length;
    assertSippPassed(await runSipp({ scenario: sippScenario('reinvite-hold.xml'), target: target(), service: 'talk', timeoutMs: 15_000 }));
    await settled();
    const holds = callLog('*', 'hold')
      .slice(holdsBefore)
      .map((line) => line['held']);
    expect(holds).toEqual([true, false]);
  }, 30_000);

  it('dtmf-rfc4733.xml: keys 1, 2, # from RFC 4733 events end the listen with "12#"', async () => {
    const before = callLog('*', 'listened').length;
    assertSippPassed(
      await runSipp({
        scenario: sippScenario('dtmf-rfc4733.xml'),
        target: target(),
        service: 'talk',
        timeoutMs: 15_000,
        variables: { dtmf_pcap: captures.dtmfPcap },
      }),
    );
    await settled();
    const listened = callLog('*', 'listened').slice(before);
    expect(listened.map((line) => line['digits'])).toContain('12#');
  }, 30_000);

  it('info-dtmf.xml: INFO with application/dtmf-relay answered 200 and taken as key 5', async () => {
    const before = callLog('*', 'dtmf').length;
    assertSippPassed(await runSipp({ scenario: sippScenario('info-dtmf.xml'), target: target(), service: 'talk', timeoutMs: 15_000 }));
    await settled();
    expect(
      callLog('*', 'dtmf')
        .slice(before)
        .map((line) => line['key']),
    ).toEqual(['5']);
  }, 30_000);

  it('malformed.xml, raw garbage and an oversized TCP message: the gateway keeps answering', async () => {
    assertSippPassed(await runSipp({ scenario: sippScenario('malformed.xml'), target: target(), service: 'talk', timeoutMs: 15_000 }));
    await sendUdp(
      target(),
      malformedSipMessages(target()).map((message) => message.data),
    );
    await sendTcp(`127.0.0.1:${service.endpoint.ports.tcp}`, oversizedTcpInvite(target())).catch(() => undefined);
    assertSippPassed(await runSipp({ scenario: sippScenario('options.xml'), target: target(), service: 'talk', timeoutMs: 10_000 }));
    expect(service.activeCalls).toBe(0);
  }, 30_000);
});
