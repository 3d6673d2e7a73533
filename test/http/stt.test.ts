import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { customWav, toneWav } from '../helpers/audio-fixtures.js';
import { convertWithFfmpeg } from '../helpers/ffmpeg.js';
import { multipartBody } from '../helpers/multipart.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

function recognise(fields: Record<string, string>, bytes?: Uint8Array, key: string | null = t.sandboxKey, fileName = 'audio') {
  const { payload, headers } = multipartBody(fields, bytes ? { bytes, name: fileName } : undefined);
  return t.app.inject({ method: 'POST', url: '/v1/stt', headers: { ...headers, ...(key ? { 'x-api-key': key } : {}) }, payload });
}

function errorOf(response: { statusCode: number; json: () => { error: { code: string; detail: string | null } } }) {
  return { status: response.statusCode, ...response.json().error };
}

describe('POST /v1/stt in the sandbox decodes every accepted container', () => {
  const wav = toneWav(2.5, 16000);
  const cases: Array<[string, () => Promise<Buffer> | Buffer, number]> = [
    ['WAV PCM16 16 kHz', () => wav, 2.5],
    ['WAV µ-law 8 kHz', () => convertWithFfmpeg(wav, 'a.wav', ['-ar', '8000', '-c:a', 'pcm_mulaw']), 2.5],
    ['WAV A-law 8 kHz', () => convertWithFfmpeg(wav, 'a.wav', ['-ar', '8000', '-c:a', 'pcm_alaw']), 2.5],
    ['WAV float 32-bit 48 kHz', () => convertWithFfmpeg(wav, 'a.wav', ['-ar', '48000', '-c:a', 'pcm_f32le']), 2.5],
    ['WAV PCM 24-bit stereo', () => convertWithFfmpeg(wav, 'a.wav', ['-ac', '2', '-c:a', 'pcm_s24le']), 2.5],
    ['Ogg Opus', () => convertWithFfmpeg(wav, 'a.opus', ['-c:a', 'libopus', '-b:a', '24k']), 2.5],
    ['FLAC', () => convertWithFfmpeg(wav, 'a.flac', ['-c:a', 'flac']), 2.5],
  ];
  for (const [name, make, seconds] of cases) {
    it(name, async () => {
      const response = await recognise({ lang: 'de-CH' }, await make());
      expect(response.statusCode, response.body).toBe(200);
      expect(response.headers['x-speech-request-id']).toMatch(/^req_/);
      const transcript = response.json();
      expect(transcript.duration_s).toBeCloseTo(seconds, 2);
      expect(transcript.lang).toBe('de-CH');
      expect(transcript.text).toMatch(/Synthetisches Sandbox-Transkript/);
      expect(transcript.words.length).toBe(transcript.text.split(' ').length);
      const last = transcript.words[transcript.words.length - 1];
      expect(last.end).toBeCloseTo(seconds, 2);
      for (const word of transcript.words) {
        expect(word.start).toBeLessThan(word.end);
        expect(word.conf).toBeGreaterThanOrEqual(0);
        expect(word.conf).toBeLessThanOrEqual(1);
      }
    });
  }
});

describe('POST /v1/stt languages and vocabulary', () => {
  const audio = toneWav(1);
  it('answers in the first candidate, reporting a dialect candidate exactly as given', async () => {
    expect((await recognise({ lang: 'auto' }, audio)).json().lang).toBe('de-CH');
    expect((await recognise({ lang: 'fr-CH,it' }, audio)).json()).toMatchObject({ lang: 'fr-CH', text: expect.stringMatching(/Transcription synthétique/) });
    expect((await recognise({ lang: 'de-CH-zurich' }, audio)).json().lang).toBe('de-CH-zurich');
    expect((await recognise({}, audio)).json().lang).toBe('de-CH');
    expect((await recognise({ lang: 'en-GB' }, audio)).json().text).toMatch(/Synthetic sandbox transcript/);
  });

  it('accepts vocabulary as a JSON array or a comma list', async () => {
    expect((await recognise({ vocabulary: '["Zürich HB","Gleis 7"]' }, audio)).statusCode).toBe(200);
    expect((await recognise({ vocabulary: 'Zürich HB, Gleis 7' }, audio)).statusCode).toBe(200);
    expect((await recognise({ vocabulary: Array.from({ length: 200 }, (_, i) => `t${i}`).join(',') }, audio)).statusCode).toBe(200);
  });

  const refusals: Array<[string, Record<string, string>, RegExp]> = [
    ['an unknown language', { lang: 'xx' }, /"xx" is not a supported language/],
    ['an empty candidate', { lang: 'de-CH,,en' }, /empty candidate/],
    ['auto among candidates', { lang: 'auto,en' }, /auto cannot be combined/],
    ['a broken JSON vocabulary', { vocabulary: '["a", ' }, /starts with \[ but is not valid JSON/],
    ['a vocabulary that starts like a JSON object', { vocabulary: '{not json' }, /starts with \{ but is not valid JSON/],
    ['a JSON object as vocabulary', { vocabulary: '{"terms": ["a"]}' }, /in JSON must be an array of strings/],
    ['a JSON vocabulary of numbers', { vocabulary: '[1,2]' }, /array of strings/],
    ['201 terms', { vocabulary: Array.from({ length: 201 }, (_, i) => `t${i}`).join(',') }, /201 terms; at most 200/],
    ['a 101-character term', { vocabulary: 'x'.repeat(101) }, /longer than 100 characters/],
    ['an unknown field', { colour: 'blue' }, /unknown form field "colour"/],
  ];
  for (const [name, fields, detail] of refusals) {
    it(`refuses ${name} with 400 stt.invalid_request`, async () => {
      const error = errorOf(await recognise(fields, audio));
      expect(error).toMatchObject({ status: 400, code: 'stt.invalid_request' });
      expect(error.detail).toMatch(detail);
    });
  }
});

describe('POST /v1/stt refusals', () => {
  it('refuses formats it does not accept with 415, naming what it saw', async () => {
    const mp3 = await t.app.inject({
      method: 'POST',
      url: '/v1/tts',
      headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
      payload: { text: 'Hallo', format: 'mp3' },
    });
    expect(errorOf(await recognise({}, mp3.rawPayload))).toMatchObject({ status: 415, code: 'stt.unsupported_format', detail: expect.stringMatching(/MP3/) });
    const vorbis = await convertWithFfmpeg(toneWav(1), 'a.ogg', ['-c:a', 'libvorbis']);
    expect(errorOf(await recognise({}, vorbis))).toMatchObject({ status: 415, code: 'stt.unsupported_format', detail: expect.stringMatching(/not Opus/) });
    expect(errorOf(await recognise({}, Buffer.from('just some text, not audio')))).toMatchObject({ status: 415, code: 'stt.unsupported_format' });
    const adpcm = customWav({ tag: 2, channels: 1, rate: 8000, bits: 4, data: Buffer.alloc(100) });
    expect(errorOf(await recognise({}, adpcm))).toMatchObject({ status: 415, code: 'stt.unsupported_format', detail: expect.stringMatching(/0x2/) });
  });

  it('refuses broken audio of an accepted container with 400 stt.invalid_audio', async () => {
    const wav = toneWav(1);
    expect(errorOf(await recognise({}, wav.subarray(0, 30)))).toMatchObject({ status: 400, code: 'stt.invalid_audio' });
    expect(errorOf(await recognise({}, wav.subarray(0, 44)))).toMatchObject({
      status: 400,
      code: 'stt.invalid_audio',
      detail: expect.stringMatching(/no samples/),
    });
    const flac = Buffer.concat([Buffer.from('fLaC'), Buffer.alloc(2000, 0x5a)]);
    expect(errorOf(await recognise({}, flac))).toMatchObject({ status: 400, code: 'stt.invalid_audio' });
    expect(errorOf(await recognise({}, Buffer.alloc(0)))).toMatchObject({ status: 400, code: 'stt.invalid_audio', detail: 'the audio file is empty' });
  });

  it('refuses recordings over five minutes with 413 stt.audio_too_large', async () => {
    const long = customWav({ tag: 1, channels: 1, rate: 8000, bits: 16, data: Buffer.alloc(8000 * 2 * 301) });
    const error = errorOf(await recognise({}, long));
    expect(error).toMatchObject({ status: 413, code: 'stt.audio_too_large' });
    expect(error.detail).toMatch(/301\.0 s; recognition accepts at most 300 s/);
    const opus = await convertWithFfmpeg(customWav({ tag: 1, channels: 1, rate: 8000, bits: 16, data: Buffer.alloc(8000 * 2 * 302) }), 'a.opus', [
      '-c:a',
      'libopus',
      '-b:a',
      '6k',
    ]);
    expect(errorOf(await recognise({}, opus))).toMatchObject({ status: 413, code: 'stt.audio_too_large' });
  });

  it('refuses a form without audio, a wrong file part and a JSON body', async () => {
    expect(errorOf(await recognise({ lang: 'de-CH' }))).toMatchObject({
      status: 400,
      code: 'stt.invalid_request',
      detail: expect.stringMatching(/no file part named audio/),
    });
    expect(errorOf(await recognise({}, toneWav(1), t.sandboxKey, 'file'))).toMatchObject({
      status: 400,
      code: 'stt.invalid_request',
      detail: expect.stringMatching(/part named audio/),
    });
    const json = await t.app.inject({
      method: 'POST',
      url: '/v1/stt',
      headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
      payload: '{}',
    });
    expect(errorOf(json)).toMatchObject({ status: 400, code: 'stt.invalid_request', detail: expect.stringMatching(/multipart\/form-data/) });
  });

  it('uses the stt family for authentication and live keys', async () => {
    expect(errorOf(await recognise({}, toneWav(1), null))).toMatchObject({ status: 401, code: 'stt.unauthenticated' });
    expect(errorOf(await recognise({}, toneWav(1), 'sv_test_notarealkey000000000000000'))).toMatchObject({ status: 401, code: 'stt.unauthenticated' });
    // No recogniser runs in this app: a live key learns which language lacks one and what to install.
    expect(errorOf(await recognise({}, toneWav(1), t.liveKey))).toMatchObject({
      status: 400,
      code: 'stt.invalid_request',
      detail: expect.stringMatching(
        /no recogniser for de-CH is installed on this deployment \(none is installed\); the operator can install one \(de-CH: sprachrohr models pull vosk-model-small-de-0\.15\)/,
      ),
    });
    const detail = errorOf(await recognise({ lang: 'en,it' }, toneWav(1), t.liveKey)).detail;
    expect(detail).toContain(
      "en: Debian's pocketsphinx-en-us (npm run system-deps) or sprachrohr models pull vosk-model-small-en-us-0.15; it: sprachrohr models pull vosk-model-small-it-0.22",
    );
  });
});

describe('POST /v1/stt over a real socket', () => {
  it('answers 413 to an 80 MB upload after reading about 25 MB of it', async () => {
    await t.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = t.app.server.address() as AddressInfo;
    const { payload, headers } = multipartBody({}, { bytes: Buffer.alloc(80 * 1024 * 1024, 1) });
    // Chunked, so the server cannot refuse from Content-Length alone and must stop reading.
    const result = await new Promise<{ status: number; body: string; sentWhenAnswered: number }>((resolve, reject) => {
      let sent = 0;
      let answered = false;
      const request = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/stt',
        headers: { ...headers, 'x-api-key': t.sandboxKey, 'transfer-encoding': 'chunked' },
      });
      request.on('response', (response) => {
        answered = true;
        const sentWhenAnswered = sent;
        let body = '';
        response.on('data', (chunk: Buffer) => (body += chunk.toString()));
        response.on('end', () => {
          resolve({ status: response.statusCode!, body, sentWhenAnswered });
          request.destroy();
        });
      });
      request.on('error', (error) => {
        if (!answered) reject(error);
      });
      const chunk = 256 * 1024;
      const pump = () => {
        while (sent < payload.length && !answered) {
          const ok = request.write(payload.subarray(sent, sent + chunk));
          sent += chunk;
          if (!ok) {
            request.once('drain', pump);
            return;
          }
        }
        if (!answered) request.end();
      };
      pump();
    });
    expect(result.status).toBe(413);
    expect(JSON.parse(result.body).error.code).toBe('stt.audio_too_large');
    // The answer comes once the limit is crossed; the rest is never read (socket buffers aside).
    expect(result.sentWhenAnswered).toBeLessThan(40 * 1024 * 1024);
  });

  it('answers 413 at once from a Content-Length over the limit', async () => {
    const { port } = t.app.server.address() as AddressInfo;
    const result = await new Promise<number>((resolve, reject) => {
      const request = http.request({
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: '/v1/stt',
        headers: { 'x-api-key': t.sandboxKey, 'content-type': 'multipart/form-data; boundary=x', 'content-length': String(40 * 1024 * 1024) },
      });
      request.on('response', (response) => {
        resolve(response.statusCode!);
        request.destroy();
      });
      request.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
      request.write(Buffer.alloc(1024));
    });
    expect(result).toBe(413);
  });
});
