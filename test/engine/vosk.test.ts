/**
 * The Vosk adapter against the real libvosk (from the `vosk` npm package). No real Kaldi
 * model can be downloaded on the test machines, so the models are tiny hand-made ones
 * (test/helpers/tiny-vosk-model.ts) that read every loud stretch of audio as "hello"; what is
 * tested is loading, streaming, word times, grammars and every way a folder can be wrong.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { VoskEngine } from '../../engine/vosk/vosk-engine.js';
import { readVoskModelLayout, VoskModelError } from '../../engine/vosk/vosk-model.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { silencePcm, SpeechAudio, loudSpan } from '../helpers/speech-audio.js';
import { writeTinyVoskModel } from '../helpers/tiny-vosk-model.js';
import { recognise, sttConformance } from './stt-conformance.js';

const RATE = 16000;
let dir: string;
let staticModel: string;
let dynamicModel: string;
let engine: VoskEngine;
let grammarEngine: VoskEngine;
let speech: SpeechAudio;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-vosk-'));
  staticModel = path.join(dir, 'static');
  dynamicModel = path.join(dir, 'dynamic');
  await writeTinyVoskModel(staticModel);
  await writeTinyVoskModel(dynamicModel, { dynamicGraph: true });
  engine = await VoskEngine.start({ folder: staticModel, id: 'vosk:tiny', languages: ['de', 'de-CH'], workers: 1 });
  grammarEngine = await VoskEngine.start({ folder: dynamicModel, id: 'vosk:tiny-dynamic', languages: ['de-CH'], workers: 1, maxStreamsPerWorker: 2 });
  speech = await SpeechAudio.start();
}, 60_000);
afterAll(async () => {
  await engine?.close();
  await grammarEngine?.close();
  await speech?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

sttConformance({
  name: 'Vosk (tiny hand-made model)',
  engine: () => engine,
  language: 'de-CH',
  speech: (rateHz) => speech.speak('Guten Tag, wie kann ich helfen?', rateHz, 'de'),
});

describe('Vosk recognises through Kaldi', () => {
  it('says what it can do: the model rate, partials, a grammar only with a lookahead graph', () => {
    expect(engine.capabilities).toEqual({ languages: ['de', 'de-CH'], sampleRatesHz: [16000], partials: true, vocabulary: 'none' });
    expect(grammarEngine.capabilities.vocabulary).toBe('grammar');
  });

  it('places words where the speech is, in each utterance of a stream', async () => {
    const first = await speech.speak('Guten Tag.', RATE, 'de');
    const second = await speech.speak('Auf Wiedersehen.', RATE, 'de');
    const audio = concatPcm([silencePcm(0.5, RATE), first, silencePcm(1.5, RATE), second, silencePcm(1, RATE)]);
    const events = await recognise(engine, { language: 'de-CH', vocabulary: [], sampleRateHz: RATE }, audio);
    const finals = events.filter((event) => event.type === 'final');
    expect(finals).toHaveLength(2);
    const secondAt = 0.5 + first.length / RATE + 1.5;
    // The tiny model hears anything above about -48 dBFS (an RMS near 130) as speech.
    const spans = [loudSpan(audio, RATE, 0, Math.round(secondAt * RATE), 130), loudSpan(audio, RATE, Math.round(secondAt * RATE), audio.length, 130)];
    finals.forEach((final, index) => {
      if (final.type !== 'final') return;
      expect(final.words.length).toBeGreaterThanOrEqual(1);
      expect(final.words.every((word) => word.w === 'hello')).toBe(true);
      // Word times count from the start of the stream, whatever Kaldi counted from.
      expect(final.words[0]!.start).toBeGreaterThan(spans[index]!.start - 0.1);
      expect(final.words[0]!.start).toBeLessThan(spans[index]!.start + 0.15);
      expect(final.words.at(-1)!.end).toBeGreaterThan(spans[index]!.end - 0.15);
      expect(final.words.at(-1)!.end).toBeLessThan(spans[index]!.end + 0.1);
    });
    // Partials came while the caller was speaking.
    expect(events.findIndex((event) => event.type === 'partial')).toBeLessThan(events.findIndex((event) => event.type === 'final'));
  });

  it('listens only for the vocabulary on a grammar-capable model, and ignores words it lacks', async () => {
    const audio = concatPcm([silencePcm(0.3, RATE), await speech.speak('Ja, bitte.', RATE, 'de'), silencePcm(1, RATE)]);
    const options = { language: 'de-CH', sampleRateHz: RATE };
    const finalText = async (vocabulary: string[]) =>
      (await recognise(grammarEngine, { ...options, vocabulary }, audio))
        .filter((event) => event.type === 'final')
        .map((event) => event.text)
        .join(' | ');
    expect(await finalText(['World'])).toMatch(/^world( world)*$/);
    // No phrase the model knows: open vocabulary, not an empty grammar (which Kaldi cannot take).
    expect(await finalText(['Grüezi mitenand'])).toMatch(/^hello( hello)*$/);
    expect(await finalText([])).toMatch(/^hello( hello)*$/);
  });
});

describe('Vosk model folders that cannot be used', () => {
  async function brokenCopy(name: string, change: (folder: string) => Promise<void>): Promise<string> {
    const folder = path.join(dir, name);
    await writeTinyVoskModel(folder);
    await change(folder);
    return folder;
  }

  it('names the missing part before Kaldi sees the folder', async () => {
    for (const part of ['am/final.mdl', 'conf/mfcc.conf', 'conf/model.conf', 'graph/words.txt', 'graph/HCLG.fst']) {
      const folder = await brokenCopy(`missing-${part.replace(/\W/g, '-')}`, (f) => fs.rm(path.join(f, part)));
      await expect(readVoskModelLayout(folder), part).rejects.toThrow(VoskModelError);
      await expect(VoskEngine.start({ folder, id: 'vosk:x', languages: ['de'], workers: 1 }), part).rejects.toThrow(
        part === 'graph/HCLG.fst' ? /neither graph\/HCLG.fst nor/ : `${part} is missing`,
      );
    }
    const ivector = await brokenCopy('half-ivector', async (f) => {
      await fs.mkdir(path.join(f, 'ivector'));
      await fs.writeFile(path.join(f, 'ivector/final.ie'), '');
    });
    await expect(readVoskModelLayout(ivector)).rejects.toThrow('the i-vector extractor is incomplete (ivector/final.dubm is missing)');
    await expect(readVoskModelLayout(path.join(dir, 'no-such-folder'))).rejects.toThrow('am/final.mdl is missing');
  });

  it('reads the model rate and refuses one Vosk cannot use', async () => {
    const telephone = path.join(dir, 'telephone');
    await writeTinyVoskModel(telephone, { sampleRate: 8000 });
    expect((await readVoskModelLayout(telephone)).sampleRateHz).toBe(8000);
    const odd = await brokenCopy('odd-rate', (f) => fs.writeFile(path.join(f, 'conf/mfcc.conf'), '--sample-frequency=800\n'));
    await expect(readVoskModelLayout(odd)).rejects.toThrow('sets a sample frequency Vosk cannot use (800)');
  });

  it('fails the start, not the process, when Kaldi refuses a damaged file', async () => {
    const cases: Array<[string, (folder: string) => Promise<void>]> = [
      ['garbage-model', (f) => fs.writeFile(path.join(f, 'am/final.mdl'), 'not a Kaldi model')],
      ['garbage-graph', (f) => fs.writeFile(path.join(f, 'graph/HCLG.fst'), Buffer.alloc(100, 7))],
      ['garbage-words', (f) => fs.writeFile(path.join(f, 'graph/words.txt'), 'nonsense')],
      ['unknown-option', (f) => fs.writeFile(path.join(f, 'conf/model.conf'), '--no-such-option=3\n')],
    ];
    for (const [name, change] of cases) {
      const folder = await brokenCopy(name, change);
      await expect(VoskEngine.start({ folder, id: 'vosk:x', languages: ['de'], workers: 1 }), name).rejects.toThrow(
        `Vosk could not load the model in ${folder}`,
      );
    }
  });

  it('says how to install libvosk when the library is missing', async () => {
    await expect(
      VoskEngine.start({ folder: staticModel, id: 'vosk:x', languages: ['de'], workers: 1, libraryPath: path.join(dir, 'libvosk.so') }),
    ).rejects.toThrow(/libvosk cannot be loaded \(npm install vosk --ignore-scripts\)/);
    // The library really is where the adapter looks for it.
    expect(readFileSync(new URL('../../node_modules/vosk/lib/linux-x86_64/libvosk.so', import.meta.url)).subarray(0, 4)).toEqual(
      Buffer.from([0x7f, 0x45, 0x4c, 0x46]),
    );
  });
});
