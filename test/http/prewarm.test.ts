import { Value } from '@sinclair/typebox/value';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { PrewarmResultSchema } from '../../src/api/schemas.js';
import { expectError } from '../helpers/error-envelope.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

function prewarm(body: unknown, key: string | null = t.liveKey, headers: Record<string, string> = {}) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/tts/prewarm',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}), ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('POST /v1/tts/prewarm with a live key', () => {
  it('answers every phrase skipped, with nothing synthesised or billed', async () => {
    const response = await prewarm({
      phrases: ['Grüezi mitenand.', 'Bitte warten Sie.', '<speak>Tel. <say-as interpret-as="telephone">044 668 18 00</say-as></speak>'],
    });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toContain('application/json');
    expect(response.headers['x-speech-environment']).toBe('live');
    const body = response.json();
    expect(body).toEqual({
      request_id: response.headers['x-speech-request-id'],
      warmed: 0,
      already_warm: 0,
      failed: 0,
      skipped: 3,
      billed_seconds: 0,
      free_seconds: 0,
      phrases: [
        { index: 0, status: 'skipped', audio_seconds: 0 },
        { index: 1, status: 'skipped', audio_seconds: 0 },
        { index: 2, status: 'skipped', audio_seconds: 0 },
      ],
    });
    expect(body.request_id).toMatch(/^req_/);
    expect(Value.Check(PrewarmResultSchema, body)).toBe(true);
    // Same key order as spec 2.10 lists the fields.
    expect(Object.keys(body)).toEqual(['request_id', 'warmed', 'already_warm', 'failed', 'skipped', 'billed_seconds', 'free_seconds', 'phrases']);
  });

  it('accepts every synthesis field it names, and the compact language form', async () => {
    const response = await prewarm({
      phrases: ['Grüezi'],
      model: 'swift',
      voice: 'anna',
      language: 'de-CH',
      dialect: 'zurich',
      speed: 1.5,
      style: 'freundlich',
    });
    expect(response.statusCode).toBe(200);
    expect((await prewarm({ phrases: ['Grüezi'], language: 'de-CH-bern' })).statusCode).toBe(200);
    expect((await prewarm({ phrases: ['Bonjour'], language: 'fr-CH', dialect: 'geneve' })).statusCode).toBe(200);
  });

  it('takes 1 and 200 phrases, and phrases of exactly 8000 characters', async () => {
    expect((await prewarm({ phrases: ['a'] })).json().skipped).toBe(1);
    const many = await prewarm({ phrases: Array.from({ length: 200 }, (_, i) => `Satz Nummer ${i}.`) });
    expect(many.statusCode).toBe(200);
    const body = many.json();
    expect(body.skipped).toBe(200);
    expect(body.phrases.map((p: { index: number }) => p.index)).toEqual(Array.from({ length: 200 }, (_, i) => i));
    expect(Value.Check(PrewarmResultSchema, body)).toBe(true);
    // 200 phrases at the text limit, in 4-byte characters, fit in the body limit.
    const longest = await prewarm({ phrases: Array.from({ length: 200 }, () => 'wort '.repeat(1600)) });
    expect(longest.statusCode).toBe(200);
    expect((await prewarm({ phrases: ['😀'.repeat(4000)] })).statusCode).toBe(200);
  });

  it('does not change the usage of the key, nor write to the ledger', async () => {
    const { key, record } = await t.services.keys.create('prewarm usage', 'live');
    const usageToday = async () => (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': key } })).json().usage_today;
    const before = await usageToday();
    const syntheses = t.services.stats.syntheses;
    const recorded = vi.spyOn(t.store.usage, 'record');
    try {
      for (let i = 0; i < 3; i++) expect((await prewarm({ phrases: ['Grüezi mitenand, willkommen.', 'a'.repeat(8000)] }, key)).statusCode).toBe(200);
      expect(recorded).not.toHaveBeenCalled();
    } finally {
      recorded.mockRestore();
    }
    expect(await usageToday()).toEqual(before);
    expect(before.tts_audio_seconds_used).toBe(0);
    expect(t.services.stats.syntheses).toBe(syntheses);
    const day = new Date().toISOString().slice(0, 10);
    expect(await t.store.usage.dayTotals(record.id, day, 'tts')).toEqual({ requests: 0, audioSeconds: 0 });
  });
});

describe('POST /v1/tts/prewarm validation', () => {
  const cases: Array<[string, unknown, number, string, RegExp]> = [
    ['no phrases', { phrases: [] }, 400, 'tts.invalid_request', /phrases must NOT have fewer than 1 items/],
    ['201 phrases', { phrases: Array.from({ length: 201 }, () => 'x') }, 400, 'tts.invalid_request', /phrases must NOT have more than 200 items/],
    ['a missing phrases field', { voice: 'anna' }, 400, 'tts.invalid_request', /phrases is required/],
    ['phrases not an array', { phrases: 'Hallo' }, 400, 'tts.invalid_request', /phrases must be array/],
    ['a phrase not a string', { phrases: ['Hallo', 5] }, 400, 'tts.invalid_request', /phrases\.1 must be string/],
    ['a phrase over 8000 characters', { phrases: ['ok', 'a'.repeat(8001)] }, 413, 'tts.text_too_long', /phrases\.1 must NOT have more than 8000 characters/],
    ['an empty phrase', { phrases: [''] }, 400, 'tts.text_required', /phrases\.0/],
    ['a whitespace phrase', { phrases: ['Hallo', '   '] }, 400, 'tts.text_required', /^phrases\[1\]: the text holds nothing to speak/],
    ['an unknown voice', { phrases: ['x'], voice: 'hal' }, 400, 'tts.unknown_voice', /voice must be one of anna/],
    ['an unknown language', { phrases: ['x'], language: 'xx-YY' }, 400, 'tts.unknown_language', /^phrases\[0\]: language "xx-YY" is not supported/],
    ['a dialect of another language', { phrases: ['x'], language: 'fr-CH', dialect: 'zurich' }, 400, 'tts.unknown_language', /available: standard, geneve/],
    ['conflicting dialects', { phrases: ['x'], language: 'de-CH-bern', dialect: 'zurich' }, 400, 'tts.invalid_request', /names dialect "bern"/],
    ['speed too low', { phrases: ['x'], speed: 0.4 }, 400, 'tts.invalid_speed', /speed must be >= 0.5/],
    ['speed too high', { phrases: ['x'], speed: 2.5 }, 400, 'tts.invalid_speed', /speed must be <= 2/],
    ['style too long', { phrases: ['x'], style: 's'.repeat(601) }, 400, 'tts.style_too_long', /600/],
    ['an unknown model', { phrases: ['x'], model: 'turbo' }, 400, 'tts.invalid_request', /model must be one of studio, swift/],
    ['an unknown field', { phrases: ['x'], colour: 'blue' }, 400, 'tts.invalid_request', /unknown field "colour"/],
    ['a synthesis-only field', { phrases: ['x'], format: 'wav' }, 400, 'tts.invalid_request', /unknown field "format"/],
    ['text instead of phrases', { text: 'x' }, 400, 'tts.invalid_request', /phrases is required|unknown field "text"/],
    ['a body that is an array', [1, 2], 400, 'tts.invalid_request', /JSON object/],
    [
      'unsupported markup',
      { phrases: ['Hallo', '<speak><voice name="x">Hallo</voice></speak>'] },
      400,
      'tts.invalid_ssml',
      /^phrases\[1\]: .*<voice> is not supported/,
    ],
    ['markup not well-formed', { phrases: ['<speak>Hallo <break></speak>'] }, 400, 'tts.invalid_ssml', /^phrases\[0\]: /],
    ['an audio element', { phrases: ['<speak><audio src="a.mp3"/></speak>'] }, 400, 'tts.invalid_ssml', /<audio> is refused/],
  ];
  for (const [name, body, status, code, detail] of cases) {
    it(`refuses ${name} with ${code}`, async () => {
      const error = expectError(await prewarm(body), status, code);
      expect(error.detail).toMatch(detail);
      expect(error.detail!.length).toBeLessThanOrEqual(400);
    });
  }

  it('gives a phrase the code POST /v1/tts gives the same text', async () => {
    const texts = ['<speak><phoneme ph="x">y</phoneme></speak>', '<speak>a<break time="11s"/></speak>', '   ', 'a'.repeat(8001)];
    for (const text of texts) {
      const synthesis = await t.app.inject({
        method: 'POST',
        url: '/v1/tts',
        headers: { 'content-type': 'application/json', 'x-api-key': t.sandboxKey },
        payload: { text },
      });
      const warm = await prewarm({ phrases: [text] });
      expect(warm.statusCode, text.slice(0, 40)).toBe(synthesis.statusCode);
      expect(warm.json().error.code, text.slice(0, 40)).toBe(synthesis.json().error.code);
    }
  });

  it('refuses malformed JSON and a wrong content type in the envelope', async () => {
    expect(expectError(await prewarm('{"phrases": '), 400, 'tts.invalid_request').detail).toMatch(/not valid JSON/);
    const wrongType = await t.app.inject({
      method: 'POST',
      url: '/v1/tts/prewarm',
      headers: { 'x-api-key': t.liveKey, 'content-type': 'text/plain' },
      payload: 'Hallo',
    });
    expect(expectError(wrongType, 400, 'tts.invalid_request').detail).toMatch(/application\/json/);
  });
});

describe('POST /v1/tts/prewarm keys', () => {
  it('refuses a sandbox key with 400 tts.invalid_request that says a live key is needed', async () => {
    const response = await prewarm({ phrases: ['Hallo'] }, t.sandboxKey);
    const error = expectError(response, 400, 'tts.invalid_request');
    expect(error.detail).toMatch(/needs a live key/);
    expect(error.detail).toMatch(/sv_test_/);
    expect(response.headers['x-speech-environment']).toBe('sandbox');
    // Whatever the body: no body would be accepted from a sandbox key.
    expect(expectError(await prewarm({ phrases: [] }, t.sandboxKey), 400, 'tts.invalid_request').detail).toMatch(/needs a live key/);
    expect(expectError(await prewarm({ phrases: ['x'] }, t.sandboxKey, { 'x-speech-sandbox-mode': 'synthetic' }), 400, 'tts.invalid_request').detail).toMatch(
      /needs a live key/,
    );
  });

  it('refuses no key and an unknown key with 401 tts.unauthenticated', async () => {
    const none = await prewarm({ phrases: ['Hallo'] }, null);
    expectError(none, 401, 'tts.unauthenticated');
    expect(none.headers['x-speech-environment']).toBe('none');
    expectError(await prewarm({ phrases: ['Hallo'] }, 'sv_not_a_key'), 401, 'tts.unauthenticated');
  });

  it('refuses the synthetic-mode header with a live key', async () => {
    const error = expectError(await prewarm({ phrases: ['Hallo'] }, t.liveKey, { 'x-speech-sandbox-mode': 'synthetic' }), 400, 'tts.invalid_request');
    expect(error.detail).toMatch(/only accepted with a sandbox key/);
  });

  it('counts against the key’s request rate: over the burst it answers 429 tts.rate_limited', async () => {
    const limited = await createTestApp({}, { realRateLimit: true });
    try {
      const statuses: number[] = [];
      let refused: Awaited<ReturnType<TestApp['app']['inject']>> | undefined;
      for (let i = 0; i < 30; i++) {
        const response = await limited.app.inject({
          method: 'POST',
          url: '/v1/tts/prewarm',
          headers: { 'content-type': 'application/json', 'x-api-key': limited.liveKey },
          payload: { phrases: ['Hallo'] },
        });
        statuses.push(response.statusCode);
        if (response.statusCode === 429) refused ??= response;
      }
      expect(statuses.filter((status) => status === 200).length).toBe(25);
      expect(refused!.json().error.code).toBe('tts.rate_limited');
      expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    } finally {
      await limited.close();
    }
  });
});

describe('POST /v1/tts/prewarm in discovery', () => {
  it('is in capabilities beside the synthesis modes, with its phrase limit', async () => {
    const live = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.liveKey } })).json();
    expect(live.text_to_speech.modes.map((m: { id: string }) => m.id)).toEqual(['batch', 'realtime']);
    expect(live.text_to_speech.prewarm).toMatchObject({ available: true, max_phrases: 200 });
    expect(live.text_to_speech.prewarm.endpoint).toMatch(/^https?:\/\/.+\/v1\/tts\/prewarm$/);
    expect(live.text_to_speech.prewarm.description).toMatch(/skipped/);
    expect(live.limits.tts_prewarm_max_phrases).toBe(200);
    const sandbox = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.sandboxKey } })).json();
    expect(sandbox.text_to_speech.prewarm.available).toBe(false);
  });

  it('is documented in OpenAPI with the shared synthesis field schemas and says nothing is billed', async () => {
    const document = (await t.app.inject({ url: '/v1/openapi.json', headers: { 'x-api-key': t.liveKey } })).json();
    const operation = document.paths['/v1/tts/prewarm'].post;
    expect(operation.description).toMatch(/no synthesis cache/);
    expect(operation.description).toMatch(/skipped/);
    expect(operation.description).toMatch(/nothing is billed/);
    const request = operation.requestBody.content['application/json'].schema;
    const synthesis = document.paths['/v1/tts'].post.requestBody.content['application/json'].schema;
    expect(request.required).toEqual(['phrases']);
    expect(request.additionalProperties).toBe(false);
    expect(request.properties.phrases).toMatchObject({ type: 'array', minItems: 1, maxItems: 200 });
    expect(request.properties.phrases.items).toEqual(synthesis.properties.text);
    for (const field of ['model', 'voice', 'language', 'dialect', 'speed', 'style', 'dialect_text'])
      expect(request.properties[field], field).toEqual(synthesis.properties[field]);
    expect(Object.keys(request.properties).sort()).toEqual(['dialect', 'dialect_text', 'language', 'model', 'phrases', 'speed', 'style', 'voice']);
    const result = operation.responses['200'].content['application/json'].schema;
    expect(Object.keys(result.properties)).toEqual(['request_id', 'warmed', 'already_warm', 'failed', 'skipped', 'billed_seconds', 'free_seconds', 'phrases']);
    expect(result.properties.phrases.items.properties.status.anyOf.flatMap((v: { enum?: string[]; const?: string }) => v.enum ?? [v.const])).toEqual([
      'warmed',
      'already_warm',
      'failed',
      'skipped',
    ]);
  });
});
