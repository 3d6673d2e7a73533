/**
 * A streaming sherpa-onnx transducer against the real runtime, with a tiny hand-made LSTM
 * transducer (test/helpers/tiny-streaming.ts: every loud stretch reads "HELLO" as the BPE
 * pieces ▁HE + LLO, decoded 80 ms at a time); real streaming models cannot be downloaded on the
 * test machines.
 */
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { SherpaModelError } from '../../engine/sherpa/sherpa-model-check.js';
import { SherpaSttEngine, type SherpaSttEngineOptions } from '../../engine/sherpa/sherpa-stt-engine.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { loudSpan, silencePcm } from '../helpers/speech-audio.js';
import { writeTinyTransducer, type TinyStreamingOptions } from '../helpers/tiny-streaming.js';
import { recognise, sttConformance } from './stt-conformance.js';
import { sherpaFixture } from '../helpers/sherpa-fixture.js';

const RATE = 16000;

async function transducerOptions(name: string, options: TinyStreamingOptions = {}): Promise<SherpaSttEngineOptions> {
  const folder = path.join(sherpa.dir, name);
  await writeTinyTransducer(folder, options);
  return {
    id: 'sherpa-onnx:tiny-transducer',
    type: 'transducer',
    folder,
    paths: { encoder: 'encoder.onnx', decoder: 'decoder.onnx', joiner: 'joiner.onnx', tokens: 'tokens.txt' },
    languages: ['en'],
    modelLanguage: 'en',
    workers: 1,
  };
}

const sherpa = sherpaFixture('sprachrohr-streaming-', async () => SherpaSttEngine.start(await transducerOptions('good')));

sttConformance({
  name: 'sherpa-onnx streaming transducer (tiny hand-made model)',
  engine: () => sherpa.engine,
  language: 'en',
  speech: (rateHz) => sherpa.speech.speak('Hello there.', rateHz),
});

describe('a streaming transducer', () => {
  it('says it gives partials', () => {
    expect(sherpa.engine.capabilities).toEqual({ languages: ['en'], sampleRatesHz: [16000], partials: true, vocabulary: 'none' });
  });

  it('gives partials while the caller speaks, and joins BPE pieces into lower-case words with times and confidences', async () => {
    const said = await sherpa.speech.speak('Hello.', RATE);
    const audio = concatPcm([silencePcm(0.5, RATE), said, silencePcm(1, RATE)]);
    const events = await recognise(sherpa.engine, { language: 'en', vocabulary: [], sampleRateHz: RATE }, audio);
    const partials = events.filter((event) => event.type === 'partial');
    const final = events.find((event) => event.type === 'final');
    expect(partials.length).toBeGreaterThanOrEqual(1);
    expect(partials[0]!.text).toMatch(/^hello/);
    // The first partial came before the sherpa.speech was over.
    expect(partials[0]!.audioSeconds).toBeLessThan(0.5 + said.length / RATE);
    expect(final?.text).toMatch(/^hello( hello)*$/);
    const span = loudSpan(audio, RATE, 0, audio.length, 100);
    const first = final!.words[0]!;
    // Timestamps snap to the model's 80 ms chunks.
    expect(first.start).toBeGreaterThan(span.start - 0.1);
    expect(first.start).toBeLessThan(span.start + 0.2);
    expect(first.conf).toBeGreaterThan(0.99);
    expect(first.conf).toBeLessThanOrEqual(1);
  });
});

describe('streaming transducers sherpa-onnx would end the process over', () => {
  it('are refused at start with the file and the missing metadata named', async () => {
    const cases: Array<[string, TinyStreamingOptions, RegExp]> = [
      [
        'no-chunk-length',
        { omitMetadata: { encoder: ['decode_chunk_len'] } },
        /encoder.onnx lacks the metadata sherpa-onnx needs for a lstm transducer encoder: decode_chunk_len/,
      ],
      [
        'no-model-type',
        { omitMetadata: { encoder: ['model_type'] } },
        /encoder.onnx lacks the metadata sherpa-onnx needs for a transducer encoder: model_type/,
      ],
      [
        'no-context-size',
        { omitMetadata: { decoder: ['context_size'] } },
        /decoder.onnx lacks the metadata sherpa-onnx needs for a transducer decoder: context_size/,
      ],
    ];
    for (const [name, options, message] of cases) {
      const start = SherpaSttEngine.start(await transducerOptions(name, options));
      await expect(start, name).rejects.toThrow(SherpaModelError);
      await expect(start, name).rejects.toThrow(message);
    }
  });
});
