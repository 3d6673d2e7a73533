/**
 * Probe: one synthesis request cannot make unbounded audio. Markup that would last hours is
 * refused with 400 before synthesis; what the estimate cannot see is stopped as it grows; a
 * refusal is never a 500 and is never billed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LIMITS } from '../../src/catalog/limits.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ SPRACHROHR_SANDBOX_DAILY_AUDIO_SECONDS: '1000000' });
});
afterAll(async () => t?.close());

function synth(key: string, body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/v1/tts', headers: { 'x-api-key': key, 'content-type': 'application/json' }, payload: body });
}

async function usedToday(key: string): Promise<number> {
  const capabilities = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': key } })).json();
  return capabilities.usage_today.tts_audio_seconds_used;
}

/** About 7.9 KB of markup: slow prosody nested eight deep around long text, read at half speed. */
function slowMarkup(): string {
  const open = '<prosody rate="x-slow">'.repeat(8);
  const close = '</prosody>'.repeat(8);
  return `<speak>${open}${'Bitte warten Sie einen Moment. '.repeat(245)}${close}</speak>`;
}

describe('the audio of one request is bounded', () => {
  it('publishes the bound in capabilities', async () => {
    const capabilities = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.sandboxKey } })).json();
    expect(capabilities.limits.tts_max_audio_seconds).toBe(LIMITS.ttsMaxAudioSeconds);
    expect(LIMITS.ttsMaxAudioSeconds).toBe(600);
  });

  it('refuses nested slow prosody at half speed with 400 before any synthesis, to live and sandbox keys', async () => {
    const markup = slowMarkup();
    expect(markup.length).toBeGreaterThan(7500);
    expect(markup.length).toBeLessThan(8000);
    // The live key reaches the refusal although no live engine runs here: it comes first.
    for (const key of [t.sandboxKey, t.liveKey]) {
      const started = performance.now();
      const response = await synth(key, { text: markup, speed: 0.5, format: 'wav' });
      expect(response.statusCode).toBe(400);
      expect(response.json().error).toMatchObject({
        code: 'tts.invalid_request',
        detail: expect.stringContaining('at most 600 s (limits.tts_max_audio_seconds)'),
      });
      expect(performance.now() - started).toBeLessThan(1000);
    }
    expect(await usedToday(t.sandboxKey)).toBe(0);
  });

  it('refuses 420 ten-second breaks as output json with 400, not 500, and bills nothing', async () => {
    const response = await synth(t.sandboxKey, {
      text: `<speak>${'<break time="10s"/>'.repeat(420)}Ende.</speak>`,
      output: 'json',
      format: 'wav',
      sample_rate_hz: 48000,
    });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.code).toBe('tts.invalid_request');
    expect(response.json().error.detail).toMatch(/at least 420\d s/);
    expect(await usedToday(t.sandboxKey)).toBe(0);
  });

  it('stops a synthesis that grows past the bound although the estimate let it start', async () => {
    // 7000 characters at half speed: at least 560 s by the estimate, 1000 s by the sandbox voice.
    const response = await synth(t.sandboxKey, { text: 'a'.repeat(7000), speed: 0.5, format: 'pcm16', sample_rate_hz: 8000 });
    expect(response.statusCode).toBe(400);
    expect(response.json().error.detail).toContain('more than 600 s');
    expect(await usedToday(t.sandboxKey)).toBe(0);
  });

  it('still makes the longest audio it allows, as json, in the largest format', async () => {
    // 550 s of breaks and a word at 48 kHz: 52.8 MB of WAV, 70 MB of base64.
    const response = await synth(t.sandboxKey, {
      text: `<speak>${'<break time="10s"/>'.repeat(55)}Ende.</speak>`,
      output: 'json',
      format: 'wav',
      sample_rate_hz: 48000,
    });
    expect(response.statusCode).toBe(200);
    const audio = response.json().audio;
    expect(audio.duration_seconds).toBeGreaterThan(550);
    expect(audio.duration_seconds).toBeLessThan(LIMITS.ttsMaxAudioSeconds);
    expect(await usedToday(t.sandboxKey)).toBe(Math.ceil(audio.duration_seconds));
  }, 60_000);
});
