/**
 * The operator's endpoints on the real app: liveness, readiness (starting, ready, draining, a
 * store that fails), the Prometheus metrics (a valid exposition, its names and types, series
 * that move with a request, the bearer token), and the drain through `POST /v1/admin/drain`:
 * API requests and realtime handshakes refused with the envelope while the operations
 * endpoints still answer.
 */
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectError } from '../helpers/error-envelope.js';
import { parsePrometheusText } from '../helpers/prometheus-text.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { connect, TestSocket } from '../helpers/ws-client.js';

const METRICS_TOKEN = 'metrics-token-0123456789';
const ADMIN_TOKEN = 'admin-token-0123456789ab';

describe('liveness, readiness and metrics', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp({ SPRACHROHR_METRICS_TOKEN: METRICS_TOKEN });
  });
  afterAll(async () => t?.close());

  const scrape = async () => {
    const response = await t.app.inject({ url: '/metrics', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
    return parsePrometheusText(response.body);
  };

  it('answers /healthz without a key', async () => {
    const response = await t.app.inject({ url: '/healthz' });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ status: 'ok' });
  });

  it('is not ready until every part has started, then ready', async () => {
    const starting = await t.app.inject({ url: '/readyz' });
    expect(starting.statusCode).toBe(503);
    expect(starting.json().reasons).toEqual([expect.stringMatching(/^starting/)]);
    t.services.readiness.markStarted();
    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready', reasons: [] });
  });

  it('serves a valid exposition whose every name is prefixed and typed', async () => {
    const metrics = await scrape();
    expect(metrics.samples.length).toBeGreaterThan(0);
    for (const name of metrics.types.keys()) expect(name).toMatch(/^sprachrohr_/);
    const expected: Record<string, string> = {
      sprachrohr_http_requests_total: 'counter',
      sprachrohr_http_too_many_requests_total: 'counter',
      sprachrohr_http_requests_in_flight: 'gauge',
      sprachrohr_calls_active: 'gauge',
      sprachrohr_calls_total: 'counter',
      sprachrohr_call_turns_total: 'counter',
      sprachrohr_call_turn_latency_seconds: 'histogram',
      sprachrohr_tts_first_audio_seconds: 'histogram',
      sprachrohr_stt_recognition_latency_seconds: 'histogram',
      sprachrohr_engine_busy_seconds_total: 'counter',
      sprachrohr_engine_queue_depth: 'gauge',
      sprachrohr_engine_workers: 'gauge',
      sprachrohr_engine_busy_workers: 'gauge',
      sprachrohr_event_loop_delay_seconds: 'gauge',
      sprachrohr_media_pacer_lateness_seconds: 'gauge',
      sprachrohr_realtime_sessions_active: 'gauge',
      sprachrohr_jobs_total: 'counter',
      sprachrohr_jobs_running: 'gauge',
      sprachrohr_draining: 'gauge',
    };
    for (const [name, type] of Object.entries(expected)) expect(metrics.types.get(name), name).toBe(type);
    expect(metrics.value('sprachrohr_draining')).toBe(0);
    expect(metrics.value('sprachrohr_event_loop_delay_seconds', { stat: 'p99' })).toBeGreaterThanOrEqual(0);
    // The histogram's count matches its +Inf bucket, as a scraper expects.
    expect(metrics.value('sprachrohr_call_turn_latency_seconds_bucket', { le: '+Inf' })).toBe(metrics.value('sprachrohr_call_turn_latency_seconds_count'));
  });

  it('counts a request by its route pattern and status, and a 429 by its reason', async () => {
    const before = await scrape();
    const route = { method: 'GET', route: '/v1/recordings/:id', status: '404' };
    const answered = await t.app.inject({ url: '/v1/recordings/rec_nothing', headers: { 'x-api-key': t.liveKey } });
    expect(answered.statusCode).toBe(404);
    const unknown = await t.app.inject({ url: '/v1/no/such/thing' });
    expect(unknown.statusCode).toBe(404);
    // A sandbox key holds at most 8 requests in flight: with its 8 slots taken, a request is refused (key_capacity).
    const { key, record } = await t.services.keys.create('metrics busy', 'sandbox');
    const busy = { keyId: record.id, accountId: record.accountId, environment: 'sandbox' as const, keyStatus: null };
    const releases = await Promise.all(Array.from({ length: 8 }, () => t.services.admission.takeSlot(busy, 'tts')));
    const refused = await t.app.inject({
      method: 'POST',
      url: '/v1/tts',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: { text: 'Hallo' },
    });
    for (const release of releases) release();
    expectError(refused, 429, 'tts.capacity');
    const after = await scrape();
    expect((after.value('sprachrohr_http_requests_total', route) ?? 0) - (before.value('sprachrohr_http_requests_total', route) ?? 0)).toBe(1);
    const unmatched = { method: 'GET', route: 'unmatched', status: '404' };
    expect((after.value('sprachrohr_http_requests_total', unmatched) ?? 0) - (before.value('sprachrohr_http_requests_total', unmatched) ?? 0)).toBe(1);
    const capacity = { reason: 'key_capacity' };
    expect(
      (after.value('sprachrohr_http_too_many_requests_total', capacity) ?? 0) - (before.value('sprachrohr_http_too_many_requests_total', capacity) ?? 0),
    ).toBe(1);
  });

  it('counts a job as it is queued', async () => {
    const queued = { state: 'queued' };
    const before = (await scrape()).value('sprachrohr_jobs_total', queued) ?? 0;
    const submitted = await t.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
      payload: { kind: 'tts', text: 'Hallo' },
    });
    expect(submitted.statusCode).toBe(202);
    expect((await scrape()).value('sprachrohr_jobs_total', queued)).toBe(before + 1);
  });

  it('refuses the metrics without the token, or with a wrong one, with the envelope', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token-0123456789', `Basic ${METRICS_TOKEN}`, `Bearer ${METRICS_TOKEN}x`, 'Bearer']) {
      const response = await t.app.inject({ url: '/metrics', headers: authorization === undefined ? {} : { authorization } });
      const error = expectError(response, 401, 'tts.unauthenticated');
      expect(error.detail).toContain('SPRACHROHR_METRICS_TOKEN');
      expect(response.headers['www-authenticate']).toMatch(/^Bearer/);
      expect(response.body).not.toContain('sprachrohr_');
    }
  });

  it('keeps the drain endpoint off without SPRACHROHR_ADMIN_TOKEN', async () => {
    const response = await t.app.inject({ method: 'POST', url: '/v1/admin/drain', headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(expectError(response, 403, 'tts.forbidden').detail).toContain('SPRACHROHR_ADMIN_TOKEN');
    expect(t.services.drain.active).toBe(false);
  });
});

describe('a store that does not answer', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await createTestApp();
    t.services.readiness.markStarted();
  });
  afterAll(async () => t?.close());

  it('makes the instance not ready, without its error in the answer', async () => {
    const original = t.store.keys.findById.bind(t.store.keys);
    t.store.keys.findById = async () => {
      throw new Error('connect ECONNREFUSED 10.1.2.3:5432');
    };
    try {
      const response = await t.app.inject({ url: '/readyz' });
      expect(response.statusCode).toBe(503);
      expect(response.json().reasons).toEqual([expect.stringMatching(/^store unreachable/)]);
      expect(response.body).not.toContain('10.1.2.3');
      expect(t.logs.some((line) => String(line['problem']).includes('10.1.2.3'))).toBe(true);
    } finally {
      t.store.keys.findById = original;
    }
    expect((await t.app.inject({ url: '/readyz' })).statusCode).toBe(200);
  });
});

describe('the drain through POST /v1/admin/drain', () => {
  let t: TestApp;
  let base: string;
  beforeAll(async () => {
    t = await createTestApp({ SPRACHROHR_ADMIN_TOKEN: ADMIN_TOKEN, SPRACHROHR_DRAIN_TIMEOUT_MS: '60000' });
    t.services.readiness.markStarted();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1`;
  });
  afterAll(async () => t?.close());

  it('refuses a wrong token and drains nothing', async () => {
    for (const authorization of [undefined, 'Bearer admin-token-wrong-000000', `Bearer ${METRICS_TOKEN}`]) {
      const response = await t.app.inject({ method: 'POST', url: '/v1/admin/drain', headers: authorization === undefined ? {} : { authorization } });
      expectError(response, 401, 'tts.unauthenticated');
    }
    expect(t.services.drain.active).toBe(false);
    expect((await t.app.inject({ url: '/readyz' })).statusCode).toBe(200);
  });

  it('lets a session opened before the drain go on, and refuses new work with 503 by family', async () => {
    const open = await connect(`${base}/tts/stream`, { headers: { 'x-api-key': t.sandboxKey }, protocols: ['speech.v1'] });
    expect(open).toBeInstanceOf(TestSocket);
    const session = open as TestSocket;
    const started = await t.app.inject({ method: 'POST', url: '/v1/admin/drain', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(started.statusCode).toBe(202);
    expect(started.json()).toMatchObject({ status: 'draining', reason: 'operator' });
    expect(Date.parse(started.json().deadline) - Date.parse(started.json().since)).toBe(60_000);

    const tts = await t.app.inject({
      method: 'POST',
      url: '/v1/tts',
      headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
      payload: { text: 'Hallo' },
    });
    expect(expectError(tts, 503, 'tts.unavailable').detail).toMatch(/shutting down/);
    expect(tts.headers['retry-after']).toBe('5');
    const stt = await t.app.inject({ method: 'POST', url: '/v1/stt', headers: { 'x-api-key': t.sandboxKey } });
    expectError(stt, 503, 'stt.unavailable');
    expect(stt.headers['retry-after']).toBe('5');
    const call = await t.app.inject({ method: 'POST', url: '/v1/calls', headers: { 'x-api-key': t.liveKey, 'content-type': 'application/json' }, payload: {} });
    expectError(call, 503, 'stt.unavailable');
    // Refused before authentication: a bad key learns nothing else.
    expectError(await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': 'sv_test_nonsense' } }), 503, 'tts.unavailable');

    const refused = await connect(`${base}/stt/stream`, { headers: { 'x-api-key': t.sandboxKey }, protocols: ['speech.v1'] });
    expect(refused).not.toBeInstanceOf(TestSocket);
    const upgrade = refused as { status: number; headers: Record<string, unknown>; body: string };
    expect(upgrade.status).toBe(503);
    expect(upgrade.headers['retry-after']).toBe('5');
    expect(JSON.parse(upgrade.body).error.code).toBe('stt.unavailable');

    // The session opened before goes on to its end.
    session.send({ type: 'session.start', model: 'swift', voice: 'anna', language: 'de-CH', format: 'pcm16', sample_rate_hz: 16000 });
    session.send({ type: 'text.append', text: 'Grüezi mitenand.' });
    session.send({ type: 'session.end' });
    await session.next('session.complete');

    const ready = await t.app.inject({ url: '/readyz' });
    expect(ready.statusCode).toBe(503);
    expect(ready.json().reasons).toEqual([expect.stringMatching(/^draining since .* \(operator\)/)]);
    expect((await t.app.inject({ url: '/healthz' })).statusCode).toBe(200);
    const metrics = await t.app.inject({ url: '/metrics' });
    expect(metrics.statusCode).toBe(200);
    const exposition = parsePrometheusText(metrics.body);
    expect(exposition.value('sprachrohr_draining')).toBe(1);
    // The session's first audio was timed.
    expect(exposition.value('sprachrohr_tts_first_audio_seconds_count', { transport: 'realtime' })).toBe(1);
    // A second request changes nothing: the drain began once.
    const again = await t.app.inject({ method: 'POST', url: '/v1/admin/drain', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(again.json().since).toBe(started.json().since);
  });
});
