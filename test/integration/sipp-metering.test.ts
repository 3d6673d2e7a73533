/**
 * Phone calls drawn from their dialplan's account (a real SIPp caller, eSpeak NG prompts): the
 * call's synthesis is written to the ledger as realtime use of the account; a call whose
 * account's evaluation allowance runs out while it talks is told so (its media socket hears the
 * notice) and hung up by the gateway;
 * a call to an account with nothing left hears the notice before an answer and is refused (480).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadResampler } from '../../src/audio/resampler.js';
import { AccountService } from '../../src/auth/account-service.js';
import { EntitlementService } from '../../src/entitlements/entitlement-service.js';
import { CallMeter } from '../../src/metering/call-meter.js';
import { capturedLogger } from '../helpers/captured-logger.js';
import { decodeMulaw } from '../../src/audio/g711.js';
import { assertSippPassed, removeSippRuns, requireSipp, runSipp, sippScenario, startRtpSink } from '../helpers/sipp.js';
import { startTelephony, type StartedTelephony } from '../helpers/started-telephony.js';

const DIALPLAN = `name: metered
account: callco
routes:
  - number: "talk"
    language: en
    voice: jonas
    steps:
      - answer: {}
      - say:
          text: Hello, you are connected to the test line.
      - say:
          text: This second prompt is long enough that the check of the allowance comes while it plays, so the caller hears the notice instead of the rest of it.
      - hangup: {}
`;

let telephony: StartedTelephony;
let logs: Array<Record<string, unknown>> = [];
let accountId = '';

beforeAll(async () => {
  await requireSipp();
  await loadResampler();
  const captured = capturedLogger();
  logs = captured.logs;
  telephony = await startTelephony(
    DIALPLAN,
    { SPRACHROHR_RTP_PORTS: '31800-31849', SPRACHROHR_TTS_ENGINE: 'espeak' },
    {
      logger: captured.logger,
      allowanceCheckMs: 200,
      metering: (store) => new CallMeter({ accounts: store.accounts, entitlements: store.entitlements, usage: store.usage, rates: { tts: 1, stt: 1 } }),
    },
  );
  const account = await new AccountService(telephony.store.accounts).create('callco');
  accountId = account.id;
  await new EntitlementService(telephony.store.entitlements).add(account.id, { kind: 'evaluation', seconds: 2 });
}, 60_000);

afterAll(async () => {
  await telephony?.close();
  await removeSippRuns();
});

const target = () => `127.0.0.1:${telephony.service.endpoint.ports.udp}`;

/** Waits until `count` calls have ended (and been metered: a call counts as ended after its ledger entries). */
async function callsEnded(count: number): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (telephony.service.stats.callsEnded < count) {
    if (Date.now() > deadline) throw new Error(`only ${telephony.service.stats.callsEnded} of ${count} calls ended`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
const ledger = () => telephony.store.usage.summary(accountId, '2000-01-01T00:00:00.000Z', '2100-01-01T00:00:00.000Z');
/** A µ-law packet with sound in it (speech, not the silence between words). */
const voiced = (payload: Buffer): boolean => decodeMulaw(payload).some((sample) => Math.abs(sample) > 500);

describe('phone calls and entitlements', () => {
  it('meters the call and ends it, with the notice, once the allowance is used up', async () => {
    const sink = await startRtpSink();
    try {
      assertSippPassed(
        await runSipp({
          scenario: sippScenario('stream-call-hungup.xml'),
          target: target(),
          service: 'talk',
          timeoutMs: 30_000,
          variables: { payloads: '0', rtp_port: String(sink.port) },
        }),
      );
    } finally {
      await sink.close();
    }
    await callsEnded(1);
    const usedUp = logs.find((line) => line['msg'] === "the account's entitlements are used up: the caller is told so and the call ends");
    expect(usedUp).toBeDefined();
    // The caller hears the notice (about 5 s of eSpeak) before the gateway hangs up: packets with
    // sound keep coming for more than 2 s after the allowance ran out.
    const after = sink.packets.filter((packet) => performance.timeOrigin + packet.at > (usedUp!['time'] as number) && voiced(packet.payload));
    expect(after.length).toBeGreaterThan(100);
    expect(logs.find((line) => line['msg'] === 'hanging up')?.['reason']).toBe('entitlement_exhausted');
    const [row, ...others] = await ledger();
    expect(others).toEqual([]);
    expect(row).toMatchObject({ environment: 'live', direction: 'tts', mode: 'realtime', requests: 1 });
    // The first prompt passed the 2 s; the second (about 9 s, synthesised and metered whole) was
    // cut short by the notice: the call was over long before all it synthesised could play.
    expect(row!.audioSeconds).toBeGreaterThan(2);
    const ended = logs.find((line) => line['msg'] === 'call ended')!;
    expect(ended['ttsSeconds']).toBe(row!.audioSeconds);
    expect(ended['durationSeconds'] as number).toBeLessThan(row!.audioSeconds - 3);
    const [evaluation] = await telephony.store.entitlements.list(accountId);
    expect(evaluation!.used).toBeCloseTo(row!.audioSeconds, 3);
  }, 60_000);

  it('refuses a call to an account with nothing left, after telling the caller so', async () => {
    assertSippPassed(await runSipp({ scenario: sippScenario('used-up.xml'), target: target(), service: 'talk', timeoutMs: 30_000 }));
    await callsEnded(2);
    expect(logs.filter((line) => line['msg'] === 'hanging up').map((line) => line['reason'])).toEqual(['entitlement_exhausted', 'entitlement_exhausted']);
    // The notice is not billed: the ledger still has the first call only.
    expect((await ledger())[0]!.requests).toBe(1);
  }, 60_000);
});
