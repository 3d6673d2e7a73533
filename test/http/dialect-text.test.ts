/**
 * Authors' control over Swiss German rendering through the API: `dialect_text` (text already
 * written in the dialect is spoken as written, not rendered) on POST /v1/tts, the realtime
 * stream and jobs, refused for other languages; and the deployment lexicon, which every path
 * renders with. The sandbox engine's audio follows the spoken words exactly (one beep per word,
 * its pitch and length from the word), so equal audio means equal spoken words; `hochdeutsch`
 * speaks a text's words as written, which makes it the reference for "these words exactly".
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { normaliseText } from '../../engine/text/normaliser.js';
import { checkLexicon } from '../../src/speech/lexicon-loader.js';
import { expectError } from '../helpers/error-envelope.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { connect, opened, type TestSocket } from '../helpers/ws-client.js';

let t: TestApp;
let dataDir: string;
let base: string;
beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-dialect-text-'));
  t = await createTestApp({ SPRACHROHR_DATA_DIR: dataDir });
  await t.services.jobs.runner.start();
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  base = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/tts/stream`;
}, 60_000);
afterAll(async () => {
  await t?.close();
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** Written in Bern German; rendering it as if it were Standard German changes it (Sie → Dir, sind → si). */
const BERNESE = 'Chömed Sie morn wieder, mir sind für Sie da.';
const FIELDS = { format: 'pcm16', sample_rate_hz: 16000 } as const;

function tts(body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/v1/tts', headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' }, payload: body });
}
async function audio(body: Record<string, unknown>): Promise<Buffer> {
  const response = await tts({ ...FIELDS, ...body });
  expect(response.statusCode, response.body).toBe(200);
  return response.rawPayload;
}

/** The audio of a realtime session that speaks `text` whole. */
async function streamed(start: Record<string, unknown>, text: string): Promise<Buffer> {
  const socket: TestSocket = opened(await connect(base, { headers: { 'X-API-Key': t.sandboxKey } }));
  socket.send({ type: 'session.start', ...FIELDS, ...start });
  await socket.next('session.ready');
  socket.send({ type: 'text.append', text });
  socket.send({ type: 'session.end' });
  await socket.next('session.complete', 15_000);
  expect(await socket.closed).toBe(1000);
  const chunks = socket.frames.filter((frame) => frame['type'] === 'audio.chunk');
  return Buffer.concat(chunks.map((chunk) => Buffer.from(chunk['data'] as string, 'base64')));
}

describe('dialect_text', () => {
  it('speaks text written in the dialect as written on POST /v1/tts, not rendered', async () => {
    const asWritten = await audio({ text: BERNESE, language: 'de-CH', dialect: 'hochdeutsch' });
    const rendered = await audio({ text: BERNESE, language: 'de-CH', dialect: 'bern' });
    const dialectText = await audio({ text: BERNESE, language: 'de-CH', dialect: 'bern', dialect_text: true });
    expect(dialectText.equals(asWritten)).toBe(true);
    expect(dialectText.equals(rendered)).toBe(false);
  });

  it('writes out numbers, times and money in the dialect, and keeps the words around them', async () => {
    const said = await audio({ text: 'Mir sind am 3. Mai bis 17:30 Uhr für Sie da.', language: 'de-CH-zurich', dialect_text: true });
    // "dritten" and the clock time as the dialect says them ("dritte", "halbi sächsi" today).
    const renderer = t.services.engines.dialect;
    const third = renderer.render('dritten', 'zurich');
    const clock = renderer.render(normaliseText(renderer.prepare('17:30 Uhr', 'zurich'), 'de-CH'), 'zurich');
    const written = `Mir sind am ${third} Mai bis ${clock} für Sie da.`;
    expect(said.equals(await audio({ text: written, language: 'de-CH', dialect: 'hochdeutsch' }))).toBe(true);
    expect(written).not.toContain('dritten');
  });

  it('is a 400 for a language other than de-CH, and for hochdeutsch', async () => {
    const french = await tts({ text: 'Bonjour à tous.', language: 'fr-CH', dialect_text: true });
    expectError(french, 400, 'tts.invalid_request');
    expect(french.json().error.detail).toMatch(/dialect_text is for text written in a Swiss German dialect \(language de-CH\), not fr-CH/);
    const high = await tts({ text: BERNESE, language: 'de-CH-hochdeutsch', dialect_text: true });
    expectError(high, 400, 'tts.invalid_request');
    expect(high.json().error.detail).toMatch(/hochdeutsch is read as written/);
    expectError(await tts({ text: BERNESE, dialect_text: 'yes' }), 400, 'tts.invalid_request');
  });

  it('speaks as written on the realtime stream, and refuses a non-Swiss language there', async () => {
    const dialectText = await streamed({ language: 'de-CH', dialect: 'bern', dialect_text: true }, BERNESE);
    expect(dialectText.equals(await audio({ text: BERNESE, language: 'de-CH', dialect: 'hochdeutsch' }))).toBe(true);
    const socket = opened(await connect(base, { headers: { 'X-API-Key': t.sandboxKey } }));
    socket.send({ type: 'session.start', ...FIELDS, language: 'en', dialect_text: true });
    const error = await socket.next('error');
    expect(error['error']).toMatchObject({ code: 'tts.invalid_request' });
    expect(String((error['error'] as { detail: string }).detail)).toMatch(
      /dialect_text is for text written in a Swiss German dialect \(language de-CH\), not en/,
    );
    socket.close();
  });

  it('speaks as written in a job', async () => {
    const submitted = await t.app.inject({
      method: 'POST',
      url: '/v1/jobs',
      headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
      payload: { kind: 'tts', text: BERNESE, language: 'de-CH-bern', dialect_text: true, format: 'wav' },
    });
    expect(submitted.statusCode, submitted.body).toBe(202);
    await t.services.jobs.runner.idle();
    const job = await t.app.inject({ method: 'GET', url: `/v1/jobs/${submitted.json().id}/audio`, headers: { 'x-api-key': t.sandboxKey } });
    expect(job.statusCode, job.body).toBe(200);
    const asWritten = await audio({ text: BERNESE, language: 'de-CH', dialect: 'hochdeutsch', format: 'wav', sample_rate_hz: undefined });
    expect(job.rawPayload.equals(asWritten)).toBe(true);
  });

  it('is in the capabilities and the OpenAPI document', async () => {
    const capabilities = await t.app.inject({ method: 'GET', url: '/v1/capabilities', headers: { 'x-api-key': t.sandboxKey } });
    expect(capabilities.json().text_to_speech.parameters.dialect_text).toMatchObject({ type: 'boolean', default: false });
    const openapi = (await t.app.inject({ method: 'GET', url: '/v1/openapi.json', headers: { 'x-api-key': t.sandboxKey } })).json();
    const body = openapi.paths['/v1/tts'].post.requestBody.content['application/json'].schema;
    expect(JSON.stringify(body)).toContain('"dialect_text":{"default":false');
  });
});

describe('the deployment lexicon on every path', () => {
  it('renders HTTP and realtime syntheses with the lexicon the renderer has', async () => {
    const lexicon = checkLexicon('lexicon.yaml', 'entries:\n  - german: Stadtwerke\n    dialect: Stadtwärch\n');
    const renderer = t.services.engines.dialect;
    renderer.setLexicon(lexicon);
    const spoken = renderer.render('Die Stadtwerke sind offen.', 'zurich');
    expect(spoken).toMatch(/^D Stadtwärch /);
    const expected = await audio({ text: spoken, language: 'de-CH', dialect: 'hochdeutsch' });
    try {
      expect((await audio({ text: 'Die Stadtwerke sind offen.', language: 'de-CH-zurich' })).equals(expected)).toBe(true);
      expect((await streamed({ language: 'de-CH', dialect: 'zurich' }, 'Die Stadtwerke sind offen.')).equals(expected)).toBe(true);
    } finally {
      renderer.setLexicon(null);
    }
    expect((await audio({ text: 'Die Stadtwerke sind offen.', language: 'de-CH-zurich' })).equals(expected)).toBe(false);
  });
});
