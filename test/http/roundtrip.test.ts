import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { VOICES } from '../../src/catalog/voices.js';
import { assertPocketsphinx, scoreCommands } from '../helpers/pocketsphinx.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Round trip: English IVR commands synthesised by the live API, recognised by a real
 * recogniser (pocketsphinx from Debian) listening for the menu's commands. The words must come
 * back: this is what a caller's IVR hears.
 */
let t: TestApp;
beforeAll(async () => {
  await assertPocketsphinx();
  t = await createTestApp({ SPRACHROHR_TTS_ENGINE: 'espeak' });
});
afterAll(async () => t?.close());

describe('synthesised English is understood by a recogniser', () => {
  it('brings back at least 90 % of the words with every voice', async () => {
    for (const voice of VOICES) {
      const score = await scoreCommands(async (command) => {
        const response = await t.app.inject({
          method: 'POST',
          url: '/v1/tts',
          headers: { 'x-api-key': t.liveKey, 'content-type': 'application/json' },
          payload: { text: command, language: 'en', voice: voice.id, format: 'wav', sample_rate_hz: 16000 },
        });
        expect(response.statusCode).toBe(200);
        return response.rawPayload;
      });
      expect(1 - score.errors / score.words, voice.id).toBeGreaterThanOrEqual(0.9);
    }
  });
});
