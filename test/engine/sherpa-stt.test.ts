/**
 * The sherpa-onnx recognition adapter against the real sherpa-onnx runtime. No recognition
 * model can be downloaded on the test machines, so the model is a tiny hand-made NeMo CTC one
 * (test/helpers/tiny-nemo-ctc.ts) that reads every loud stretch of audio as "hello"; what is
 * tested is loading, decoding, word times, and the checks that keep a bad model from ending
 * the process.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkSherpaModel, SherpaModelError } from '../../engine/sherpa/sherpa-model-check.js';
import { SherpaSttEngine } from '../../engine/sherpa/sherpa-stt-engine.js';
import { resultWords } from '../../engine/sherpa/sherpa-words.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { FLOAT, node, onnxModel, valueInfo } from '../helpers/onnx-writer.js';
import { loudSpan, silencePcm } from '../helpers/speech-audio.js';
import { TINY_CTC_TOKENS, writeTinyNemoCtcModel } from '../helpers/tiny-nemo-ctc.js';
import { recognise, sttConformance } from './stt-conformance.js';
import { sherpaFixture } from '../helpers/sherpa-fixture.js';

const RATE = 16000;

function ctcOptions(folder: string) {
  return {
    id: 'sherpa-onnx:tiny',
    type: 'nemo-ctc' as const,
    folder,
    paths: { model: 'model.onnx', tokens: 'tokens.txt' },
    languages: ['en', 'en-GB'],
    modelLanguage: 'en',
    workers: 1,
  };
}

/** A one-node ONNX model with the given metadata (for the checks that read only metadata). */
async function metadataOnlyModel(file: string, metadata: Record<string, string>): Promise<void> {
  await fs.writeFile(
    file,
    onnxModel({
      graphName: 'identity',
      nodes: [node('Identity', ['x'], ['y'])],
      initializers: [],
      inputs: [valueInfo('x', FLOAT, [1])],
      outputs: [valueInfo('y', FLOAT, [1])],
      metadata,
    }),
  );
}

const sherpa = sherpaFixture('sprachrohr-sherpa-stt-', async (dir) => {
  await writeTinyNemoCtcModel(path.join(dir, 'ctc'));
  return SherpaSttEngine.start(ctcOptions(path.join(dir, 'ctc')));
});

sttConformance({
  name: 'sherpa-onnx offline CTC (tiny hand-made model)',
  engine: () => sherpa.engine,
  language: 'en',
  speech: (rateHz) => sherpa.speech.speak('Speak to an agent', rateHz),
});

describe('sherpa-onnx recognises through onnxruntime', () => {
  it('says what it can do: 16 kHz, a final per utterance (no partials from an offline model)', () => {
    expect(sherpa.engine.capabilities).toEqual({ languages: ['en', 'en-GB'], sampleRatesHz: [16000], partials: false, vocabulary: 'none' });
  });

  it('places the words of each utterance where the sherpa.speech is', async () => {
    const first = await sherpa.speech.speak('Hello.', RATE);
    const second = await sherpa.speech.speak('Goodbye.', RATE);
    const audio = concatPcm([silencePcm(0.6, RATE), first, silencePcm(1.5, RATE), second, silencePcm(1, RATE)]);
    const events = await recognise(sherpa.engine, { language: 'en', vocabulary: [], sampleRateHz: RATE }, audio);
    expect(events.every((event) => event.type === 'final')).toBe(true);
    expect(events).toHaveLength(2);
    const secondAt = Math.round((0.6 + first.length / RATE + 1.5) * RATE);
    const spans = [loudSpan(audio, RATE, 0, secondAt, 100), loudSpan(audio, RATE, secondAt, audio.length, 100)];
    events.forEach((event, index) => {
      expect(event.text).toMatch(/^hello( hello)*$/);
      expect(event.words[0]!.start).toBeGreaterThan(spans[index]!.start - 0.1);
      expect(event.words[0]!.start).toBeLessThan(spans[index]!.start + 0.15);
      expect(event.words.at(-1)!.end).toBeLessThan(spans[index]!.end + 0.4);
    });
  });
});

describe('sherpa-onnx results as words', () => {
  it('joins BPE pieces into words with times and confidences, in lower case', () => {
    const result = resultWords(
      { text: ' HELLO WORLD', tokens: ['▁HE', 'LLO', ' WOR', 'LD'], timestamps: [0.4, 0.52, 0.8, 0.9], logProbabilities: [-0.1, -0.3, -0.05, -0.05] },
      2,
    );
    expect(result.text).toBe('hello world');
    expect(result.words).toEqual([
      { w: 'hello', start: 0.4, end: 0.8, conf: Math.round(Math.exp(-0.2) * 1000) / 1000 },
      { w: 'world', start: 0.8, end: 1.2, conf: Math.round(Math.exp(-0.05) * 1000) / 1000 },
    ]);
  });

  it('spreads words without token times over the utterance, and keeps mixed case as given', () => {
    const result = resultWords({ text: ' Grüezi mitenand', tokens: [], timestamps: [] }, 1.2);
    expect(result.words).toEqual([
      { w: 'Grüezi', start: 0, end: 0.6, conf: 0 },
      { w: 'mitenand', start: 0.6, end: 1.2, conf: 0 },
    ]);
    expect(resultWords({ text: '', tokens: [], timestamps: [] }, 1)).toEqual({ text: '', words: [] });
  });
});

describe('sherpa-onnx models that would end the process are refused first', () => {
  it('names the missing metadata, a missing blank, a bad token list and a file that is not ONNX', async () => {
    const cases: Array<[string, (folder: string) => Promise<void>, RegExp]> = [
      [
        'no-vocab-size',
        (f) => writeTinyNemoCtcModel(f, { omitMetadata: ['vocab_size'] }).then(() => undefined),
        /lacks the metadata sherpa-onnx needs for a nemo-ctc model: vocab_size/,
      ],
      [
        'no-blank',
        async (f) => fs.writeFile(path.join(f, 'tokens.txt'), TINY_CTC_TOKENS.replace('<blk>', 'blank')),
        /has no blank token \(<blk>, <eps>, <blank>\)/,
      ],
      ['bad-tokens', async (f) => fs.writeFile(path.join(f, 'tokens.txt'), 'a 0\nthis is not a token line\n'), /tokens.txt: line 2 is not "<symbol> <id>"/],
      ['empty-tokens', async (f) => fs.writeFile(path.join(f, 'tokens.txt'), ''), /tokens.txt is empty/],
      ['not-onnx', async (f) => fs.writeFile(path.join(f, 'model.onnx'), '<html>404</html>'), /model.onnx is not an ONNX model/],
      [
        'odd-normalisation',
        async (f) => metadataOnlyModel(path.join(f, 'model.onnx'), { vocab_size: '3', subsampling_factor: '1', normalize_type: 'all_features' }),
        /normalize_type "all_features" is not one sherpa-onnx applies/,
      ],
    ];
    for (const [name, change, message] of cases) {
      const folder = path.join(sherpa.dir, name);
      await writeTinyNemoCtcModel(folder);
      await change(folder);
      await expect(SherpaSttEngine.start(ctcOptions(folder)), name).rejects.toThrow(SherpaModelError);
      await expect(SherpaSttEngine.start(ctcOptions(folder)), name).rejects.toThrow(message);
    }
  });

  it('checks Whisper encoders by their metadata', async () => {
    const folder = path.join(sherpa.dir, 'whisper-metadata');
    await fs.mkdir(folder, { recursive: true });
    await fs.writeFile(path.join(folder, 'tokens.txt'), 'aGVsbG8= 0\n');
    const files = { encoder: path.join(folder, 'encoder.onnx'), decoder: path.join(folder, 'decoder.onnx'), tokens: path.join(folder, 'tokens.txt') };
    await metadataOnlyModel(files.encoder, { model_type: 'whisper-tiny' });
    await metadataOnlyModel(files.decoder, {});
    await expect(checkSherpaModel('whisper', files)).rejects.toThrow(/lacks the metadata sherpa-onnx needs for a whisper encoder: n_mels, n_text_layer/);
  });
});
