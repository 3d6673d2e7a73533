import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDialectRenderer } from '../../engine/registry.js';
import { NEUTRAL_PROSODY } from '../../engine/types.js';
import { styleDelivery } from '../../src/speech/style.js';
import { FORMATS } from '../../src/catalog/formats.js';
import { prepareSpeech } from '../../src/speech/synthesis-service.js';
import { rms } from '../engine/tts-conformance.js';
import { medianPitchHz } from '../helpers/audio-analysis.js';
import { probeAudio } from '../helpers/ffmpeg.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

/** Live keys on the embedded eSpeak NG engine, through the whole HTTP path. */
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ SPRACHROHR_TTS_ENGINE: 'espeak' });
});
afterAll(async () => t.close());

function synth(body: Record<string, unknown>) {
  return t.app.inject({ method: 'POST', url: '/v1/tts', headers: { 'x-api-key': t.liveKey, 'content-type': 'application/json' }, payload: body });
}

const RAW: Record<string, string> = { pcm16: 's16le', mulaw: 'mulaw', alaw: 'alaw' };

describe('live POST /v1/tts speaks', () => {
  for (const format of FORMATS) {
    it(`in ${format.id} at ${format.default_sample_rate_hz} Hz`, async () => {
      const response = await synth({ text: 'Grüezi mitenand. Sie sind mit dem Kundendienst verbunden.', format: format.id });
      expect(response.statusCode, response.body.slice(0, 200)).toBe(200);
      expect(response.headers['x-speech-environment']).toBe('live');
      const declared = Number(response.headers['x-speech-audio-duration']);
      expect(declared).toBeGreaterThan(2);
      expect(declared).toBeLessThan(8);
      const raw = RAW[format.id];
      const probe = await probeAudio(response.rawPayload, raw ? { format: raw, rate: format.default_sample_rate_hz } : undefined);
      const tolerance = format.id === 'mp3' ? 0.2 : 0.01;
      expect(Math.abs(probe.decodedSeconds - declared)).toBeLessThan(tolerance);
    });
  }

  it('returns mark offsets and exact breaks in the JSON envelope', async () => {
    const text = '<speak>Willkommen. <mark name="menu"/>Für Deutsch drücken Sie die Eins.<break time="700ms"/><mark name="after-break"/>Merci.</speak>';
    const response = await synth({ text, format: 'pcm16', sample_rate_hz: 16000, output: 'json' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    expect(body.marks.map((m: { name: string }) => m.name)).toEqual(['menu', 'after-break']);
    const [menu, afterBreak] = body.marks as Array<{ offset_seconds: number }>;
    expect(menu!.offset_seconds).toBeGreaterThan(0.3);
    expect(afterBreak!.offset_seconds - menu!.offset_seconds).toBeGreaterThan(1.5);
    const pcm = new Int16Array(Buffer.from(body.audio.data, 'base64').buffer.slice(0));
    // The 700 ms of silence end at the second mark (5 ms margins for the resampler's filter
    // and the millisecond rounding of offsets).
    const end = Math.round((afterBreak!.offset_seconds - 0.005) * 16000);
    const silence = pcm.subarray(end - Math.round(0.69 * 16000), end);
    expect(Math.max(...silence.map(Math.abs))).toBeLessThan(200);
  });

  it('speaks every catalog language', async () => {
    const capabilities = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.liveKey } })).json();
    expect(capabilities.text_to_speech.engine).toBe('available');
    for (const language of capabilities.text_to_speech.languages) {
      for (const dialect of language.dialects) {
        const response = await synth({
          text: 'Hallo, bonjour, buongiorno, hello.',
          language: language.code,
          dialect: dialect.id,
          format: 'pcm16',
          sample_rate_hz: 8000,
        });
        expect(response.statusCode, `${language.code}/${dialect.id}`).toBe(200);
        expect(Number(response.headers['x-speech-audio-duration'])).toBeGreaterThan(1);
      }
    }
  });
});

describe('the dialect seam', () => {
  it('renders de-CH passages into their dialect with its pronunciation and leaves other languages alone', () => {
    const document = prepareSpeech(
      {
        passages: [
          {
            language: 'de-CH',
            dialect: 'zurich',
            items: [
              { type: 'text', text: 'Grüße aus der Straße' },
              { type: 'mark', name: 'm' },
            ],
          },
          { language: 'de', dialect: 'standard', items: [{ type: 'text', text: 'Grüße' }] },
          { language: 'de-CH', dialect: 'hochdeutsch', items: [{ type: 'text', text: 'Grüße' }] },
        ],
      },
      createDialectRenderer(),
    );
    const space = { text: ' ', ipa: null };
    const pronunciation = [
      { text: 'Grüess', ipa: 'ˈɡryəs' },
      space,
      { text: 'us', ipa: 'ʊs' },
      space,
      { text: 'de', ipa: 'də' },
      space,
      { text: 'Strass', ipa: 'ˈʃtras' },
    ];
    expect(document.passages[0]!.items).toEqual([
      { type: 'text', text: 'Grüess us de Strass', pronunciation },
      { type: 'mark', name: 'm' },
    ]);
    expect(document.passages[1]!.items).toEqual([{ type: 'text', text: 'Grüße' }]);
    // Swiss Standard German is read as written: Swiss spelling, no dialect pronunciation.
    expect(document.passages[2]!.items).toEqual([{ type: 'text', text: 'Grüsse' }]);
  });
});

describe('markup delivery takes audible effect', () => {
  const SENTENCE = 'Ihre Wartezeit beträgt ungefähr drei Minuten.';
  async function render(inner: string) {
    const response = await synth({ text: `<speak>${inner}</speak>`, format: 'pcm16', sample_rate_hz: 16000 });
    expect(response.statusCode, response.body.slice(0, 200)).toBe(200);
    const pcm = new Int16Array(response.rawPayload.buffer.slice(response.rawPayload.byteOffset, response.rawPayload.byteOffset + response.rawPayload.length));
    return { seconds: pcm.length / 16000, pitch: medianPitchHz(pcm, 16000), level: rms(pcm) };
  }

  it('changes rate, pitch, volume and emphasis', async () => {
    const plain = await render(SENTENCE);
    const slow = await render(`<prosody rate="slow">${SENTENCE}</prosody>`);
    const high = await render(`<prosody pitch="x-high">${SENTENCE}</prosody>`);
    const loud = await render(`<prosody volume="+6dB">${SENTENCE}</prosody>`);
    const soft = await render(`<prosody volume="x-soft">${SENTENCE}</prosody>`);
    const stressed = await render(`<emphasis level="strong">${SENTENCE}</emphasis>`);
    expect(slow.seconds / plain.seconds).toBeGreaterThan(1.2);
    expect(high.pitch / plain.pitch).toBeGreaterThan(1.1);
    expect(loud.level / plain.level).toBeGreaterThan(1.8);
    expect(soft.level / plain.level).toBeLessThan(0.3);
    expect(stressed.seconds).toBeGreaterThan(plain.seconds * 1.1);
  });

  it('nests prosody and returns to the outer delivery after it', async () => {
    const nested = await render(`<prosody rate="80%"><prosody rate="80%">${SENTENCE}</prosody></prosody>`);
    const single = await render(`<prosody rate="80%">${SENTENCE}</prosody>`);
    expect(nested.seconds).toBeGreaterThan(single.seconds * 1.1);
    const after = await render(`<prosody volume="x-soft">Leise.</prosody> ${SENTENCE}`);
    const plain = await render(`Leise. ${SENTENCE}`);
    expect(after.level / plain.level).toBeGreaterThan(0.7);
  });
});

describe('style steers delivery and never the words', () => {
  const TEXT = 'Vielen Dank für Ihren Anruf. Wir sind gleich für Sie da.';
  async function render(style: string | undefined) {
    const response = await synth({ text: TEXT, format: 'pcm16', sample_rate_hz: 16000, ...(style ? { style } : {}) });
    expect(response.statusCode).toBe(200);
    const pcm = new Int16Array(response.rawPayload.buffer.slice(response.rawPayload.byteOffset, response.rawPayload.byteOffset + response.rawPayload.length));
    return { seconds: pcm.length / 16000, pitch: medianPitchHz(pcm, 16000), level: rms(pcm) };
  }

  it('slows for a calm style, lifts the pitch for a cheerful one, softens for a quiet one', async () => {
    const plain = await render(undefined);
    expect((await render('ruhig und beruhigend')).seconds / plain.seconds).toBeGreaterThan(1.1);
    expect((await render('urgent, please hurry')).seconds / plain.seconds).toBeLessThan(0.92);
    expect((await render('fröhlich und freundlich')).pitch / plain.pitch).toBeGreaterThan(1.05);
    expect((await render('leise, fast flüsternd')).level / plain.level).toBeLessThan(0.6);
  });

  it('changes nothing for a prompt without a manner word', async () => {
    expect(styleDelivery('Read this for the customer hotline of a bank.')).toEqual(NEUTRAL_PROSODY);
    const plain = await render(undefined);
    const other = await render('Read this for the customer hotline of a bank.');
    // eSpeak's output differs by a few samples from call to call, so compare length and level.
    expect(Math.abs(other.seconds / plain.seconds - 1)).toBeLessThan(0.01);
    expect(Math.abs(other.level / plain.level - 1)).toBeLessThan(0.05);
  });
});
