/**
 * Entitlements enforced on live traffic (spec 2.9, 8) with the real eSpeak NG engine: an
 * evaluation allowance is a hard cap (work refused, and cut when it reaches the cap), credit
 * refuses new work once used up while work in progress completes, a commitment never refuses;
 * sandbox keys draw nothing, and GET /v1/usage shows what is used and left.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageReportSchema } from '../../src/api/usage-schemas.js';
import { AccountService } from '../../src/auth/account-service.js';
import { EntitlementService, type EntitlementRequest } from '../../src/entitlements/entitlement-service.js';
import { expectError } from '../helpers/error-envelope.js';
import { expectSchema } from '../helpers/schema-check.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let entitlements: EntitlementService;
beforeAll(async () => {
  t = await createTestApp({ SPRACHROHR_TTS_ENGINE: 'espeak', SPRACHROHR_CREDITS_PER_TTS_SECOND: '2' });
  entitlements = new EntitlementService(t.store.entitlements);
});
afterAll(async () => t.close());

/** A new account with the entitlements given, and a live and a sandbox key of it. */
async function account(name: string, ...granted: EntitlementRequest[]) {
  const created = await new AccountService(t.store.accounts).create(name);
  for (const request of granted) await entitlements.add(created.id, request);
  return {
    id: created.id,
    live: (await t.services.keys.create(`${name} live`, 'live', created.id)).key,
    sandbox: (await t.services.keys.create(`${name} sandbox`, 'sandbox', created.id)).key,
  };
}

function synth(key: string, text = 'Grüezi mitenand.') {
  return t.app.inject({
    method: 'POST',
    url: '/v1/tts',
    headers: { 'x-api-key': key, 'content-type': 'application/json' },
    payload: { text, format: 'pcm16' },
  });
}

async function report(key: string) {
  const response = await t.app.inject({ method: 'GET', url: '/v1/usage', headers: { 'x-api-key': key } });
  expect(response.statusCode).toBe(200);
  const body = response.json();
  expectSchema(UsageReportSchema, body);
  return body;
}

const seconds = (response: { headers: Record<string, unknown> }) => Number(response.headers['x-speech-audio-duration']);

describe('entitlements on live traffic', () => {
  it('an evaluation allowance is a hard cap: what would pass it is refused, and nothing past it is billed', async () => {
    const trial = await account('trial-co', { kind: 'evaluation', seconds: 3 });
    const first = await synth(trial.live);
    expect(first.statusCode, first.body.slice(0, 200)).toBe(200);
    const used = seconds(first);
    expect(used).toBeGreaterThan(0.8);
    expect(used).toBeLessThan(1.6);
    // Requests go on until the next would pass the cap: refused before or while it is made.
    const answers = [first];
    for (let i = 0; i < 4; i++) answers.push(await synth(trial.live));
    const served = answers.filter((response) => response.statusCode === 200);
    expect(served.length).toBeGreaterThanOrEqual(2);
    const refused = answers.filter((response) => response.statusCode !== 200);
    expect(refused.length).toBeGreaterThan(0);
    for (const response of refused)
      expect(expectError(response, 429, 'tts.entitlement_exhausted').detail).toMatch(/evaluation allowance has [\d.]+ s left|evaluation #\d+ is used up/);
    expect(refused[0]!.headers['retry-after']).toBeUndefined();
    const billed = served.reduce((sum, response) => sum + seconds(response), 0);
    expect(billed).toBeLessThanOrEqual(3);
    const body = await report(trial.live);
    expect(body.entitlements).toEqual([
      expect.objectContaining({ kind: 'evaluation', direction: 'any', enforcement: 'hard', granted_seconds: 3, valid_until: null }),
    ]);
    expect(body.entitlements[0].used_seconds).toBeCloseTo(billed, 2);
    expect(body.entitlements[0].remaining_seconds).toBeCloseTo(3 - billed, 2);
    expect(body.window.breakdown[0]).toMatchObject({ direction: 'tts', mode: 'batch', requests: served.length });
    // The sandbox key of the same account draws nothing and is not refused.
    expect((await synth(trial.sandbox)).statusCode).toBe(200);
    expect((await report(trial.live)).entitlements[0].used_seconds).toBeCloseTo(billed, 2);
  });

  it('credit refuses new work once used up while the request in progress completes, until topped up', async () => {
    // 2 credits a second of synthesis: 3 credits are 1.5 s.
    const prepaid = await account('prepaid-co', { kind: 'credit', credits: 3, direction: 'tts' });
    const first = await synth(prepaid.live);
    expect(first.statusCode).toBe(200);
    // What is left is less than this request needs; it started with credit left, so it completes.
    const second = await synth(prepaid.live, 'Bitte warten Sie, Sie werden gleich verbunden.');
    expect(second.statusCode).toBe(200);
    expect(seconds(first) + seconds(second)).toBeGreaterThan(1.5);
    expectError(await synth(prepaid.live), 429, 'tts.entitlement_exhausted');
    const [credit] = (await report(prepaid.live)).entitlements;
    expect(credit).toMatchObject({ kind: 'credit', unit: 'credits', granted_credits: 3, remaining_credits: 0, used_percent: 100 });
    expect(credit.used_credits).toBeCloseTo(2 * (seconds(first) + seconds(second)), 2);
    await entitlements.topUp(credit.id, 100);
    expect((await synth(prepaid.live)).statusCode).toBe(200);
  });

  it('a commitment never refuses, also past what was agreed', async () => {
    const committed = await account('committed-co', { kind: 'committed', seconds: 1 });
    for (let i = 0; i < 3; i++) expect((await synth(committed.live)).statusCode).toBe(200);
    const [commitment] = (await report(committed.live)).entitlements;
    expect(commitment).toMatchObject({ kind: 'committed', enforcement: 'soft', granted_seconds: 1, remaining_seconds: 0 });
    expect(commitment.used_seconds).toBeGreaterThan(2);
  });

  it('leaves an account without entitlements uncapped', async () => {
    const free = await account('self-hosted');
    for (let i = 0; i < 2; i++) expect((await synth(free.live)).statusCode).toBe(200);
    expect((await report(free.live)).entitlements).toEqual([]);
  });
});
