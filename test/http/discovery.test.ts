import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptedLanguageCodes } from '../../src/catalog/resolve-language.js';
import { expectError } from '../helpers/error-envelope.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
let capabilities: any;
beforeAll(async () => {
  t = await createTestApp();
  capabilities = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.sandboxKey } })).json();
});
afterAll(async () => t.close());

function synth(body: Record<string, unknown>) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/tts',
    headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
    payload: { text: 'Hallo', format: 'pcm16', ...body },
  });
}

describe('GET /v1/capabilities', () => {
  it('has every section of spec 2.7', () => {
    for (const section of ['api', 'authentication', 'text_to_speech', 'speech_to_text', 'limits', 'capacity', 'your_plan', 'cache', 'usage_today', 'errors']) {
      expect(capabilities, section).toHaveProperty(section);
    }
    expect(capabilities.api.version).toBe('1.5.0');
    expect(capabilities.authentication).toMatchObject({ header: 'X-API-Key' });
    expect(capabilities.authentication.websocket.map((form: { form: string }) => form.form)).toEqual(['header', 'subprotocol', 'query']);
    expect(capabilities.cache).toMatchObject({ enabled: false, hits: 0, hit_rate: null, seconds_served_from_cache: 0 });
    expect(capabilities.limits).toMatchObject({
      metering_unit: 'audio_seconds',
      minimum_billable_unit: null,
      tts_max_text_characters: 8000,
      stt_max_upload_bytes: 26214400,
      requests_per_minute: 600,
    });
    expect(capabilities.sandbox.characters_per_second).toBe(14);
    expect(capabilities.text_to_speech.realtime_protocol).toMatchObject({ available: true, subprotocol: 'speech.v1' });
    expect(capabilities.text_to_speech.realtime_protocol.endpoint).toMatch(/^wss?:\/\/.+\/v1\/tts\/stream$/);
    expect(capabilities.text_to_speech.modes.map((m: { id: string }) => m.id)).toEqual(['batch', 'realtime']);
    expect(capabilities.speech_to_text.modes.map((m: { id: string; endpoint: string }) => m.endpoint)[1]).toMatch(/^wss?:\/\/.+\/v1\/stt\/stream$/);
    expect(capabilities.limits).toMatchObject({ realtime_sessions_per_key: 10, realtime_session_opens_per_minute: 600 });
    expect(capabilities.your_plan).toMatchObject({ concurrent_requests: 8, source: 'service_default' });
    expect(capabilities.capacity.limits).toMatchObject({ requests_per_minute: 600, burst_per_second: 25 });
    expect(typeof capabilities.capacity.cores).toBe('number');
  });

  it('lists every error code with its status, and the spec codes are all there', () => {
    const codes = new Map<string, number>(capabilities.errors.map((e: { code: string; http_status: number }) => [e.code, e.http_status]));
    const spec =
      'stt.invalid_audio, stt.unsupported_format, stt.audio_too_large, stt.rate_limited, stt.unauthenticated, stt.forbidden, stt.upstream_unavailable, stt.timeout, stt.internal_error, stt.invalid_request, tts.invalid_request, tts.text_required, tts.text_too_long, tts.unknown_voice, tts.unknown_language, tts.unsupported_format, tts.invalid_speed, tts.style_too_long, tts.encode_failed, tts.invalid_ssml, tts.capacity, stt.capacity, tts.plan_limit_reached, stt.plan_limit_reached, tts.entitlement_exhausted, stt.entitlement_exhausted, tts.unauthenticated, tts.forbidden, tts.rate_limited, tts.unavailable, tts.timeout, tts.internal_error';
    for (const code of spec.split(', ')) expect(codes.has(code), code).toBe(true);
    expect(codes.get('tts.text_too_long')).toBe(413);
    expect(codes.get('stt.unsupported_format')).toBe(415);
    expect(codes.get('tts.unavailable')).toBe(503);
    expect(codes.get('stt.invalid_audio')).toBe(400);
    expect(codes.get('tts.style_too_long')).toBe(400);
    expect(codes.get('stt.upstream_unavailable')).toBe(503);
    expect(codes.get('tts.rate_limited')).toBe(429);
  });

  it('reports today’s usage of the calling key', async () => {
    const { key } = await t.services.keys.create('usage', 'sandbox');
    const before = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': key } })).json();
    expect(before.usage_today).toEqual({ tts_audio_seconds_used: 0, tts_audio_seconds_limit: 7200, tts_audio_seconds_available: 7200 });
    const synthesis = await t.app.inject({
      method: 'POST',
      url: '/v1/tts',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload: { text: 'a'.repeat(139) },
    });
    expect(Number(synthesis.headers['x-speech-audio-duration'])).toBeCloseTo(10, 1);
    const after = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': key } })).json();
    expect(after.usage_today).toEqual({ tts_audio_seconds_used: 10, tts_audio_seconds_limit: 7200, tts_audio_seconds_available: 7190 });
  });
});

describe('GET /v1/tts/voices and validation read the same catalog', () => {
  it('is the subset of capabilities the spec names', async () => {
    const voices = (await t.app.inject({ url: '/v1/tts/voices', headers: { 'x-api-key': t.sandboxKey } })).json();
    expect(voices.default_voice).toBe('anna');
    expect(voices.voices).toEqual(capabilities.text_to_speech.voices);
    expect(voices.languages).toEqual(capabilities.text_to_speech.languages);
    expect(voices.formats).toEqual(capabilities.text_to_speech.formats);
    const anna = voices.voices.find((v: { id: string }) => v.id === 'anna');
    expect(anna.gender).toBe('female');
    for (const voice of voices.voices) {
      for (const field of ['id', 'name', 'gender', 'timbre', 'pace', 'description', 'best_for', 'languages']) expect(voice, field).toHaveProperty(field);
    }
  });

  it('accepts every listed voice and refuses any other', async () => {
    for (const voice of capabilities.text_to_speech.voices) expect((await synth({ voice: voice.id })).statusCode, voice.id).toBe(200);
    expect((await synth({ voice: 'nobody' })).json().error.code).toBe('tts.unknown_voice');
  });

  it('accepts every listed language and dialect, in both forms', async () => {
    for (const language of capabilities.text_to_speech.languages) {
      expect(['verified', 'supported']).toContain(language.status);
      for (const dialect of language.dialects) {
        const separate = await synth({ language: language.code, dialect: dialect.id, output: 'json' });
        expect(separate.statusCode, `${language.code}/${dialect.id}`).toBe(200);
        expect(separate.json()).toMatchObject({ language: language.code, dialect: dialect.id });
      }
    }
    const listed = capabilities.text_to_speech.languages.map((l: { code: string }) => l.code);
    for (const code of acceptedLanguageCodes(capabilities.text_to_speech.languages)) {
      expect((await synth({ language: code })).statusCode, code).toBe(200);
    }
    expect(listed).toEqual(expect.arrayContaining(['de-CH', 'fr-CH', 'it-CH', 'fr-CA', 'en-GB', 'en-IN', 'de-AT', 'de', 'it', 'en']));
    const deCh = capabilities.text_to_speech.languages.find((l: { code: string }) => l.code === 'de-CH');
    expect(deCh.dialects.map((d: { id: string }) => d.id)).toEqual(
      expect.arrayContaining(['standard', 'zurich', 'bern', 'basel', 'luzern', 'hochdeutsch', 'stgallen', 'aargau', 'graubuenden', 'wallis']),
    );
  });

  it('accepts exactly the listed rates of every format', async () => {
    const probe = [8000, 11025, 12000, 16000, 22050, 24000, 32000, 44100, 48000, 96000];
    for (const format of capabilities.text_to_speech.formats) {
      expect(format.sample_rates_hz).toContain(format.default_sample_rate_hz);
      for (const rate of probe) {
        const status = (await synth({ format: format.id, sample_rate_hz: rate })).statusCode;
        expect(status, `${format.id}@${rate}`).toBe(format.sample_rates_hz.includes(rate) ? 200 : 400);
      }
    }
    const parameters = capabilities.text_to_speech.parameters;
    expect(parameters.speed.range).toEqual({ min: 0.5, max: 2 });
    expect(parameters.sample_rate_hz.per_format.mulaw.enum).toEqual([8000]);
  });
});

describe('GET /v1/openapi.json', () => {
  it('is OpenAPI 3.1 and documents every endpoint', async () => {
    const document = (await t.app.inject({ url: '/v1/openapi.json', headers: { 'x-api-key': t.sandboxKey } })).json();
    expect(document.openapi).toBe('3.1.0');
    const routes = t.app.printRoutes({ commonPrefix: false });
    const served = [
      '/v1/tts',
      '/v1/tts/prewarm',
      '/v1/stt',
      '/v1/capabilities',
      '/v1/tts/voices',
      '/v1/openapi.json',
      '/v1/asyncapi.json',
      '/v1/bots/asyncapi.json',
      '/v1/usage',
      '/v1/jobs',
      '/v1/jobs/{id}',
      '/v1/jobs/{id}/audio',
      '/v1/trunks',
      '/v1/calls',
      '/v1/calls/{id}',
    ];
    for (const path of served) {
      expect(routes).toContain(path.split('/').pop()!.replace('{id}', ':id'));
      expect(document.paths, path).toHaveProperty([path]);
    }
    // The recordings endpoints are checked in recordings.test.ts.
    const recordings = ['/v1/recordings', '/v1/recordings/{id}', '/v1/recordings/{id}/audio'];
    expect(Object.keys(document.paths).sort()).toEqual([...served, ...recordings].sort());
    const tts = document.paths['/v1/tts'].post;
    expect(tts.requestBody.content['application/json'].schema.properties.voice.enum).toEqual(
      capabilities.text_to_speech.voices.map((v: { id: string }) => v.id),
    );
    expect(tts.requestBody.content['application/json'].schema.properties.text.maxLength).toBe(8000);
    expect(document.paths['/v1/stt'].post.requestBody.content).toHaveProperty(['multipart/form-data']);
    expect(tts.responses['400'] ?? tts.responses['4XX']).toBeDefined();
  });
});

describe('GET /v1/asyncapi.json', () => {
  it('documents both realtime protocols, frame by frame, as capabilities list them', async () => {
    const t = await createTestApp();
    try {
      const headers = { 'x-api-key': t.sandboxKey };
      const doc = (await t.app.inject({ url: '/v1/asyncapi.json', headers })).json();
      const capabilities = (await t.app.inject({ url: '/v1/capabilities', headers })).json();
      expect(doc.asyncapi).toBe('3.0.0');
      expect(doc.channels.tts_stream.address).toBe('/v1/tts/stream');
      expect(doc.channels.stt_stream.address).toBe('/v1/stt/stream');
      const names = (family: string) =>
        Object.values(doc.components.messages as Record<string, { name: string }>)
          .filter((_, index) => Object.keys(doc.components.messages)[index]!.startsWith(family))
          .map((message) => message.name);
      expect(names('tts').sort()).toEqual(
        [...capabilities.text_to_speech.realtime_protocol.client_frames, ...capabilities.text_to_speech.realtime_protocol.server_frames].sort(),
      );
      expect(names('stt').sort()).toEqual(
        [...capabilities.speech_to_text.realtime_protocol.client_frames, ...capabilities.speech_to_text.realtime_protocol.server_frames].sort(),
      );
      // session.start carries every synthesis field except text and output, plus transport.
      expect(Object.keys(doc.components.messages.tts_session_start.payload.properties).sort()).toEqual([
        'dialect',
        'dialect_text',
        'format',
        'language',
        'model',
        'sample_rate_hz',
        'speed',
        'style',
        'transport',
        'type',
        'voice',
      ]);
      expect(capabilities.api.realtime_documentation).toMatch(/\/v1\/asyncapi\.json$/);
    } finally {
      await t.close();
    }
  });
});

describe('GET /v1/trunks', () => {
  it('answers a live key with no trunks while calls are off, and refuses a sandbox key', async () => {
    const live = await t.app.inject({ url: '/v1/trunks', headers: { 'x-api-key': t.liveKey } });
    expect(live.statusCode).toBe(200);
    expect(live.json()).toEqual({ sip: 'off', trunks: [] });
    const sandbox = await t.app.inject({ url: '/v1/trunks', headers: { 'x-api-key': t.sandboxKey } });
    expect(sandbox.statusCode).toBe(403);
    expect(sandbox.json().error).toMatchObject({ code: 'stt.forbidden', detail: expect.stringContaining('live key') });
    expect((await t.app.inject({ url: '/v1/trunks' })).statusCode).toBe(401);
  });

  it('refuses to place calls while calls are off (409 stt.call_unavailable)', async () => {
    const placed = await t.app.inject({
      method: 'POST',
      url: '/v1/calls',
      headers: { 'x-api-key': t.liveKey },
      payload: { to: 'sip:a@127.0.0.1', dialplan: 'x' },
    });
    expect(expectError(placed, 409, 'stt.call_unavailable').detail).toMatch(/calls are off/);
    const listed = await t.app.inject({ url: '/v1/calls', headers: { 'x-api-key': t.liveKey } });
    expect(listed.statusCode).toBe(409);
    expect((await t.app.inject({ method: 'POST', url: '/v1/calls', payload: {} })).statusCode).toBe(401);
  });
});
