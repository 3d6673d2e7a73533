import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMATS } from '../../src/catalog/formats.js';
import { probeAudio } from '../helpers/ffmpeg.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/**
 * Every format at every permitted rate, synthesised through the API and decoded by ffmpeg
 * (an independent decoder): the rate and the decoded length must match what the API says.
 */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

const RAW_INPUT: Record<string, string> = { pcm16: 's16le', mulaw: 'mulaw', alaw: 'alaw' };
const CODEC: Record<string, string> = { wav: 'pcm_s16le', pcm16: 'pcm_s16le', mulaw: 'pcm_mulaw', alaw: 'pcm_alaw', mp3: 'mp3', opus: 'opus' };

describe('encoded output decoded by ffmpeg', () => {
  for (const format of FORMATS) {
    for (const rate of format.sample_rates_hz) {
      it(`${format.id} at ${rate} Hz`, async () => {
        const response = await t.app.inject({
          method: 'POST',
          url: '/v1/tts',
          headers: { 'x-api-key': t.sandboxKey, 'content-type': 'application/json' },
          payload: { text: 'Der nächste freie Mitarbeiter ist gleich für Sie da.', format: format.id, sample_rate_hz: rate },
        });
        expect(response.statusCode).toBe(200);
        const declared = Number(response.headers['x-speech-audio-duration']);
        const raw = RAW_INPUT[format.id];
        const probe = await probeAudio(response.rawPayload, raw ? { format: raw, rate } : undefined);
        expect(probe.codec).toBe(CODEC[format.id]);
        expect(probe.channels).toBe(1);
        if (format.id === 'opus') {
          // Opus always decodes at 48 kHz; the stream header records the source rate.
          expect(probe.sampleRateHz).toBe(48000);
          const head = response.rawPayload.indexOf('OpusHead');
          expect(response.rawPayload.readUInt32LE(head + 12)).toBe(rate);
          // Pre-skip and the end granule trim the stream to the exact length.
          expect(Math.abs(probe.decodedSeconds - declared)).toBeLessThan(0.002);
        } else if (format.id === 'mp3') {
          expect(probe.sampleRateHz).toBe(rate);
          // MP3 adds the encoder's delay and pads to whole frames (at most ~2 frames).
          expect(probe.decodedSeconds - declared).toBeGreaterThanOrEqual(0);
          expect(probe.decodedSeconds - declared).toBeLessThan((2 * 1152) / rate + 0.01);
        } else {
          expect(probe.sampleRateHz).toBe(rate);
          // The header gives milliseconds, rounded.
          expect(Math.abs(probe.decodedSeconds - declared)).toBeLessThanOrEqual(0.0005 + 1e-9);
        }
      });
    }
  }
});
