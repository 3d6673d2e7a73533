import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchUtteranceDecoder } from '../../engine/stt/batch-decoder.js';
import { EndpointedSttEngine } from '../../engine/stt/endpointed-engine.js';
import { SyntheticSttEngine } from '../../engine/synthetic/synthetic-stt.js';
import type { SttEvent } from '../../engine/types.js';
import { Endpointer } from '../../engine/vad/endpointer.js';
import { loadWebRtcVad, WebRtcVad } from '../../engine/vad/webrtc-vad.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { loudSpan, silencePcm, SpeechAudio } from '../helpers/speech-audio.js';
import { recognise, sttConformance } from './stt-conformance.js';

const RATE = 16000;
const FRAME = new Int16Array(320);
let speech: SpeechAudio;

beforeAll(async () => {
  await loadWebRtcVad();
  speech = await SpeechAudio.start();
});
afterAll(async () => speech.close());

describe('the endpointer', () => {
  const options = { startFrames: 3, hangoverMs: 100, prerollMs: 60, maxUtteranceMs: 1000 };
  const run = (pattern: string, endpointer = new Endpointer(options)) => [...pattern].map((c) => endpointer.push(FRAME, c === 'x').kind);

  it('opens an utterance after three speech frames, with the pre-roll', () => {
    const endpointer = new Endpointer(options);
    const kinds = run('..xx.xxx', endpointer);
    expect(kinds).toEqual(['silence', 'silence', 'silence', 'silence', 'silence', 'silence', 'silence', 'start']);
    // 60 ms of pre-roll is three frames, plus the frame that opened it.
    expect(endpointer.frames).toBe(4);
  });

  it('closes it after the hangover, and reports where speech ended', () => {
    const endpointer = new Endpointer(options);
    const decisions = [...'xxxxx.....'].map((c) => endpointer.push(FRAME, c === 'x'));
    expect(decisions.map((d) => d.kind)).toEqual([
      'silence',
      'silence',
      'start',
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
      'continue',
      'end',
    ]);
    // Five frames of speech (three of them opening the utterance), then five silent ones.
    expect(decisions[9]).toEqual({ kind: 'end', speechEndFrames: 5 });
  });

  it('a short pause inside speech does not end the utterance; a long one does not open one', () => {
    expect(run('xxx..xx.....').filter((k) => k === 'end')).toHaveLength(1);
    expect(run('x.x.x.x.x.x.')).not.toContain('start');
  });

  it('closes an utterance that runs too long', () => {
    const kinds = run('x'.repeat(60));
    expect(kinds.indexOf('end')).toBe(49);
  });
});

describe('WebRTC voice activity detection', () => {
  it('tells speech from silence and low noise', async () => {
    const vad = WebRtcVad.create(RATE, 2);
    const spoken = await speech.speak('Please hold the line.', RATE);
    const frames = (pcm: Int16Array) => Array.from({ length: Math.floor(pcm.length / 320) }, (_, i) => pcm.slice(i * 320, i * 320 + 320));
    const voiced = frames(spoken).filter((frame) => vad.isSpeech(frame)).length / frames(spoken).length;
    const noise = Int16Array.from({ length: RATE }, () => Math.round((Math.random() - 0.5) * 60));
    expect(voiced).toBeGreaterThan(0.6);
    expect(frames(silencePcm(1, RATE)).some((frame) => vad.isSpeech(frame))).toBe(false);
    expect(frames(noise).filter((frame) => vad.isSpeech(frame)).length).toBeLessThan(5);
    vad.close();
  });

  it('refuses a rate or frame length it cannot take', () => {
    expect(() => WebRtcVad.create(22050)).toThrow(/8000, 16000, 32000, 48000/);
    const vad = WebRtcVad.create(8000);
    expect(() => vad.isSpeech(new Int16Array(320))).toThrow(/160 samples/);
    vad.close();
    expect(() => vad.isSpeech(new Int16Array(160))).toThrow(/closed/);
  });
});

describe('the batch-to-streaming adapter (VAD-segmented)', () => {
  const sandbox = new SyntheticSttEngine(['en']);
  const engine = new EndpointedSttEngine(
    'sandbox-stream',
    { languages: ['en'], sampleRatesHz: [8000, 16000], partials: false, vocabulary: 'none' },
    (options) => new BatchUtteranceDecoder(sandbox, options),
  );
  const options = { language: 'en', vocabulary: [], sampleRateHz: RATE };

  const collect = (audio: Int16Array, chunk = 480): Promise<SttEvent[]> => recognise(engine, options, audio, chunk);

  it('gives one final per utterance, placed where the speech is', async () => {
    const first = await speech.speak('Hello, I would like to pay my bill.', RATE);
    const second = await speech.speak('Yes, that is right.', RATE);
    const audio = concatPcm([silencePcm(0.5, RATE), first, silencePcm(1.5, RATE), second, silencePcm(1, RATE)]);
    const events = await collect(audio);
    const finals = events.filter((event) => event.type === 'final');
    expect(finals).toHaveLength(2);
    const secondStart = 0.5 + first.length / RATE + 1.5;
    const truth = [loudSpan(audio, RATE, 0, secondStart * RATE), loudSpan(audio, RATE, secondStart * RATE)];
    finals.forEach((final, index) => {
      if (final.type !== 'final') return;
      // Pre-roll before, the detector's judgement at the edges: within a quarter second.
      expect(final.startSeconds).toBeGreaterThan(truth[index]!.start - 0.35);
      expect(final.startSeconds).toBeLessThan(truth[index]!.start + 0.1);
      expect(Math.abs(final.endSeconds - truth[index]!.end)).toBeLessThan(0.25);
      expect(final.words[0]!.start).toBeGreaterThanOrEqual(final.startSeconds);
    });
  });

  it('ends utterances after a shorter silence when the stream asks for one', async () => {
    // Each sentence cut to its loud part, so the pause between them is exactly what is inserted.
    const loud = (pcm: Int16Array) => {
      const span = loudSpan(pcm, RATE);
      return pcm.subarray(Math.round(span.start * RATE), Math.round(span.end * RATE));
    };
    const first = loud(await speech.speak('Hello, I would like to pay my bill.', RATE));
    const second = loud(await speech.speak('Yes, that is right.', RATE));
    const audio = concatPcm([silencePcm(0.5, RATE), first, silencePcm(0.35, RATE), second, silencePcm(1, RATE)]);
    const finals = (events: SttEvent[]) => events.filter((event) => event.type === 'final').length;
    // 350 ms between the sentences: one utterance at the default 500 ms, two at 200 ms.
    expect(finals(await collect(audio))).toBe(1);
    expect(finals(await recognise(engine, { ...options, endSilenceMs: 200 }, audio, 480))).toBe(2);
  });

  it('gives nothing for silence and ends an utterance cut off by the end of the stream', async () => {
    expect(await collect(silencePcm(3, RATE))).toEqual([]);
    const cut = await speech.speak('Transfer me to an agent please', RATE);
    const events = await collect(cut.subarray(0, Math.floor(cut.length * 0.8)));
    expect(events.filter((event) => event.type === 'final')).toHaveLength(1);
  });

  it('takes audio in chunks of any size, also one sample at a time', async () => {
    const audio = concatPcm([await speech.speak('One.', RATE), silencePcm(1, RATE)]);
    const whole = await collect(audio, audio.length);
    const single = await collect(audio.subarray(0, 8000 + 3), 1);
    expect(whole.filter((event) => event.type === 'final')).toHaveLength(1);
    expect(single.filter((event) => event.type === 'final')).toHaveLength(1);
  });

  it('stops on abort, refuses audio after the end, and is read only once', async () => {
    const controller = new AbortController();
    const stream = engine.open(options, controller.signal);
    const reading = (async () => {
      for await (const event of stream) void event;
    })();
    stream.write(await speech.speak('Hello there.', RATE));
    controller.abort();
    await expect(reading).rejects.toThrow(/abort/i);
    const ended = engine.open(options, new AbortController().signal);
    ended.end();
    expect(() => ended.write(new Int16Array(10))).toThrow(/ended/);
    const events = [];
    for await (const event of ended) events.push(event);
    expect(events).toEqual([]);
    await expect(
      (async () => {
        for await (const event of ended) void event;
      })(),
    ).rejects.toThrow(/read once/);
  });

  it('refuses a language or rate it does not serve', () => {
    expect(() => engine.open({ ...options, language: 'de-CH' }, new AbortController().signal)).toThrow(/de-CH/);
    expect(() => engine.open({ ...options, sampleRateHz: 44100 }, new AbortController().signal)).toThrow(/44100/);
  });
});

sttConformance({
  name: 'batch-to-streaming adapter over the sandbox recogniser',
  engine: () =>
    new EndpointedSttEngine(
      'sandbox-stream',
      { languages: ['en'], sampleRatesHz: [8000, 16000], partials: false, vocabulary: 'none' },
      (options) => new BatchUtteranceDecoder(new SyntheticSttEngine(['en']), options),
    ),
  language: 'en',
  speech: (rateHz) => speech.speak('Hello, I would like to pay my bill.', rateHz),
});
