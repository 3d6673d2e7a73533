import { afterEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp | undefined;
afterEach(async () => {
  await t?.close();
  t = undefined;
});

describe('every failure keeps the error envelope', () => {
  it('answers unknown routes and methods with 404 in the envelope', async () => {
    t = await createTestApp();
    for (const [method, url, code] of [
      ['GET', '/', 'tts.not_found'],
      ['GET', '/v1/nothing', 'tts.not_found'],
      ['POST', '/v1/capabilities', 'tts.not_found'],
      ['GET', '/v1/stt', 'stt.not_found'],
      ['DELETE', '/v1/stt/anything', 'stt.not_found'],
    ] as const) {
      const response = await t.app.inject({ method, url, headers: { 'x-api-key': t.sandboxKey } });
      expect(response.statusCode, url).toBe(404);
      expect(response.headers['content-type']).toContain('application/json');
      const body = response.json();
      expect(body.error).toMatchObject({ code, request_id: response.headers['x-speech-request-id'] });
      expect(body.error.detail).toContain(`${method} ${url}`);
    }
  });

  it('turns an unexpected exception into 500 *.internal_error and logs it with the request id', async () => {
    t = await createTestApp({}, { ready: false });
    // A route that fails the way a bug would: the handler throws a plain Error.
    t.app.get('/v1/tts/broken', { config: { sprachrohr: { family: 'tts' } } }, async () => {
      throw new Error('database exploded at /srv/secret/path');
    });
    await t.app.ready();
    const response = await t.app.inject({ url: '/v1/tts/broken', headers: { 'x-api-key': t.sandboxKey } });
    expect(response.statusCode).toBe(500);
    const body = response.json();
    expect(body.error).toMatchObject({ code: 'tts.internal_error', detail: null });
    expect(response.body).not.toContain('exploded');
    expect(response.body).not.toContain('/srv/secret');
    const logged = t.logs.find((line) => line['code'] === 'tts.internal_error');
    expect(logged).toBeDefined();
    expect(logged!['requestId']).toBe(body.error.request_id);
    expect(JSON.stringify(logged!['err'])).toContain('database exploded');
  });

  it('never answers with HTML or a stack trace, whatever the body', async () => {
    t = await createTestApp();
    const bodies: Array<[string, string]> = [
      ['application/json', '<html>'],
      ['application/json', '{"text":"a","__proto__":{"x":1}}'],
      ['application/xml', '<speak/>'],
      ['multipart/form-data', 'garbage'],
    ];
    for (const [type, payload] of bodies) {
      const response = await t.app.inject({ method: 'POST', url: '/v1/tts', headers: { 'x-api-key': t.sandboxKey, 'content-type': type }, payload });
      expect(response.statusCode, `${type} ${payload}`).toBeGreaterThanOrEqual(400);
      expect(response.statusCode).toBeLessThan(500);
      expect(response.json().error.code).toMatch(/^tts\./);
      expect(response.body).not.toMatch(/at .*\.(js|ts):\d+/);
    }
  });
});

describe('limits of simultaneous requests and request rate', () => {
  it('refuses a burst over 25 requests with 429 tts.rate_limited and Retry-After', async () => {
    t = await createTestApp({}, { realRateLimit: true });
    const statuses: number[] = [];
    const remaining: string[] = [];
    let refused: Awaited<ReturnType<TestApp['app']['inject']>> | undefined;
    for (let i = 0; i < 30; i++) {
      const response = await t.app.inject({ url: '/v1/tts/voices', headers: { 'x-api-key': t.sandboxKey } });
      statuses.push(response.statusCode);
      remaining.push(String(response.headers['ratelimit']));
      expect(response.headers['ratelimit-policy']).toBe('"default";q=600;w=60');
      if (response.statusCode === 429) refused ??= response;
    }
    expect(statuses.filter((s) => s === 200).length).toBe(25);
    expect(refused!.json().error.code).toBe('tts.rate_limited');
    expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // IETF RateLimit: what may be sent at once now counts down the burst; t is when it is whole again.
    expect(remaining[0]).toMatch(/^"default";r=24;t=1$/);
    expect(refused!.headers['ratelimit']).toMatch(/^"default";r=0;t=[23]$/);
    // Another key has its own budget.
    expect((await t.app.inject({ url: '/v1/tts/voices', headers: { 'x-api-key': t.liveKey } })).statusCode).toBe(200);
    const capabilities = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.liveKey } })).json();
    expect(capabilities.capacity.rejected.rate_limited).toBe(5);
  });

  it('refuses requests over the per-key ceiling with 429 *.capacity key_capacity', async () => {
    t = await createTestApp({ SPRACHROHR_SANDBOX_KEY_MAX_IN_FLIGHT: '2' });
    const principal = { keyId: 'k', environment: 'sandbox' as const, accountId: 'acct_default', keyStatus: null };
    const releases = [await t.services.admission.admit(principal, 'stt'), await t.services.admission.admit(principal, 'stt')];
    const error: any = await t.services.admission.admit(principal, 'stt').catch((caught: unknown) => caught);
    expect(error).toMatchObject({ code: 'stt.capacity', httpStatus: 429, detail: 'key_capacity', retryAfterSeconds: 1 });
    expect(error.headers['X-Speech-Capacity-Reason']).toBe('key_capacity');
    releases.forEach((release) => release());
    releases[0]!();
    expect(await t.services.admission.inFlightOf('k')).toBe(0);
    await expect(t.services.admission.admit(principal, 'stt')).resolves.toBeTypeOf('function');
  });

  it('refuses over the service ceiling with service_capacity, over HTTP', async () => {
    t = await createTestApp({ SPRACHROHR_MAX_IN_FLIGHT: '1' });
    const other = { keyId: 'someone-else', environment: 'live' as const, accountId: 'acct_default', keyStatus: null };
    const release = await t.services.admission.admit(other, 'tts');
    const response = await t.app.inject({ url: '/v1/tts/voices', headers: { 'x-api-key': t.sandboxKey } });
    expect(response.statusCode).toBe(429);
    expect(response.json().error).toMatchObject({ code: 'tts.capacity', detail: 'service_capacity' });
    expect(response.headers['retry-after']).toBe('1');
    expect(response.headers['x-speech-capacity-reason']).toBe('service_capacity');
    release();
    expect((await t.app.inject({ url: '/v1/tts/voices', headers: { 'x-api-key': t.sandboxKey } })).statusCode).toBe(200);
  });

  it('refuses synthesis once the daily audio budget is spent', async () => {
    t = await createTestApp({ SPRACHROHR_SANDBOX_DAILY_AUDIO_SECONDS: '5' });
    const request = () =>
      t!.app.inject({
        method: 'POST',
        url: '/v1/tts',
        headers: { 'x-api-key': t!.sandboxKey, 'content-type': 'application/json' },
        payload: { text: 'a'.repeat(50) },
      });
    // 50 characters last 3.6 s: the first fits the 5 s budget, the second would overdraw it.
    expect((await request()).statusCode).toBe(200);
    const refused = await request();
    expect(refused.statusCode).toBe(429);
    expect(refused.json().error).toMatchObject({ code: 'tts.rate_limited', detail: expect.stringMatching(/daily audio budget of 5 s/) });
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(refused.headers['retry-after'])).toBeLessThanOrEqual(86400);
  });
});
