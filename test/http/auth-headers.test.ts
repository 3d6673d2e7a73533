import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const ROUTES: Array<{ method: 'GET' | 'POST'; url: string; family: 'tts' | 'stt' }> = [
  { method: 'POST', url: '/v1/tts', family: 'tts' },
  { method: 'POST', url: '/v1/stt', family: 'stt' },
  { method: 'GET', url: '/v1/capabilities', family: 'tts' },
  { method: 'GET', url: '/v1/tts/voices', family: 'tts' },
  { method: 'GET', url: '/v1/openapi.json', family: 'tts' },
];

describe('authentication on every endpoint', () => {
  for (const route of ROUTES) {
    it(`${route.method} ${route.url} needs a key (${route.family}.unauthenticated)`, async () => {
      const response = await t.app.inject({ method: route.method, url: route.url });
      expect(response.statusCode).toBe(401);
      expect(response.json().error.code).toBe(`${route.family}.unauthenticated`);
      expect(response.headers['x-speech-request-id']).toMatch(/^req_/);
      expect(response.headers['x-speech-environment']).toBe('none');
    });
  }

  it('carries the environment of the key on every response', async () => {
    const sandbox = await t.app.inject({ url: '/v1/tts/voices', headers: { 'x-api-key': t.sandboxKey } });
    expect(sandbox.headers['x-speech-environment']).toBe('sandbox');
    const live = await t.app.inject({ url: '/v1/tts/voices', headers: { 'x-api-key': t.liveKey } });
    expect(live.headers['x-speech-environment']).toBe('live');
    expect(live.headers['x-speech-request-id']).not.toBe(sandbox.headers['x-speech-request-id']);
  });

  it('marks every response made with a superseded key, then refuses it with 403', async () => {
    const original = await t.services.keys.create('rotating', 'sandbox');
    const { old, created } = await t.services.keys.rotate(original.record.id);
    for (const route of ROUTES.filter((r) => r.method === 'GET')) {
      const response = await t.app.inject({ url: route.url, headers: { 'x-api-key': original.key } });
      expect(response.statusCode).toBe(200);
      expect(response.headers['x-speech-key-status']).toBe(`superseded; stops working ${old.expiresAt}`);
    }
    const failed = await t.app.inject({
      method: 'POST',
      url: '/v1/tts',
      headers: { 'x-api-key': original.key, 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(failed.statusCode).toBe(400);
    expect(failed.headers['x-speech-key-status']).toMatch(/^superseded; stops working /);
    const fresh = await t.app.inject({ url: '/v1/tts/voices', headers: { 'x-api-key': created.key } });
    expect(fresh.headers['x-speech-key-status']).toBeUndefined();
    await t.services.keys.endOverlap(original.record.id);
    const refused = await t.app.inject({ url: '/v1/tts/voices', headers: { 'x-api-key': original.key } });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.code).toBe('tts.forbidden');
  });

  it('refuses a revoked key with 403 in the route family', async () => {
    const { key, record } = await t.services.keys.create('to revoke', 'live');
    await t.services.keys.revoke(record.id);
    const response = await t.app.inject({ method: 'POST', url: '/v1/stt', headers: { 'x-api-key': key } });
    expect(response.statusCode).toBe(403);
    expect(response.json().error.code).toBe('stt.forbidden');
  });
});
