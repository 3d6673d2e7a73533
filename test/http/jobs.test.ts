/**
 * Synthesis jobs over HTTP (spec 2.6, 3, 4.7–4.10): submitted and checked like POST /v1/tts,
 * 202 with Location, run in the background, polled, their audio fetched with its headers and
 * equal to the interactive synthesis of the same request; listed newest first; metered once as
 * batch use; the account's and environment's only; every bad input a 400 with its reason, and a
 * full queue a 429.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { JobListSchema, JobSchema } from '../../src/api/job-schemas.js';
import { AccountService } from '../../src/auth/account-service.js';
import { MAX_QUEUED_JOBS_PER_KEY } from '../../src/jobs/job-service.js';
import { DEFAULT_ACCOUNT_ID } from '../../src/store/store.js';
import { toneWav } from '../helpers/audio-fixtures.js';
import { expectError } from '../helpers/error-envelope.js';
import { multipartBody } from '../helpers/multipart.js';
import { expectSchema } from '../helpers/schema-check.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { uploadName } from '../../src/jobs/job-runner.js';

let t: TestApp;
let dataDir: string;
beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-jobs-'));
  t = await createTestApp({ SPRACHROHR_DATA_DIR: dataDir, SPRACHROHR_PUBLIC_BASE_URL: 'https://speech.example.ch/v1' });
  await t.services.jobs.runner.start();
});
afterAll(async () => {
  await t.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

const REQUEST = { text: 'Grüezi mitenand, Ihr Auftrag ist bereit.', language: 'de-CH-zurich', format: 'wav' };

function submit(body: unknown, key = t.sandboxKey) {
  return t.app.inject({ method: 'POST', url: '/v1/jobs', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: JSON.stringify(body) });
}
const get = (url: string, key = t.sandboxKey) => t.app.inject({ method: 'GET', url, headers: { 'x-api-key': key } });

async function finished(id: string) {
  await t.services.jobs.runner.idle();
  const response = await get(`/v1/jobs/${id}`);
  expect(response.statusCode).toBe(200);
  return response.json();
}

describe('synthesis jobs', () => {
  it('queue, run, and give their audio: the same as the interactive synthesis, metered once as batch', async () => {
    const usageBefore = (await get('/v1/usage')).json().window.sandbox.requests;
    const submitted = await submit({ kind: 'tts', ...REQUEST });
    expect(submitted.statusCode).toBe(202);
    const job = submitted.json();
    expectSchema(JobSchema, job);
    expect(job).toMatchObject({ kind: 'tts', status: 'queued', environment: 'sandbox', started_at: null, finished_at: null, audio_seconds: null, error: null });
    expect(job.id).toMatch(/^job_[\w-]{24}$/);
    expect(submitted.headers.location).toBe(`https://speech.example.ch/v1/jobs/${job.id}`);

    const done = await finished(job.id);
    expectSchema(JobSchema, done);
    expect(done.status).toBe('succeeded');
    expect(Date.parse(done.started_at)).toBeGreaterThanOrEqual(Date.parse(done.created_at));
    expect(Date.parse(done.finished_at)).toBeGreaterThanOrEqual(Date.parse(done.started_at));
    expect(Date.parse(done.result_expires_at) - Date.parse(done.finished_at)).toBe(48 * 3600 * 1000);
    expect(done.audio).toMatchObject({ encoding: 'wav', media_type: 'audio/wav', url: `https://speech.example.ch/v1/jobs/${job.id}/audio` });

    const audio = await get(`/v1/jobs/${job.id}/audio`);
    expect(audio.statusCode).toBe(200);
    expect(audio.headers['content-type']).toBe('audio/wav');
    expect(audio.headers['x-speech-audio-encoding']).toBe('wav');
    expect(Number(audio.headers['x-speech-audio-duration'])).toBeCloseTo(done.audio_seconds, 3);
    expect(audio.rawPayload.length).toBe(done.audio.byte_length);
    const interactive = await t.app.inject({
      method: 'POST',
      url: '/v1/tts',
      headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
      payload: JSON.stringify(REQUEST),
    });
    expect(audio.rawPayload.equals(interactive.rawPayload)).toBe(true);
    expect(await t.store.usage.findByRequestId(job.id)).toMatchObject({
      mode: 'batch',
      direction: 'tts',
      environment: 'sandbox',
      accountId: DEFAULT_ACCOUNT_ID,
    });
    // The job and the interactive request: two entries.
    expect((await get('/v1/usage')).json().window.sandbox.requests).toBe(usageBefore + 2);
  });

  it('lists the account’s jobs of the environment newest first, up to the limit', async () => {
    const ids: string[] = [];
    for (const text of ['Eins.', 'Zwei.', 'Drei.']) ids.push((await submit({ kind: 'tts', text })).json().id);
    await t.services.jobs.runner.idle();
    const listed = (await get('/v1/jobs?limit=2')).json();
    expectSchema(JobListSchema, listed);
    expect(listed.jobs.map((job: { id: string }) => job.id)).toEqual([ids[2], ids[1]]);
    expect((await get('/v1/jobs')).json().jobs.length).toBeGreaterThanOrEqual(4);
    // A live key of the same account sees the live jobs only; another account sees none of them.
    expect((await get('/v1/jobs', t.liveKey)).json().jobs).toEqual([]);
    const other = await new AccountService(t.store.accounts).create('jobs-other');
    const otherKey = (await t.services.keys.create('other', 'sandbox', other.id)).key;
    expect((await get('/v1/jobs', otherKey)).json().jobs).toEqual([]);
    expectError(await get(`/v1/jobs/${ids[0]}`, otherKey), 400, 'tts.invalid_request');
  });

  it('checks everything at submission, like POST /v1/tts', async () => {
    expectError(await submit({ kind: 'tts', text: 'Hallo', voice: 'nobody' }), 400, 'tts.unknown_voice');
    expectError(await submit({ kind: 'tts', text: '<speak><blink>x</blink></speak>' }), 400, 'tts.invalid_ssml');
    expectError(await submit({ kind: 'tts', text: 'x'.repeat(8001) }), 413, 'tts.text_too_long');
    expectError(await submit({ kind: 'tts', text: 'Hallo', speed: 3 }), 400, 'tts.invalid_speed');
    expectError(await submit({ text: 'Hallo' }), 400, 'tts.invalid_request');
    expectError(await submit({ kind: 'stt', text: 'Hallo' }), 400, 'tts.invalid_request');
    expect(expectError(await submit({ kind: 'tts', text: 'Hallo', colour: 'red' }), 400, 'tts.invalid_request').detail).toMatch(/colour/);
    expectError(await submit('{"kind": "tts", "text": '), 400, 'tts.invalid_request');
    const privateTarget = await submit({ kind: 'tts', text: 'Hallo', callback_url: 'https://169.254.169.254/latest/meta-data/' });
    expect(expectError(privateTarget, 400, 'tts.invalid_request').detail).toMatch(/169\.254\.169\.254, which is not a public address/);
    expect(expectError(await submit({ kind: 'tts', text: 'Hallo', callback_url: 'http://hooks.example.ch/x' }), 400, 'tts.invalid_request').detail).toMatch(
      /https/,
    );
    // The live engine is off in this app: a live job is refused now, not failed later.
    expectError(await submit({ kind: 'tts', text: 'Hallo' }, t.liveKey), 503, 'tts.unavailable');
    expectError(await submit({ kind: 'tts', text: 'Hallo' }, 'sv_test_nope'), 401, 'tts.unauthenticated');
  });

  it('answers 400 for a job that does not exist, has no audio yet, and for a bad limit', async () => {
    expect(expectError(await get('/v1/jobs/job_nothing'), 400, 'tts.invalid_request').detail).toMatch(/no job "job_nothing"/);
    expectError(await get('/v1/jobs/job_nothing/audio'), 400, 'tts.invalid_request');
    await t.services.jobs.runner.stop();
    const queued = (await submit({ kind: 'tts', text: 'Noch nicht.' })).json();
    expect(expectError(await get(`/v1/jobs/${queued.id}/audio`), 400, 'tts.invalid_request').detail).toMatch(/is queued: it has no audio yet/);
    expectError(await get('/v1/jobs?limit=0'), 400, 'tts.invalid_request');
    expectError(await get('/v1/jobs?limit=101'), 400, 'tts.invalid_request');
  });

  it(`refuses a key's job beyond ${MAX_QUEUED_JOBS_PER_KEY} queued with 429 and Retry-After`, async () => {
    // The runner is stopped (test above): jobs stay queued. One of this key's is queued already.
    const key = (await t.services.keys.create('queue', 'sandbox')).key;
    for (let i = 0; i < MAX_QUEUED_JOBS_PER_KEY; i++) expect((await submit({ kind: 'tts', text: `Nummer ${i}.` }, key)).statusCode).toBe(202);
    const refused = await submit({ kind: 'tts', text: 'Eine zu viel.' }, key);
    expect(expectError(refused, 429, 'tts.rate_limited').detail).toMatch(/200 jobs of this key are already queued/);
    expect(refused.headers['retry-after']).toBe('10');
  }, 60_000);

  it('recognise an uploaded recording as a job: the transcript POST /v1/stt gives, in the Job', async () => {
    await t.services.jobs.runner.start();
    const wav = toneWav(3);
    const form = multipartBody({ kind: 'stt', lang: 'de-CH-bern', vocabulary: 'Störung' }, { bytes: wav, type: 'audio/wav' });
    const submitted = await t.app.inject({ method: 'POST', url: '/v1/jobs', headers: { 'x-api-key': t.sandboxKey, ...form.headers }, payload: form.payload });
    expect(submitted.statusCode, submitted.body).toBe(202);
    expect(submitted.json()).toMatchObject({ kind: 'stt', status: 'queued' });
    const done = await finished(submitted.json().id);
    expectSchema(JobSchema, done);
    const direct = multipartBody({ lang: 'de-CH-bern', vocabulary: 'Störung' }, { bytes: wav, type: 'audio/wav' });
    const interactive = (
      await t.app.inject({ method: 'POST', url: '/v1/stt', headers: { 'x-api-key': t.sandboxKey, ...direct.headers }, payload: direct.payload })
    ).json();
    expect(done).toMatchObject({ status: 'succeeded', audio_seconds: 3, transcript: interactive });
    expect(done.audio).toBeUndefined();
    expect(await t.store.usage.findByRequestId(done.id)).toMatchObject({ direction: 'stt', mode: 'batch', audioSeconds: 3 });
    expect(expectError(await get(`/v1/jobs/${done.id}/audio`), 400, 'tts.invalid_request').detail).toMatch(/recognition/);
    // The recording is gone once the job ran.
    expect(await t.services.jobs.runner.blobs.get(uploadName(done.id))).toBeNull();
  });

  it('checks a recognition job like POST /v1/stt when it is submitted', async () => {
    const send = (fields: Record<string, string>, bytes?: Uint8Array) => {
      const form = multipartBody(fields, bytes ? { bytes, type: 'audio/wav' } : undefined);
      return t.app.inject({ method: 'POST', url: '/v1/jobs', headers: { 'x-api-key': t.sandboxKey, ...form.headers }, payload: form.payload });
    };
    const wav = toneWav(1);
    expect(expectError(await send({ kind: 'tts' }, wav), 400, 'stt.invalid_request').detail).toMatch(/kind must be stt/);
    expectError(await send({ kind: 'stt' }), 400, 'stt.invalid_request');
    expectError(await send({ kind: 'stt', lang: 'xx-YY' }, wav), 400, 'stt.invalid_request');
    expect(expectError(await send({ kind: 'stt', colour: 'red' }, wav), 400, 'stt.invalid_request').detail).toMatch(/unknown form field "colour"/);
    expectError(await send({ kind: 'stt' }, Buffer.from('RIFF not really a wave file')), 415, 'stt.unsupported_format');
    expect(expectError(await send({ kind: 'stt', callback_url: 'https://10.0.0.1/x' }, wav), 400, 'stt.invalid_request').detail).toMatch(
      /not a public address/,
    );
  });
});
