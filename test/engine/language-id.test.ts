/**
 * Whisper through the real sherpa-onnx runtime: spoken-language identification and offline
 * recognition, with a tiny hand-made multilingual Whisper model (test/helpers/tiny-whisper.ts:
 * the loudest band decides the language — low → de, middle → it, high → fr, quiet → en — and
 * loud audio reads as that language's "hello"). Real Whisper models cannot be downloaded on
 * the test machines.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WhisperLanguageIdentifier } from '../../engine/sherpa/language-id.js';
import { SherpaModelError } from '../../engine/sherpa/sherpa-model-check.js';
import { SherpaSttEngine } from '../../engine/sherpa/sherpa-stt-engine.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { silencePcm, SpeechAudio } from '../helpers/speech-audio.js';
import { writeTinyWhisperModel } from '../helpers/tiny-whisper.js';
import { recognise, sttConformance } from './stt-conformance.js';

const RATE = 16000;
let dir: string;
let files: { encoder: string; decoder: string; tokens: string };
let identifier: WhisperLanguageIdentifier;
let whisper: SherpaSttEngine;
let speech: SpeechAudio;

function whisperOptions(language: string) {
  return {
    id: 'sherpa-onnx:tiny-whisper',
    type: 'whisper' as const,
    folder: path.dirname(files.encoder),
    paths: { encoder: path.basename(files.encoder), decoder: path.basename(files.decoder), tokens: path.basename(files.tokens) },
    languages: ['de-CH'],
    modelLanguage: language,
    workers: 1,
  };
}

/** One second of a sine at `frequency` Hz and amplitude `level` (of full scale), as floats. */
function tone(frequency: number, level: number, seconds = 1): Float32Array {
  return Float32Array.from({ length: seconds * RATE }, (_, i) => level * Math.sin((2 * Math.PI * frequency * i) / RATE));
}

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-whisper-'));
  files = await writeTinyWhisperModel(path.join(dir, 'multilingual'));
  identifier = await WhisperLanguageIdentifier.start('sherpa-onnx:tiny-whisper', files);
  whisper = await SherpaSttEngine.start(whisperOptions('de'));
  speech = await SpeechAudio.start();
}, 30_000);
afterAll(async () => {
  await identifier?.close();
  await whisper?.close();
  await speech?.close();
  await fs.rm(dir, { recursive: true, force: true });
});

describe('spoken-language identification (Whisper, sherpa-onnx)', () => {
  it('names the language the model hears, in a worker thread', async () => {
    const signal = new AbortController().signal;
    const heard = await Promise.all(
      [tone(250, 0.3), tone(1000, 0.3), tone(3500, 0.3), new Float32Array(RATE)].map((samples) => identifier.identify(samples, signal)),
    );
    expect(heard).toEqual(['de', 'it', 'fr', 'en']);
    // Only the first 30 seconds are looked at: a long recording costs no more.
    const long = new Float32Array(90 * RATE);
    long.set(tone(3500, 0.3), 0);
    expect(await identifier.identify(long, signal)).toBe('fr');
  });

  it('gives up when aborted', async () => {
    const controller = new AbortController();
    controller.abort(new DOMException('the caller left', 'AbortError'));
    await expect(identifier.identify(tone(250, 0.3), controller.signal)).rejects.toThrow(/caller left/);
  });

  it('refuses models sherpa-onnx would end the process over, naming the file', async () => {
    const cases: Array<[string, { multilingual?: boolean; omitMetadata?: string[] }, RegExp]> = [
      ['english-only', { multilingual: false }, /is an English-only Whisper model; identifying languages needs a multilingual one/],
      [
        'no-language-codes',
        { omitMetadata: ['all_language_codes'] },
        /lacks the metadata sherpa-onnx needs for a multilingual Whisper encoder: all_language_codes/,
      ],
      ['no-model-type', { omitMetadata: ['model_type'] }, /model_type "" is not a Whisper model sherpa-onnx identifies languages with/],
      ['no-sot', { omitMetadata: ['sot'] }, /lacks the metadata sherpa-onnx needs for a language-id encoder: sot/],
    ];
    for (const [name, options, message] of cases) {
      const broken = await writeTinyWhisperModel(path.join(dir, name), options);
      await expect(WhisperLanguageIdentifier.start('x', broken), name).rejects.toThrow(SherpaModelError);
      await expect(WhisperLanguageIdentifier.start('x', broken), name).rejects.toThrow(message);
    }
  });
});

sttConformance({
  name: 'sherpa-onnx offline Whisper (tiny hand-made model)',
  engine: () => whisper,
  language: 'de-CH',
  speech: (rateHz) => speech.speak('Guten Tag.', rateHz, 'de'),
});

describe('offline Whisper recognition (sherpa-onnx)', () => {
  it('transcribes each utterance in the language it is told, words spread over the utterance', async () => {
    expect(whisper.capabilities).toMatchObject({ partials: false, vocabulary: 'none', sampleRatesHz: [16000] });
    const said = await speech.speak('Grüezi mitenand.', RATE, 'de');
    const events = await recognise(
      whisper,
      { language: 'de-CH', vocabulary: [], sampleRateHz: RATE },
      concatPcm([silencePcm(0.5, RATE), said, silencePcm(1, RATE)]),
    );
    expect(events).toHaveLength(1);
    const final = events[0]!;
    expect(final.text).toBe('hallo');
    // Whisper gives no token times: the word spans the utterance, confidence unknown.
    expect(final.type === 'final' && final.words[0]!.start).toBeCloseTo(final.type === 'final' ? final.startSeconds : 0, 2);
    expect(final.words[0]!.conf).toBe(0);
  });

  it('refuses a language the model does not know (sherpa-onnx would end the process on the first call)', async () => {
    await expect(SherpaSttEngine.start(whisperOptions('gsw'))).rejects.toThrow(/does not know the language "gsw" \(it knows en, de, es, fr, it\)/);
  });
});
