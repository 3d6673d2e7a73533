import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readOnnxMetadata } from '../../engine/sherpa/onnx-metadata.js';
import { SherpaTtsEngine } from '../../engine/sherpa/sherpa-tts.js';
import { findVoiceModels, VoiceModelError } from '../../engine/sherpa/voice-models.js';
import { LANGUAGES } from '../../src/catalog/languages.js';
import { VOICES } from '../../src/catalog/voices.js';
import { buildTinyVitsOnnx, TINY_VITS_HOP, TINY_VITS_SAMPLE_RATE, writeTinyVitsModel } from '../helpers/tiny-vits.js';
import { collect, joinAudio, textDocument, ttsConformance } from './tts-conformance.js';

const voices = VOICES.map((v) => v.id);
const languages = LANGUAGES.map((l) => l.code);

let root: string;
let engine: SherpaTtsEngine;
beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-voices-'));
  // A tiny model the test writes itself (no real voice can be downloaded here), installed for
  // anna in German (serving every German region) and Swiss French.
  await writeTinyVitsModel(path.join(root, 'good', 'anna', 'de'));
  await writeTinyVitsModel(path.join(root, 'good', 'anna', 'fr-CH'));
  engine = await SherpaTtsEngine.load(await findVoiceModels(path.join(root, 'good'), voices, languages), 1);
});
afterAll(async () => fs.rm(root, { recursive: true, force: true }));

ttsConformance('sherpa-onnx with a VITS model', () => engine);

async function refusal(dir: string): Promise<string> {
  try {
    await SherpaTtsEngine.load(await findVoiceModels(dir, voices, languages), 1);
  } catch (error) {
    expect(error).toBeInstanceOf(VoiceModelError);
    return (error as Error).message;
  }
  throw new Error('expected the voices folder to be refused');
}

describe('neural voices folder', () => {
  it('finds models by voice and language and serves regions from a base language', () => {
    expect(engine.installed).toEqual([
      { voice: 'anna', language: 'de' },
      { voice: 'anna', language: 'fr-CH' },
    ]);
    expect(engine.serves('anna', textDocument('x', 'de-CH', 'zurich'))).toBe(true);
    expect(engine.serves('anna', textDocument('x', 'fr-CH'))).toBe(true);
    expect(engine.serves('anna', textDocument('x', 'it-CH'))).toBe(false);
    expect(engine.serves('jonas', textDocument('x', 'de-CH'))).toBe(false);
  });

  it('renders with the model: length follows the text and the speed', async () => {
    const options = { voice: 'anna', speed: 1, style: null, sampleRateHz: 16000 };
    const short = joinAudio(await collect(engine, textDocument('hallo', 'de-CH'), options));
    const long = joinAudio(await collect(engine, textDocument('hallo und willkommen', 'de-CH'), options));
    const fast = joinAudio(await collect(engine, textDocument('hallo', 'de-CH'), { ...options, speed: 2 }));
    // The test model makes 256 samples per token at speed 1 (one start token plus the letters).
    expect(short.length).toBe(6 * TINY_VITS_HOP);
    expect(long.length).toBeGreaterThan(short.length * 3);
    expect(fast.length).toBe(short.length / 2);
  });

  it('treats a stretch the model cannot say as silence, not as a failure', async () => {
    const events = await collect(engine, textDocument('€€€', 'de-CH'), { voice: 'anna', speed: 1, style: null, sampleRateHz: 16000 });
    expect(events[events.length - 1]).toEqual({ type: 'end', durationSeconds: 0 });
  });

  it('refuses a folder layout it does not know, naming the path', async () => {
    await fs.mkdir(path.join(root, 'typo', 'ana', 'de'), { recursive: true });
    expect(await refusal(path.join(root, 'typo'))).toMatch(/typo\/ana: "ana" is not a catalog voice/);
    await fs.mkdir(path.join(root, 'lang', 'anna', 'klingon'), { recursive: true });
    expect(await refusal(path.join(root, 'lang'))).toMatch(/anna\/klingon: "klingon" is not a catalog language/);
    await fs.mkdir(path.join(root, 'empty', 'anna', 'de'), { recursive: true });
    expect(await refusal(path.join(root, 'empty'))).toMatch(/anna\/de: model.onnx is missing/);
    await writeTinyVitsModel(path.join(root, 'notokens', 'anna', 'de'));
    await fs.rm(path.join(root, 'notokens', 'anna', 'de', 'tokens.txt'));
    expect(await refusal(path.join(root, 'notokens'))).toMatch(/tokens.txt is missing/);
    expect(await refusal(path.join(root, 'nowhere'))).toMatch(/cannot be read/);
  });

  it('refuses corrupt models and models sherpa would end the process for', async () => {
    const corrupt = path.join(root, 'corrupt', 'anna', 'de');
    await writeTinyVitsModel(corrupt);
    await fs.writeFile(path.join(corrupt, 'model.onnx'), Buffer.from('this is not a model at all, just text'));
    expect(await refusal(path.join(root, 'corrupt'))).toMatch(/anna\/de: (model.onnx is not an ONNX model|the model could not be loaded)/);
    const garbage = path.join(root, 'garbage', 'anna', 'de');
    await writeTinyVitsModel(garbage);
    await fs.writeFile(path.join(garbage, 'model.onnx'), Buffer.concat([buildTinyVitsOnnx().subarray(0, 300)]));
    expect(await refusal(path.join(root, 'garbage'))).toMatch(/anna\/de: /);
    const bare = path.join(root, 'bare', 'anna', 'de');
    await writeTinyVitsModel(bare, { omitMetadata: ['sample_rate', 'language'] });
    expect(await refusal(path.join(root, 'bare'))).toMatch(/lacks the VITS metadata sample_rate, language/);
    await writeTinyVitsModel(path.join(root, 'piper', 'anna', 'de'), { comment: 'piper' });
    expect(await refusal(path.join(root, 'piper'))).toMatch(/anna\/de: this model phonemises with eSpeak: put its espeak-ng-data/);
  });

  it('reads the sample rate the model declares', () => {
    expect(readOnnxMetadata(buildTinyVitsOnnx({ sampleRate: 22050 })).get('sample_rate')).toBe('22050');
    expect(engine.capabilities.sampleRateHz).toBe(TINY_VITS_SAMPLE_RATE);
  });
});
