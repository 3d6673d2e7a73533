/**
 * `GET /v1/usage` (spec 4.12, 2.9): the account's ledger in a window, per direction and mode,
 * sandbox apart, by day on request; real sandbox requests are metered once each and failed ones
 * not at all; every bad window is a 400 with its reason.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UsageReportSchema } from '../../src/api/usage-schemas.js';
import { AccountService } from '../../src/auth/account-service.js';
import { DEFAULT_ACCOUNT_ID, type LedgerEntry } from '../../src/store/store.js';
import { expectError } from '../helpers/error-envelope.js';
import { expectSchema } from '../helpers/schema-check.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let otherAccountKey: string;
beforeAll(async () => {
  t = await createTestApp();
  const other = await new AccountService(t.store.accounts).create('other-co');
  otherAccountKey = (await t.services.keys.create('other', 'live', other.id)).key;
});
afterAll(async () => t.close());

function usage(query = '', key: string | null = t.liveKey) {
  return t.app.inject({ method: 'GET', url: `/v1/usage${query}`, headers: key ? { 'x-api-key': key } : {} });
}

let entries = 0;
const RATES = { tts: 1, stt: 1 };
/** A live entry of the default account, as a finished request writes it. */
async function ledger(at: string, direction: LedgerEntry['direction'], mode: LedgerEntry['mode'], audioSeconds: number, accountId = DEFAULT_ACCOUNT_ID) {
  const keyId = (await t.store.keys.list()).find((key) => key.environment === 'live')!.id;
  return t.store.usage.record(
    { requestId: `req_test_${entries++}`, accountId, keyId, environment: 'live', direction, mode, recordedAt: at, audioSeconds },
    RATES,
  );
}

/** A breakdown line of a report's window or of one of its days. */
const line = (totals: { breakdown: Array<{ direction: string; mode: string }> }, direction: string, mode: string) =>
  totals.breakdown.find((entry) => entry.direction === direction && entry.mode === mode)!;

describe('GET /v1/usage', () => {
  it('reports the live ledger of the window per direction and mode, each line rounded up to the second', async () => {
    await ledger('2026-10-31T23:59:59.999Z', 'tts', 'batch', 100); // before the window
    await ledger('2026-11-01T00:00:00.000Z', 'tts', 'batch', 1.2);
    await ledger('2026-11-02T10:00:00.000Z', 'tts', 'batch', 0.3);
    await ledger('2026-11-02T11:00:00.000Z', 'stt', 'realtime', 61.25);
    await ledger('2026-11-03T00:00:00.000Z', 'tts', 'realtime', 7); // after the window
    await ledger('2026-11-02T12:00:00.000Z', 'tts', 'batch', 50, (await t.store.accounts.findByName('other-co'))!.id);

    const response = await usage('?from=2026-11-01&to=2026-11-02');
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expectSchema(UsageReportSchema, body);
    expect(body).toMatchObject({
      request_id: response.headers['x-speech-request-id'],
      unit: 'audio_seconds',
      granularity: 'second',
      minimum_billable_unit: null,
      entitlements: [],
    });
    expect(body.window.from).toBe('2026-11-01T00:00:00.000Z');
    expect(body.window.to).toBe('2026-11-03T00:00:00.000Z'); // a date as `to` is the whole day
    expect(body.window.breakdown).toEqual([
      { direction: 'tts', mode: 'batch', requests: 2, billable_seconds: 2, audio_seconds: 1.5, cached_seconds: 0 },
      { direction: 'tts', mode: 'realtime', requests: 0, billable_seconds: 0, audio_seconds: 0, cached_seconds: 0 },
      { direction: 'stt', mode: 'batch', requests: 0, billable_seconds: 0, audio_seconds: 0, cached_seconds: 0 },
      { direction: 'stt', mode: 'realtime', requests: 1, billable_seconds: 62, audio_seconds: 61.25, cached_seconds: 0 },
    ]);
    expect(body.window.total_billable_seconds).toBe(64);
    expect(body.window.days).toBeUndefined();

    // Another account's key sees its own entries only.
    const other = (await usage('?from=2026-11-01&to=2026-11-02', otherAccountKey)).json();
    expect(line(other.window, 'tts', 'batch')).toMatchObject({ requests: 1, audio_seconds: 50 });
    expect(other.window.total_billable_seconds).toBe(50);
  });

  it('adds a breakdown for every UTC day of the window with granularity=day', async () => {
    const body = (await usage('?from=2026-11-01T00:00:00Z&to=2026-11-03T00:00:00%2B01:00&granularity=day')).json();
    expectSchema(UsageReportSchema, body);
    expect(body.window.to).toBe('2026-11-02T23:00:00.000Z');
    expect(body.window.days.map((day: { date: string }) => day.date)).toEqual(['2026-11-01', '2026-11-02']);
    expect(body.window.days[0].total_billable_seconds).toBe(2);
    expect(line(body.window.days[1], 'tts', 'batch')).toMatchObject({ requests: 1, audio_seconds: 0.3, billable_seconds: 1 });
    expect(line(body.window.days[1], 'stt', 'realtime')).toMatchObject({ requests: 1, billable_seconds: 62 });
  });

  it('meters each finished sandbox request once, apart and unbilled, and failed requests not at all', async () => {
    const earlier = (await usage('', t.sandboxKey)).json().window;
    const before = earlier.sandbox;
    let seconds = 0;
    for (const text of ['Grüezi mitenand.', 'Bitte warten Sie einen Moment.']) {
      const response = await t.app.inject({
        method: 'POST',
        url: '/v1/tts',
        headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
        payload: JSON.stringify({ text, format: 'wav' }),
      });
      expect(response.statusCode).toBe(200);
      seconds += Number(response.headers['x-speech-audio-duration']);
    }
    const refused = await t.app.inject({
      method: 'POST',
      url: '/v1/tts',
      headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
      payload: JSON.stringify({ text: 'Hallo', voice: 'nobody' }),
    });
    expect(refused.statusCode).toBe(400);
    const body = (await usage('', t.sandboxKey)).json();
    expect(body.window.sandbox.requests).toBe(before.requests + 2);
    expect(body.window.sandbox.audio_seconds).toBeCloseTo(before.audio_seconds + seconds, 3);
    expect(body.window.sandbox.billed).toBe(false);
    // The default window: from the start of this month to now.
    const now = new Date();
    expect(body.window.from).toBe(new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)).toISOString());
    expect(Date.parse(body.window.to)).toBeGreaterThan(now.getTime() - 60_000);
    // Nothing of it in the live lines.
    expect(body.window.breakdown).toEqual(earlier.breakdown);
  });

  it('writes one ledger entry per request id, however often it is recorded', async () => {
    const entry: LedgerEntry = {
      requestId: 'req_once',
      accountId: DEFAULT_ACCOUNT_ID,
      keyId: 'key_x',
      environment: 'live',
      direction: 'tts',
      mode: 'batch',
      recordedAt: '2026-09-09T09:09:09.000Z',
      audioSeconds: 4,
    };
    expect((await t.store.usage.record(entry, RATES)).recorded).toBe(true);
    expect((await t.store.usage.record({ ...entry, audioSeconds: 99 }, RATES)).recorded).toBe(false);
    expect(await t.store.usage.dayTotals('key_x', '2026-09-09', 'tts')).toEqual({ requests: 1, audioSeconds: 4 });
    expect((await t.store.usage.findByRequestId('req_once'))?.audioSeconds).toBe(4);
    const body = (await usage('?from=2026-09-09&to=2026-09-09')).json();
    expect(line(body.window, 'tts', 'batch')).toMatchObject({ requests: 1, audio_seconds: 4 });
  });

  it('refuses a window it cannot read with 400 and the reason', async () => {
    const cases: Array<[string, RegExp]> = [
      ['?from=2026-02-30', /not a date of the calendar/],
      ['?from=yesterday', /must be a date/],
      ['?to=2026-11-01T10:00', /must be a date/], // a date-time needs its offset
      ['?from=2026-11-05&to=2026-11-01', /must come before/],
      ['?from=2024-01-01&to=2026-01-01', /at most 367 days/],
    ];
    for (const [query, reason] of cases) {
      const error = expectError(await usage(query), 400, 'tts.invalid_request');
      expect(error.detail, query).toMatch(reason);
    }
    expectError(await usage('?granularity=hour'), 400, 'tts.invalid_request');
    expectError(await usage('?colour=blue'), 400, 'tts.invalid_request');
    expectError(await usage('', null), 401, 'tts.unauthenticated');
  });
});
