/**
 * Recognition models from the models folder serve `POST /v1/stt` beside the embedded English
 * recogniser. The Vosk model is the tiny hand-made one (every loud stretch reads "hello"):
 * no real German model can be downloaded on the test machines.
 */
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { concatPcm } from '../../src/audio/pcm.js';
import { ConfigError, loadConfig } from '../../src/config.js';
import { startEngines } from '../../src/server.js';
import { customWav } from '../helpers/audio-fixtures.js';
import { multipartBody } from '../helpers/multipart.js';
import { silencePcm, SpeechAudio } from '../helpers/speech-audio.js';
import { createTestApp, type TestApp } from '../helpers/test-app.js';
import { writeTinyNemoCtcModel } from '../helpers/tiny-nemo-ctc.js';
import { writeTinySileroVad } from '../helpers/tiny-silero-vad.js';
import { writeTinyWhisperModel } from '../helpers/tiny-whisper.js';
import { writeTinyVoskModel } from '../helpers/tiny-vosk-model.js';
import { connect, opened } from '../helpers/ws-client.js';

let dir: string;
let t: TestApp;
let speech: SpeechAudio;

async function installVosk(modelsDir: string, name: string, manifest: object): Promise<string> {
  const folder = path.join(modelsDir, name);
  await writeTinyVoskModel(folder);
  await fs.writeFile(path.join(folder, 'sprachrohr-model.json'), JSON.stringify(manifest));
  return folder;
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-installed-'));
  await installVosk(path.join(dir, 'models'), 'tiny-de', { engine: 'vosk', languages: ['de'] });
  // British English from an installed model; the embedded recogniser keeps the other English codes.
  await writeTinyNemoCtcModel(path.join(dir, 'models', 'tiny-ctc'));
  await fs.writeFile(
    path.join(dir, 'models', 'tiny-ctc', 'sprachrohr-model.json'),
    JSON.stringify({ engine: 'sherpa-onnx', type: 'nemo-ctc', languages: ['en-GB'], paths: { model: 'model.onnx', tokens: 'tokens.txt' } }),
  );
  // Silero finds speech for every recogniser's 16 kHz streams.
  await writeTinySileroVad(path.join(dir, 'models', 'silero'));
  await fs.writeFile(
    path.join(dir, 'models', 'silero', 'sprachrohr-model.json'),
    JSON.stringify({ engine: 'sherpa-onnx', type: 'silero-vad', paths: { model: 'silero_vad.onnx' } }),
  );
  // A multilingual Whisper model picks among candidates (the tiny one hears eSpeak as German).
  await writeTinyWhisperModel(path.join(dir, 'models', 'lid'));
  await fs.writeFile(
    path.join(dir, 'models', 'lid', 'sprachrohr-model.json'),
    JSON.stringify({ engine: 'sherpa-onnx', type: 'language-id', paths: { encoder: 'tiny-encoder.onnx', decoder: 'tiny-decoder.onnx' } }),
  );
  t = await createTestApp({ SPRACHROHR_STT_ENGINE: 'pocketsphinx', SPRACHROHR_MODELS_DIR: path.join(dir, 'models') });
  speech = await SpeechAudio.start();
}, 60_000);
afterAll(async () => {
  await t?.close();
  await speech?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

function wavOf(pcm: Int16Array, rateHz: number): Buffer {
  return customWav({ tag: 1, channels: 1, rate: rateHz, bits: 16, data: Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength) });
}

async function recognise(fields: Record<string, string>, bytes: Uint8Array) {
  const { payload, headers } = multipartBody(fields, { bytes, name: 'audio' });
  return t.app.inject({ method: 'POST', url: '/v1/stt', headers: { ...headers, 'x-api-key': t.liveKey }, payload });
}

describe('installed recognition models', () => {
  it('recognise their languages through POST /v1/stt, telephone audio included', async () => {
    const spoken = concatPcm([silencePcm(0.4, 16000), await speech.speak('Grüezi, wie kann ich helfen?', 16000, 'de'), silencePcm(0.8, 16000)]);
    for (const lang of ['de-CH', 'de', 'de-AT']) {
      const response = await recognise({ lang }, wavOf(spoken, 16000));
      expect(response.statusCode, response.body).toBe(200);
      const transcript = response.json();
      expect(transcript.lang).toBe(lang);
      expect(transcript.text).toMatch(/^hello( hello)*$/);
      expect(transcript.words[0].start).toBeGreaterThan(0.3);
    }
    // 8 kHz µ-law is resampled to the model's 16 kHz before Vosk hears it.
    const mulaw = customWav({
      tag: 7,
      channels: 1,
      rate: 8000,
      bits: 8,
      data: Buffer.from(Array.from({ length: 16000 }, (_, i) => (i > 4000 && i < 12000 ? (i % 16 < 8 ? 0x10 : 0x90) : 0xff))),
    });
    const telephone = await recognise({ lang: 'de-CH' }, mulaw);
    expect(telephone.statusCode, telephone.body).toBe(200);
    expect(telephone.json()).toMatchObject({ lang: 'de-CH', duration_s: 2 });
  });

  it('take their language over from the embedded recogniser', async () => {
    const spoken = concatPcm([silencePcm(0.4, 16000), await speech.speak('Opening hours', 16000), silencePcm(0.8, 16000)]);
    const british = await recognise({ lang: 'en-GB' }, wavOf(spoken, 16000));
    expect(british.statusCode, british.body).toBe(200);
    expect(british.json().text).toMatch(/^hello( hello)*$/);
    const general = await recognise({ lang: 'en', vocabulary: 'opening hours, pay my bill' }, wavOf(spoken, 16000));
    expect(general.json().text).toBe('opening hours');
  });

  it('let the language identifier choose among candidates, and fall back when it hears none of them', async () => {
    const german = concatPcm([silencePcm(0.4, 16000), await speech.speak('Guten Tag, ich habe eine Frage.', 16000, 'de'), silencePcm(0.8, 16000)]);
    const detected = await recognise({ lang: 'en,de-CH' }, wavOf(german, 16000));
    expect(detected.statusCode, detected.body).toBe(200);
    expect(detected.json()).toMatchObject({ lang: 'de-CH', text: expect.stringMatching(/^hello( hello)*$/) });
    // It hears German, which neither candidate is: the recognisers' confidence decides, and the
    // embedded recogniser (which reports one) wins over the CTC model (which reports none).
    const english = await recognise(
      { lang: 'en-GB,en', vocabulary: 'opening hours, pay my bill' },
      wavOf(concatPcm([silencePcm(0.4, 16000), await speech.speak('Opening hours', 16000), silencePcm(0.8, 16000)]), 16000),
    );
    expect(english.statusCode, english.body).toBe(200);
    expect(english.json()).toMatchObject({ lang: 'en', text: 'opening hours' });
  });

  it('stream through /v1/stt/stream with several candidates, each final from the recogniser most sure of it', async () => {
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const url = `ws://127.0.0.1:${(t.app.server.address() as AddressInfo).port}/v1/stt/stream`;
    const socket = opened(await connect(url, { headers: { 'X-API-Key': t.liveKey } }));
    socket.send({ type: 'config', lang: 'en,de-CH' });
    await socket.next('session.ready');
    const german = concatPcm([silencePcm(0.3, 16000), await speech.speak('Guten Tag.', 16000, 'de'), silencePcm(1, 16000)]);
    socket.socket.send(Buffer.from(german.buffer, german.byteOffset, german.byteLength));
    socket.send({ type: 'audio.end' });
    await socket.next('session.complete', 20_000);
    const finals = socket.frames.filter((frame) => frame['type'] === 'transcript.final');
    expect(finals.length).toBeGreaterThanOrEqual(1);
    // The tiny Vosk model is sure of every loud stretch (confidence 1); pocketsphinx is not.
    expect(finals[0]).toMatchObject({ lang: 'de-CH', text: expect.stringMatching(/^hello( hello)*$/) });
  });

  it('appear in capabilities beside the embedded recogniser', async () => {
    const capabilities = (await t.app.inject({ url: '/v1/capabilities', headers: { 'x-api-key': t.liveKey } })).json();
    const engines = capabilities.speech_to_text.engines;
    expect(engines).toEqual([
      { id: 'sherpa-onnx:tiny-ctc', languages: ['en-GB'], sample_rates_hz: [16000], vocabulary: 'none' },
      { id: 'vosk:tiny-de', languages: ['de-CH', 'de', 'de-AT'], sample_rates_hz: [16000], vocabulary: 'none' },
      { id: 'pocketsphinx', languages: ['en', 'en-GB', 'en-IN'], sample_rates_hz: [16000], vocabulary: 'grammar' },
    ]);
    expect(capabilities.speech_to_text.voice_activity).toBe('silero');
    expect(capabilities.speech_to_text.language_detection).toEqual({ method: 'identifier', model: 'sherpa-onnx:lid' });
    const codes = capabilities.speech_to_text.languages.map((language: { code: string }) => language.code);
    expect(codes).toEqual(expect.arrayContaining(['de-CH', 'de', 'de-AT', 'en', 'en-GB']));
    expect(codes).not.toContain('fr-CH');
  });

  it('stop the start with the folder named when one cannot be used', async () => {
    const cases: Array<[string, (modelsDir: string) => Promise<void>, RegExp]> = [
      ['no description', async (m) => void (await writeTinyVoskModel(path.join(m, 'bare'))), /bare: sprachrohr-model.json is missing/],
      [
        'unknown language',
        async (m) => void (await installVosk(m, 'klingon', { engine: 'vosk', languages: ['tlh'] })),
        /klingon: none of its languages \(tlh\) is a catalog language/,
      ],
      [
        'missing part',
        async (m) => fs.rm(path.join(await installVosk(m, 'partial', { engine: 'vosk', languages: ['de'] }), 'conf/model.conf')),
        /partial is not a Vosk model: conf\/model.conf is missing/,
      ],
      [
        'damaged file',
        async (m) => fs.writeFile(path.join(await installVosk(m, 'damaged', { engine: 'vosk', languages: ['de'] }), 'am/final.mdl'), 'x'),
        /damaged: Vosk could not load the model/,
      ],
      [
        'crashes when run',
        async (m) => {
          await writeTinySileroVad(path.join(m, 'crashing'), { failAtRun: true });
          await fs.writeFile(
            path.join(m, 'crashing', 'sprachrohr-model.json'),
            JSON.stringify({ engine: 'sherpa-onnx', type: 'silero-vad', paths: { model: 'silero_vad.onnx' } }),
          );
        },
        // Tried in a separate process first: onnxruntime's exception ends that one, not the service.
        /crashing: loading it and decoding a second of audio ended the process \(signal SIGABRT\): .*Ort::Exception/,
      ],
      [
        'bad JSON',
        async (m) =>
          fs.writeFile(path.join(await installVosk(m, 'typo', { engine: 'vosk', languages: ['de'] }), 'sprachrohr-model.json'), '{"engine": "vosk",'),
        /typo\/sprachrohr-model.json: not valid JSON/,
      ],
    ];
    for (const [name, install, message] of cases) {
      const modelsDir = path.join(dir, `broken-${name.replace(/\W/g, '-')}`);
      await fs.mkdir(modelsDir, { recursive: true });
      await install(modelsDir);
      const config = loadConfig({
        SPRACHROHR_KEY_SECRET: 'x'.repeat(32),
        SPRACHROHR_TTS_ENGINE: 'none',
        SPRACHROHR_STT_ENGINE: 'none',
        SPRACHROHR_STT_WORKERS: '1',
        SPRACHROHR_MODELS_DIR: modelsDir,
      });
      const started = startEngines(config);
      await expect(started, name).rejects.toThrow(ConfigError);
      await expect(started, name).rejects.toThrow(message);
      await expect(started, name).rejects.toThrow(/^SPRACHROHR_MODELS_DIR: /);
    }
  });
});
