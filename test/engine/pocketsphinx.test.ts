import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findPocketsphinx, PocketsphinxEngine } from '../../engine/pocketsphinx/pocketsphinx-engine.js';
import { RecognitionCapacityError } from '../../engine/stt/capacity.js';
import { vocabularyGrammar } from '../../engine/pocketsphinx/vocabulary-grammar.js';
import { phraseWords } from '../../engine/stt/phrases.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { silencePcm, SpeechAudio } from '../helpers/speech-audio.js';
import { recognise, sttConformance } from './stt-conformance.js';

const RATE = 16000;
let engine: PocketsphinxEngine;
let speech: SpeechAudio;

beforeAll(async () => {
  const found = await findPocketsphinx();
  if (!found.available) throw new Error(`${found.reason} (npm run system-deps)`);
  engine = await PocketsphinxEngine.start({ modelDir: found.modelDir, languages: ['en', 'en-GB'], workers: 1 });
  speech = await SpeechAudio.start();
}, 60_000);
afterAll(async () => {
  await engine?.close();
  await speech?.close();
});

/** A recording of Debian's test data (16 kHz, 16-bit, headerless). */
function testRecording(name: string): Int16Array {
  const raw = readFileSync(`/usr/share/pocketsphinx/test/data/${name}`);
  return new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
}

sttConformance({
  name: 'pocketsphinx (US English, Debian)',
  engine: () => engine,
  language: 'en',
  speech: async () => testRecording('goforward.raw'),
});

describe('pocketsphinx recognises English', () => {
  it('transcribes a real recording with word timings and confidences', async () => {
    const events = await recognise(
      engine,
      { language: 'en', vocabulary: [], sampleRateHz: RATE },
      concatPcm([testRecording('goforward.raw'), silencePcm(1, RATE)]),
    );
    const finals = events.filter((event) => event.type === 'final');
    expect(finals.map((event) => event.text)).toEqual(['go forward ten meters']);
    const words = finals[0]!.words;
    expect(words.map((word) => word.w)).toEqual(['go', 'forward', 'ten', 'meters']);
    // The speech begins about 0.45 s in and lasts until about 2.1 s.
    expect(words[0]!.start).toBeGreaterThan(0.3);
    expect(words[0]!.start).toBeLessThan(0.6);
    expect(words[3]!.end).toBeGreaterThan(1.9);
    expect(words[3]!.end).toBeLessThan(2.4);
    for (const word of words) expect(word.conf).toBeGreaterThan(0.5);
  });

  it('gives partial results while the caller is still speaking', async () => {
    const events = await recognise(
      engine,
      { language: 'en', vocabulary: [], sampleRateHz: RATE },
      concatPcm([testRecording('goforward.raw'), silencePcm(1, RATE)]),
    );
    const partials = events.filter((event) => event.type === 'partial');
    expect(partials.length).toBeGreaterThanOrEqual(2);
    expect(events.findIndex((event) => event.type === 'partial')).toBeLessThan(events.findIndex((event) => event.type === 'final'));
    expect('go forward ten meters'.startsWith(partials[0]!.text.split(' ')[0]!)).toBe(true);
  });

  it('finds two utterances with their own finals', async () => {
    const first = await speech.speak('Pay my bill', RATE);
    const second = await speech.speak('Speak to an agent', RATE);
    const audio = concatPcm([first, silencePcm(1.2, RATE), second, silencePcm(1, RATE)]);
    const vocabulary = ['pay my bill', 'speak to an agent', 'opening hours', 'yes', 'no'];
    const finals = (await recognise(engine, { language: 'en', vocabulary, sampleRateHz: RATE }, audio)).filter((event) => event.type === 'final');
    expect(finals.map((event) => event.text)).toEqual(['pay my bill', 'speak to an agent']);
    expect(finals[1]!.startSeconds).toBeGreaterThan(first.length / RATE + 0.5);
  });

  it('listens only for the vocabulary when one is given, and for anything when not', async () => {
    const audio = concatPcm([await speech.speak('Opening hours', RATE), silencePcm(1, RATE)]);
    const withVocabulary = await recognise(engine, { language: 'en', vocabulary: ['opening hours', 'pay my bill', 'zxqv'], sampleRateHz: RATE }, audio);
    expect(withVocabulary.filter((event) => event.type === 'final').map((event) => event.text)).toEqual(['opening hours']);
    // The next stream on the same decoder is back on the open language model.
    const open = await recognise(
      engine,
      { language: 'en', vocabulary: [], sampleRateHz: RATE },
      concatPcm([testRecording('goforward.raw'), silencePcm(1, RATE)]),
    );
    expect(open.filter((event) => event.type === 'final').map((event) => event.text)).toEqual(['go forward ten meters']);
  });

  it('runs several streams at once without mixing them up', async () => {
    const texts = ['yes', 'no', 'pay my bill', 'opening hours'];
    const audios = await Promise.all(texts.map(async (text) => concatPcm([await speech.speak(text, RATE), silencePcm(1, RATE)])));
    const results = await Promise.all(audios.map((audio) => recognise(engine, { language: 'en', vocabulary: texts, sampleRateHz: RATE }, audio)));
    expect(
      results.map((events) =>
        events
          .filter((event) => event.type === 'final')
          .map((event) => event.text)
          .join('|'),
      ),
    ).toEqual(texts);
  });
});

describe('pocketsphinx capacity', () => {
  it('refuses a stream beyond its limit and takes one again when a stream closes', async () => {
    const found = await findPocketsphinx();
    if (!found.available) throw new Error(found.reason);
    const small = await PocketsphinxEngine.start({ modelDir: found.modelDir, languages: ['en'], workers: 1, maxStreamsPerWorker: 1 });
    try {
      const options = { language: 'en', vocabulary: [], sampleRateHz: RATE };
      const first = small.open(options, new AbortController().signal);
      expect(() => small.open(options, new AbortController().signal)).toThrow(RecognitionCapacityError);
      first.end();
      for await (const event of first) void event;
      const events = await recognise(small, options, concatPcm([testRecording('goforward.raw'), silencePcm(1, RATE)]));
      expect(events.filter((event) => event.type === 'final').map((event) => event.text)).toEqual(['go forward ten meters']);
    } finally {
      await small.close();
    }
  }, 30_000);
});

describe('vocabulary grammars', () => {
  const known = new Set(['pay', 'my', 'bill', 'yes', "don't", 'agent']);
  it('keeps phrases whose words the dictionary knows and leaves out the rest', () => {
    const { grammar, leftOut } = vocabularyGrammar(['Pay my bill!', 'yes', 'Zürich', 'agent <script>', "don't"], (word) => known.has(word));
    expect(grammar).toBe("#JSGF V1.0;\ngrammar vocabulary;\npublic <vocabulary> = pay my bill | yes | don't;\n");
    expect(leftOut).toEqual(['Zürich', 'agent <script>']);
    expect(vocabularyGrammar(['Zürich'], (word) => known.has(word)).grammar).toBeNull();
    expect(phraseWords('  Pay, MY   bill. ')).toEqual(['pay', 'my', 'bill']);
  });
});

describe('finding pocketsphinx', () => {
  it('names the package to install when the model is missing', async () => {
    const missing = await findPocketsphinx('/nonexistent/model');
    expect(missing).toEqual({ available: false, reason: expect.stringContaining('apt-get install pocketsphinx-en-us') });
  });
});
