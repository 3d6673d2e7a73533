/**
 * `/v1/recordings` through the app: live keys read, page, download and delete recordings;
 * sandbox keys and requests without a valid key are refused; every refusal is the envelope.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseWav, WAV_HEADER_BYTES } from '../../src/audio/wav.js';
import type { Recording } from '../../src/recordings/recording-service.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { message } from '../recordings/recording-fixture.js';

let t: TestApp;
let dataDir: string;
beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-recordings-api-'));
  t = await createTestApp({ SPRACHROHR_DATA_DIR: dataDir });
});
afterAll(async () => {
  await t?.services.recordings.close();
  await t?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

function get(url: string, key: string | null = t.liveKey) {
  return t.app.inject({ method: 'GET', url, headers: key ? { 'x-api-key': key } : {} });
}

function errorOf(response: { statusCode: number; json: () => { error: { code: string; request_id: string; detail: string | null } } }) {
  return { status: response.statusCode, ...response.json().error };
}

async function saved(count: number): Promise<Recording[]> {
  const recordings: Recording[] = [];
  for (let i = 0; i < count; i++) recordings.push(await t.services.recordings.save(message({ caller: `+4179000000${i}` })));
  return recordings;
}

describe('reading recordings with a live key', () => {
  it('shows one recording in snake_case, as the list does', async () => {
    const [recording] = await saved(1);
    const response = await get(`/v1/recordings/${recording!.id}`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.headers['x-speech-environment']).toBe('live');
    const body = response.json();
    expect(body).toEqual({
      id: recording!.id,
      call_id: recording!.callId,
      route: '+41445551234',
      caller: '+41790000000',
      called: '+41445551234',
      language: 'de-CH',
      created_at: recording!.createdAt,
      duration_seconds: 1,
      size_bytes: WAV_HEADER_BYTES + 16000,
      sample_rate_hz: 8000,
      ended_by: 'silence',
      transcript: { status: 'unavailable', text: null, confidence: null },
      expires_at: recording!.expiresAt,
    });
    const listed = (await get('/v1/recordings?limit=100')).json().recordings;
    expect(listed.find((entry: { id: string }) => entry.id === recording!.id)).toEqual(body);
  });

  it('lists newest first in pages of limit (default 20) that follow the next cursor', async () => {
    await saved(23);
    const all: string[] = [];
    const first = await get('/v1/recordings');
    expect(first.statusCode).toBe(200);
    expect(first.json().recordings).toHaveLength(20);
    let page = first.json();
    all.push(...page.recordings.map((r: { id: string }) => r.id));
    while (page.next) {
      page = (await get(`/v1/recordings?limit=7&before=${encodeURIComponent(page.next)}`)).json();
      all.push(...page.recordings.map((r: { id: string }) => r.id));
    }
    const expected = (await t.services.recordings.list({ limit: 100 })).recordings;
    expect(all).toEqual(expected.map((r) => r.id));
    const createdAt = expected.map((r) => r.createdAt);
    expect(createdAt).toEqual([...createdAt].sort().reverse());
  });

  it('streams the audio as the WAV file that was saved', async () => {
    const [recording] = await saved(1);
    const response = await get(`/v1/recordings/${recording!.id}/audio`);
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('audio/wav');
    expect(response.headers['content-length']).toBe(String(WAV_HEADER_BYTES + 16000));
    expect(response.headers['x-speech-audio-duration']).toBe('1.000');
    expect(response.headers['x-speech-audio-sample-rate']).toBe('8000');
    expect(response.headers['x-speech-request-id']).toMatch(/^req_/);
    expect(response.rawPayload).toEqual(await fs.readFile(path.join(dataDir, 'recordings', `${recording!.id}.wav`)));
    const info = parseWav(response.rawPayload);
    expect(info).toMatchObject({ encoding: 'pcm', channels: 1, sampleRateHz: 8000, bitsPerSample: 16 });
    const samples = new Int16Array(
      response.rawPayload.buffer.slice(response.rawPayload.byteOffset + info.dataOffset, response.rawPayload.byteOffset + info.dataOffset + info.dataBytes),
    );
    expect(samples).toEqual(message().pcm);
  });

  it('deletes a recording with 204; afterwards it, its audio and a second delete are 404', async () => {
    const [recording] = await saved(1);
    const deleted = await t.app.inject({ method: 'DELETE', url: `/v1/recordings/${recording!.id}`, headers: { 'x-api-key': t.liveKey } });
    expect(deleted.statusCode).toBe(204);
    expect(deleted.body).toBe('');
    await expect(fs.access(path.join(dataDir, 'recordings', `${recording!.id}.wav`))).rejects.toThrow();
    for (const url of [`/v1/recordings/${recording!.id}`, `/v1/recordings/${recording!.id}/audio`]) {
      expect(errorOf(await get(url))).toMatchObject({ status: 404, code: 'stt.not_found' });
    }
    const again = await t.app.inject({ method: 'DELETE', url: `/v1/recordings/${recording!.id}`, headers: { 'x-api-key': t.liveKey } });
    expect(errorOf(again)).toMatchObject({ status: 404, code: 'stt.not_found' });
  });
});

describe('refusals', () => {
  it('answer unknown and malformed ids with 404 stt.not_found', async () => {
    for (const id of ['rec_AAAAAAAAAAAAAAAAAAAAAA', 'rec_x', '..%2Fsprachrohr.sqlite', 'x'.repeat(90)]) {
      for (const url of [`/v1/recordings/${id}`, `/v1/recordings/${id}/audio`]) {
        const response = await get(url);
        expect(errorOf(response), url).toMatchObject({ status: 404, code: 'stt.not_found', request_id: response.headers['x-speech-request-id'] });
      }
    }
  });

  it('answer bad query values with 400 stt.invalid_request naming the problem', async () => {
    const cases: Array<[string, RegExp]> = [
      ['limit=0', /limit must be >= 1/],
      ['limit=101', /limit must be <= 100/],
      ['limit=ten', /limit must be integer/],
      ['limit=2.5', /limit must be integer/],
      ['limit=1&limit=2', /limit must be integer/],
      ['before=', /before must NOT have fewer than 1 characters/],
      ['before=not-a-cursor', /before is not a cursor from this list/],
      ['sort=oldest', /unknown field "sort"/],
    ];
    for (const [query, detail] of cases) {
      const response = await get(`/v1/recordings?${query}`);
      expect(errorOf(response), query).toMatchObject({ status: 400, code: 'stt.invalid_request', detail: expect.stringMatching(detail) });
    }
  });

  it('refuse sandbox keys with 403 stt.forbidden, saying a live key is needed', async () => {
    const [recording] = await saved(1);
    const requests = [
      { method: 'GET' as const, url: '/v1/recordings' },
      { method: 'GET' as const, url: '/v1/recordings?limit=0' },
      { method: 'GET' as const, url: `/v1/recordings/${recording!.id}` },
      { method: 'GET' as const, url: `/v1/recordings/${recording!.id}/audio` },
      { method: 'DELETE' as const, url: `/v1/recordings/${recording!.id}` },
    ];
    for (const request of requests) {
      const response = await t.app.inject({ ...request, headers: { 'x-api-key': t.sandboxKey } });
      expect(errorOf(response), request.url).toMatchObject({ status: 403, code: 'stt.forbidden', detail: expect.stringMatching(/live key/) });
      expect(response.headers['x-speech-environment']).toBe('sandbox');
    }
    expect(await t.services.recordings.get(recording!.id)).not.toBeNull();
  });

  it('refuse a missing or unknown key with 401 stt.unauthenticated', async () => {
    const [recording] = await saved(1);
    for (const key of [null, 'sv_notARealKeyAtAll123456', 'nonsense']) {
      for (const url of ['/v1/recordings', `/v1/recordings/${recording!.id}`, `/v1/recordings/${recording!.id}/audio`]) {
        expect(errorOf(await get(url, key)), `${url} ${key}`).toMatchObject({ status: 401, code: 'stt.unauthenticated' });
      }
      const deleted = await t.app.inject({ method: 'DELETE', url: `/v1/recordings/${recording!.id}`, headers: key ? { 'x-api-key': key } : {} });
      expect(errorOf(deleted)).toMatchObject({ status: 401, code: 'stt.unauthenticated' });
    }
    expect(await t.services.recordings.get(recording!.id)).not.toBeNull();
  });
});

describe('the OpenAPI document', () => {
  it('describes the recordings endpoints with their schemas', async () => {
    const document = (await get('/v1/openapi.json', t.sandboxKey)).json();
    const list = document.paths['/v1/recordings'].get;
    expect(list.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort()).toEqual(['query:before', 'query:limit']);
    expect(list.parameters.find((p: { name: string }) => p.name === 'limit')).toMatchObject({
      required: false,
      schema: { type: 'integer', default: 20, maximum: 100 },
    });
    const one = document.paths['/v1/recordings/{id}'];
    expect(Object.keys(one).sort()).toEqual(['delete', 'get']);
    expect(one.get.parameters[0]).toMatchObject({ in: 'path', name: 'id', required: true });
    expect(one.get.responses['200'].content['application/json'].schema.properties).toHaveProperty('transcript');
    expect(document.paths['/v1/recordings/{id}/audio'].get.responses['200'].content).toHaveProperty(['audio/wav']);
    expect(one.delete.responses).toHaveProperty(['204']);
  });
});
