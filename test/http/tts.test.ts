import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FORMATS } from '../../src/catalog/formats.js';
import { SANDBOX_CHARACTERS_PER_SECOND } from '../../src/catalog/limits.js';
import { expectError } from '../helpers/error-envelope.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(async () => t.close());

function synth(body: unknown, headers: Record<string, string> = {}, key: string | null = t.sandboxKey) {
  return t.app.inject({
    method: 'POST',
    url: '/v1/tts',
    headers: { 'content-type': 'application/json', ...(key ? { 'x-api-key': key } : {}), ...headers },
    payload: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

describe('POST /v1/tts in the sandbox', () => {
  it('returns audio with metadata headers and the sandbox duration model', async () => {
    const text = 'Grüezi mitenand, willkommen beim Kundendienst.';
    const response = await synth({ text, format: 'pcm16', sample_rate_hz: 16000 });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toBe('audio/pcm; rate=16000; channels=1');
    expect(response.headers['x-speech-environment']).toBe('sandbox');
    expect(response.headers['x-speech-request-id']).toMatch(/^req_/);
    expect(response.headers['x-speech-audio-encoding']).toBe('pcm16');
    expect(response.headers['x-speech-audio-sample-rate']).toBe('16000');
    expect(response.headers['x-speech-characters']).toBe(String(text.length));
    const seconds = response.rawPayload.length / 2 / 16000;
    expect(Number(response.headers['x-speech-audio-duration'])).toBeCloseTo(seconds, 3);
    // One slot per word plus its following space: (characters + 1) / characters-per-second.
    expect(seconds).toBeCloseTo((text.length + 1) / SANDBOX_CHARACTERS_PER_SECOND, 1);
  });

  it('is byte-identical for the same request in every format', async () => {
    for (const format of FORMATS) {
      const body = { text: 'Ihr Anruf ist uns wichtig.', format: format.id };
      const [a, b] = [await synth(body), await synth(body)];
      expect(a.statusCode, format.id).toBe(200);
      expect(a.rawPayload.equals(b.rawPayload), format.id).toBe(true);
      expect(a.rawPayload.length, format.id).toBeGreaterThan(100);
    }
  });

  it('differs for a different text and is not silence', async () => {
    const a = await synth({ text: 'eins zwei drei', format: 'pcm16' });
    const b = await synth({ text: 'vier fünf sechs', format: 'pcm16' });
    expect(a.rawPayload.equals(b.rawPayload)).toBe(false);
    const samples = new Int16Array(a.rawPayload.buffer, a.rawPayload.byteOffset, a.rawPayload.length / 2);
    expect(Math.max(...samples)).toBeGreaterThan(5000);
  });

  it('halves the duration at speed 2', async () => {
    const slow = await synth({ text: 'Bitte warten Sie einen Moment.', format: 'pcm16' });
    const fast = await synth({ text: 'Bitte warten Sie einen Moment.', format: 'pcm16', speed: 2 });
    expect(fast.rawPayload.length / slow.rawPayload.length).toBeCloseTo(0.5, 1);
  });

  it('answers the JSON envelope for output=json and for Accept: application/json', async () => {
    for (const response of [
      await synth({ text: 'Hallo', format: 'wav', output: 'json' }),
      await synth({ text: 'Hallo', format: 'wav' }, { accept: 'application/json' }),
    ]) {
      expect(response.statusCode).toBe(200);
      expect(response.headers['content-type']).toContain('application/json');
      const body = response.json();
      expect(body).toMatchObject({ voice: 'anna', language: 'de-CH', dialect: 'standard', speed: 1, characters: 5, passages: 1, cache: 'miss' });
      expect(body.request_id).toBe(response.headers['x-speech-request-id']);
      expect(body.marks).toBeUndefined();
      const audio = Buffer.from(body.audio.data, 'base64');
      expect(body.audio).toMatchObject({ encoding: 'wav', media_type: 'audio/wav', sample_rate_hz: 24000, channels: 1, byte_length: audio.length });
      expect(audio.subarray(0, 4).toString()).toBe('RIFF');
      expect(body.audio.duration_seconds).toBeCloseTo((audio.length - 44) / 2 / 24000, 3);
    }
  });

  it('accepts the compact language form and reports the dialect', async () => {
    const response = await synth({ text: 'Grüezi', language: 'de-CH-zurich', output: 'json' });
    expect(response.json()).toMatchObject({ language: 'de-CH', dialect: 'zurich' });
    expect(response.headers['x-speech-dialect']).toBe('zurich');
  });

  it('accepts X-Speech-Sandbox-Mode: synthetic with a sandbox key', async () => {
    const response = await synth({ text: 'Hallo' }, { 'x-speech-sandbox-mode': 'synthetic' });
    expect(response.statusCode).toBe(200);
  });

  it('returns marks, exact breaks and passages from markup', async () => {
    const text = '<speak>Eins <mark name="a"/><break time="500ms"/>zwei <lang xml:lang="fr-CH">trois</lang><mark name="b"/></speak>';
    // Standard German, so that the words (and their beeps) are exactly the ones written.
    const response = await synth({ text, language: 'de', format: 'pcm16', sample_rate_hz: 8000, output: 'json' });
    expect(response.statusCode).toBe(200);
    const body = response.json();
    // The mark after </lang> opens no new spoken passage: two passages are rendered.
    expect(body.passages).toBe(2);
    expect(body.characters).toBe('Eins zwei trois'.length);
    expect(body.marks.map((m: { name: string }) => m.name)).toEqual(['a', 'b']);
    const [a, b] = body.marks as Array<{ offset_seconds: number }>;
    expect(a!.offset_seconds).toBeCloseTo(5 / SANDBOX_CHARACTERS_PER_SECOND, 2);
    const pcm = new Int16Array(Buffer.from(body.audio.data, 'base64').buffer.slice(0));
    const silentRun = longestSilence(pcm);
    expect(silentRun / 8000).toBeGreaterThanOrEqual(0.5);
    expect(b!.offset_seconds).toBeCloseTo(body.audio.duration_seconds, 2);
  });
});

function longestSilence(pcm: Int16Array): number {
  let best = 0;
  let run = 0;
  for (const sample of pcm) {
    run = sample === 0 ? run + 1 : 0;
    best = Math.max(best, run);
  }
  return best;
}

describe('markup expansion in the sandbox', () => {
  it('counts the characters of say-as and sub expansions, not of the markup', async () => {
    const text = '<speak>Tel. <say-as interpret-as="telephone">044 668 18 00</say-as>, <sub alias="World Wide Web">WWW</sub></speak>';
    const body = (await synth({ text, output: 'json', format: 'pcm16' })).json();
    const spoken = 'Tel. null vier vier, sechs sechs acht, eins acht, null null , World Wide Web';
    expect(body.characters).toBe(spoken.replace(/\s+/g, ' ').length);
  });

  it('speaks written-out numbers: a price takes as long as its words', async () => {
    const digits = await synth({ text: 'CHF 1234.50', format: 'pcm16', sample_rate_hz: 8000 });
    const words = await synth({ text: 'eintausendzweihundertvierunddreissig Franken fünfzig', format: 'pcm16', sample_rate_hz: 8000 });
    expect(digits.rawPayload.equals(words.rawPayload)).toBe(true);
  });
});

describe('POST /v1/tts validation', () => {
  const cases: Array<[string, unknown, number, string, RegExp]> = [
    ['missing text', { voice: 'anna' }, 400, 'tts.text_required', /text is required/],
    ['empty text', { text: '' }, 400, 'tts.text_required', /text/],
    ['whitespace text', { text: '   ' }, 400, 'tts.text_required', /nothing to speak/],
    ['text over 8000', { text: 'a'.repeat(8001) }, 413, 'tts.text_too_long', /8000/],
    ['text not a string', { text: 5 }, 400, 'tts.invalid_request', /text must be string/],
    ['unknown voice', { text: 'x', voice: 'hal' }, 400, 'tts.unknown_voice', /voice must be one of anna/],
    ['unknown language', { text: 'x', language: 'xx-YY' }, 400, 'tts.unknown_language', /xx-YY/],
    ['unknown compact dialect', { text: 'x', language: 'de-CH-mars' }, 400, 'tts.unknown_language', /de-CH-mars/],
    ['dialect of another language', { text: 'x', language: 'fr-CH', dialect: 'zurich' }, 400, 'tts.unknown_language', /available: standard, geneve/],
    ['conflicting dialects', { text: 'x', language: 'de-CH-bern', dialect: 'zurich' }, 400, 'tts.invalid_request', /names dialect "bern"/],
    ['speed too low', { text: 'x', speed: 0.4 }, 400, 'tts.invalid_speed', /speed must be >= 0.5/],
    ['speed too high', { text: 'x', speed: 2.5 }, 400, 'tts.invalid_speed', /speed must be <= 2/],
    ['speed a string', { text: 'x', speed: 'fast' }, 400, 'tts.invalid_speed', /speed must be number/],
    ['style too long', { text: 'x', style: 's'.repeat(601) }, 400, 'tts.style_too_long', /600/],
    ['unknown format', { text: 'x', format: 'aac' }, 400, 'tts.unsupported_format', /format must be one of mp3/],
    ['rate not permitted', { text: 'x', format: 'mulaw', sample_rate_hz: 16000 }, 400, 'tts.unsupported_format', /mulaw is available at 8000 Hz, not 16000/],
    ['opus rate not permitted', { text: 'x', format: 'opus', sample_rate_hz: 44100 }, 400, 'tts.unsupported_format', /44100/],
    ['rate not an integer', { text: 'x', sample_rate_hz: 8000.5 }, 400, 'tts.unsupported_format', /sample_rate_hz must be integer/],
    ['unknown model', { text: 'x', model: 'turbo' }, 400, 'tts.invalid_request', /model must be one of studio, swift/],
    ['unknown output', { text: 'x', output: 'xml' }, 400, 'tts.invalid_request', /output must be one of audio, json/],
    ['unknown field', { text: 'x', colour: 'blue' }, 400, 'tts.invalid_request', /unknown field "colour"/],
    ['body an array', [1, 2], 400, 'tts.invalid_request', /JSON object/],
    ['markup not well-formed', { text: '<speak>Hallo <break></speak>' }, 400, 'tts.invalid_ssml', /line 1, column \d+|well-formed/],
    ['unsupported element', { text: '<speak><voice name="x">Hallo</voice></speak>' }, 400, 'tts.invalid_ssml', /<voice> is not supported/],
    ['audio element', { text: '<speak><audio src="a.mp3"/></speak>' }, 400, 'tts.invalid_ssml', /<audio> is refused/],
    ['phoneme element', { text: '<speak><phoneme ph="x">y</phoneme></speak>' }, 400, 'tts.invalid_ssml', /<sub alias/],
    ['bad break time', { text: '<speak>a<break time="soon"/></speak>' }, 400, 'tts.invalid_ssml', /500ms/],
    ['unknown say-as', { text: '<speak><say-as interpret-as="spell">x</say-as></speak>' }, 400, 'tts.invalid_ssml', /digits, telephone/],
    ['unknown lang', { text: '<speak><lang xml:lang="tlh">x</lang></speak>' }, 400, 'tts.invalid_ssml', /tlh/],
    [
      'say-as date that is no date',
      { text: '<speak><say-as interpret-as="date">morgen</say-as></speak>' },
      400,
      'tts.invalid_ssml',
      /<say-as interpret-as="date">: "morgen" is not a date/,
    ],
    [
      'an element inside say-as',
      { text: '<speak><say-as interpret-as="digits">1<break/>2</say-as></speak>' },
      400,
      'tts.invalid_ssml',
      /<say-as> may contain only text, not <break>/,
    ],
    [
      'a bad prosody rate',
      { text: '<speak><prosody rate="warp">x</prosody></speak>' },
      400,
      'tts.invalid_ssml',
      /<prosody rate="warp">: the value is not valid/,
    ],
    [
      'an unknown prosody attribute',
      { text: '<speak><prosody duration="2s">x</prosody></speak>' },
      400,
      'tts.invalid_ssml',
      /<prosody duration="…">: the attribute is not supported/,
    ],
    ['an empty prosody', { text: '<speak><prosody>x</prosody></speak>' }, 400, 'tts.invalid_ssml', /needs at least one of rate, pitch, volume/],
    [
      'an unknown emphasis level',
      { text: '<speak><emphasis level="max">x</emphasis></speak>' },
      400,
      'tts.invalid_ssml',
      /<emphasis level="max">: use one of strong/,
    ],
    ['a mark without a name', { text: '<speak>a<mark/>b</speak>' }, 400, 'tts.invalid_ssml', /<mark> needs a name/],
    ['a lang without xml:lang', { text: '<speak><lang>x</lang></speak>' }, 400, 'tts.invalid_ssml', /<lang> needs an xml:lang attribute/],
    ['a sub without alias', { text: '<speak><sub>WWW</sub></speak>' }, 400, 'tts.invalid_ssml', /<sub> needs a non-empty alias/],
    ['a break over ten seconds', { text: '<speak>a<break time="11s"/></speak>' }, 400, 'tts.invalid_ssml', /at most 10000 ms/],
    ['an element inside sub', { text: '<speak><sub alias="x">a<break/></sub></speak>' }, 400, 'tts.invalid_ssml', /<sub> may contain only text, not <break>/],
    ['a root other than speak', { text: '<speak/><voice/>' }, 400, 'tts.invalid_ssml', /well-formed|root/],
    ['doctype entity', { text: '<speak><!DOCTYPE x [<!ENTITY a "aaaa">]>&a;</speak>' }, 400, 'tts.invalid_ssml', /DOCTYPE|well-formed/],
    ['too deep', { text: `<speak>${'<p>'.repeat(40)}x${'</p>'.repeat(40)}</speak>` }, 400, 'tts.invalid_ssml', /nested more than 32/],
  ];
  for (const [name, body, status, code, detail] of cases) {
    it(`refuses ${name} with ${code}`, async () => {
      const error = expectError(await synth(body), status, code);
      expect(error.detail).toMatch(detail);
      expect(error.detail!.length).toBeLessThanOrEqual(400);
    });
  }

  it('refuses malformed JSON, a wrong content type and an oversized body in the envelope', async () => {
    expect(expectError(await synth('{"text": '), 400, 'tts.invalid_request').detail).toMatch(/not valid JSON/);
    const wrongType = await t.app.inject({
      method: 'POST',
      url: '/v1/tts',
      headers: { 'x-api-key': t.sandboxKey, 'content-type': 'text/plain' },
      payload: 'Hallo',
    });
    expect(expectError(wrongType, 400, 'tts.invalid_request').detail).toMatch(/application\/json/);
    const huge = await synth({ text: 'a'.repeat(70_000) });
    expectError(huge, 413, 'tts.text_too_long');
  });

  it('answers 503 tts.unavailable for a live key once the request is valid', async () => {
    expectError(await synth({ text: 'x', voice: 'hal' }, {}, t.liveKey), 400, 'tts.unknown_voice');
    const error = expectError(await synth({ text: 'Hallo' }, {}, t.liveKey), 503, 'tts.unavailable');
    expect(error.detail).toMatch(/sandbox keys/);
  });

  it('refuses the synthetic-mode header with a live key and odd values with any key', async () => {
    const live = await synth({ text: 'Hallo' }, { 'x-speech-sandbox-mode': 'synthetic' }, t.liveKey);
    expect(expectError(live, 400, 'tts.invalid_request').detail).toMatch(/only accepted with a sandbox key/);
    expect(live.headers['x-speech-environment']).toBe('live');
    expectError(await synth({ text: 'Hallo' }, { 'x-speech-sandbox-mode': 'real' }), 400, 'tts.invalid_request');
  });
});
