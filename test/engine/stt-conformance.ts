import { describe, expect, it } from 'vitest';
import type { SttEngine, SttEvent, SttStreamOptions } from '../../engine/types.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { silencePcm } from '../helpers/speech-audio.js';

/** Reads a whole stream while writing `audio` to it in chunks (20 ms unless told). */
export async function recognise(engine: SttEngine, options: SttStreamOptions, audio: Int16Array, chunk = options.sampleRateHz / 50): Promise<SttEvent[]> {
  const stream = engine.open(options, new AbortController().signal);
  const events: SttEvent[] = [];
  const reading = (async () => {
    for await (const event of stream) events.push(event);
  })();
  for (let at = 0; at < audio.length; at += chunk) stream.write(audio.subarray(at, at + chunk));
  stream.end();
  await reading;
  return events;
}

/** What a conformance run needs besides the engine. */
export interface SttConformanceSubject {
  readonly name: string;
  readonly engine: () => SttEngine;
  readonly language: string;
  /** Speech in the engine's language at a rate, as PCM16 mono. */
  readonly speech: (rateHz: number) => Promise<Int16Array>;
}

/**
 * The behaviour every streaming recognition engine must show, whatever it is: one final per
 * utterance with well-formed words, nothing for silence, aborts and ends as the contract says.
 */
export function sttConformance(subject: SttConformanceSubject): void {
  describe(`${subject.name}: the streaming recognition contract`, () => {
    it('gives a final with well-formed words for speech, at every rate it decodes', async () => {
      const engine = subject.engine();
      for (const rateHz of engine.capabilities.sampleRatesHz) {
        const audio = concatPcm([silencePcm(0.3, rateHz), await subject.speech(rateHz), silencePcm(0.8, rateHz)]);
        const events = await recognise(engine, { language: subject.language, vocabulary: [], sampleRateHz: rateHz }, audio);
        const finals = events.filter((event) => event.type === 'final');
        expect(finals.length, `${rateHz} Hz`).toBeGreaterThanOrEqual(1);
        const duration = audio.length / rateHz;
        for (const final of finals) {
          if (final.type !== 'final') continue;
          expect(final.text.trim()).not.toBe('');
          expect(final.text).toBe(final.words.map((word) => word.w).join(' '));
          expect(final.startSeconds).toBeLessThanOrEqual(final.endSeconds);
          let previousEnd = final.startSeconds;
          for (const word of final.words) {
            expect(word.start).toBeGreaterThanOrEqual(previousEnd - 0.001);
            expect(word.end).toBeGreaterThanOrEqual(word.start);
            expect(word.end).toBeLessThanOrEqual(duration + 0.001);
            expect(word.conf).toBeGreaterThanOrEqual(0);
            expect(word.conf).toBeLessThanOrEqual(1);
            previousEnd = word.end;
          }
        }
      }
    });

    it('gives nothing for silence', async () => {
      const engine = subject.engine();
      const rateHz = engine.capabilities.sampleRatesHz[0]!;
      expect(await recognise(engine, { language: subject.language, vocabulary: [], sampleRateHz: rateHz }, silencePcm(2, rateHz))).toEqual([]);
    });

    it('stops when aborted and stays usable for the next stream', async () => {
      const engine = subject.engine();
      const rateHz = engine.capabilities.sampleRatesHz[0]!;
      const controller = new AbortController();
      const audio = await subject.speech(rateHz);
      const stream = engine.open({ language: subject.language, vocabulary: [], sampleRateHz: rateHz }, controller.signal);
      const reading = (async () => {
        for await (const event of stream) void event;
      })();
      stream.write(audio.subarray(0, Math.floor(audio.length / 2)));
      controller.abort();
      await expect(reading).rejects.toThrow(/abort/i);
      const after = await recognise(engine, { language: subject.language, vocabulary: [], sampleRateHz: rateHz }, concatPcm([audio, silencePcm(0.8, rateHz)]));
      expect(after.some((event) => event.type === 'final')).toBe(true);
    });

    it('refuses audio after the end, a language it lacks and a rate it does not decode', () => {
      const engine = subject.engine();
      const rateHz = engine.capabilities.sampleRatesHz[0]!;
      const stream = engine.open({ language: subject.language, vocabulary: [], sampleRateHz: rateHz }, new AbortController().signal);
      stream.end();
      expect(() => stream.write(new Int16Array(160))).toThrow();
      expect(() => engine.open({ language: 'xx-YY', vocabulary: [], sampleRateHz: rateHz }, new AbortController().signal)).toThrow(RangeError);
      expect(() => engine.open({ language: subject.language, vocabulary: [], sampleRateHz: 11025 }, new AbortController().signal)).toThrow(RangeError);
    });
  });
}
