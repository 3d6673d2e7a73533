import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { TINY_VITS_HOP, writeTinyVitsModel } from '../helpers/tiny-vits.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/** `studio` on a neural voice where one is installed; eSpeak NG everywhere else. */
let t: TestApp;
let voicesDir: string;
beforeAll(async () => {
  voicesDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-studio-'));
  await writeTinyVitsModel(path.join(voicesDir, 'anna', 'de'));
  t = await createTestApp({ SPRACHROHR_TTS_ENGINE: 'espeak', SPRACHROHR_VOICES_DIR: voicesDir });
});
afterAll(async () => {
  await t.close();
  await fs.rm(voicesDir, { recursive: true, force: true });
});

async function seconds(body: Record<string, unknown>): Promise<number> {
  const response = await t.app.inject({
    method: 'POST',
    url: '/v1/tts',
    headers: { 'x-api-key': t.liveKey, 'content-type': 'application/json' },
    payload: { text: 'hallo', format: 'pcm16', sample_rate_hz: 16000, ...body },
  });
  expect(response.statusCode, response.body.slice(0, 200)).toBe(200);
  return response.rawPayload.length / 2 / 16000;
}

describe('model studio and swift', () => {
  it('speaks studio requests with the installed neural voice, for every German region', async () => {
    // The test model: 256 samples per token at 16 kHz; "hallo" is six tokens.
    expect(await seconds({ model: 'studio', voice: 'anna', language: 'de-CH' })).toBeCloseTo((6 * TINY_VITS_HOP) / 16000, 6);
    expect(await seconds({ model: 'studio', voice: 'anna', language: 'de-AT' })).toBeCloseTo((6 * TINY_VITS_HOP) / 16000, 6);
  });

  it('keeps swift, other voices and other languages on eSpeak NG', async () => {
    for (const body of [
      { model: 'swift', voice: 'anna' },
      { model: 'studio', voice: 'jonas' },
      { model: 'studio', voice: 'anna', language: 'it-CH' },
    ]) {
      expect(await seconds(body), JSON.stringify(body)).toBeGreaterThan(0.3);
    }
  });

  it('lists the installed neural voices in capabilities', async () => {
    const capabilities = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.liveKey } })).json();
    expect(capabilities.text_to_speech.studio_voices).toEqual([{ voice: 'anna', language: 'de' }]);
  });

  it('refuses to start on a voices folder with a broken model, naming it', async () => {
    const broken = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-broken-'));
    await writeTinyVitsModel(path.join(broken, 'lea', 'fr'));
    await fs.writeFile(path.join(broken, 'lea', 'fr', 'model.onnx'), 'not a model');
    const data = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-data-'));
    const result = await runCli(['serve'], { SPRACHROHR_DATA_DIR: data, SPRACHROHR_VOICES_DIR: broken, SPRACHROHR_PORT: '0' });
    await fs.rm(data, { recursive: true, force: true });
    expect(result.code).toBe(78);
    expect(result.stderr).toMatch(/SPRACHROHR_VOICES_DIR: .*lea\/fr: /);
    await fs.rm(broken, { recursive: true, force: true });
  });
});
