import { describe, expect, it } from 'vitest';
import type { SpeechDocument, TtsEngine, TtsEvent, TtsOptions } from '../../engine/types.js';

/** Collects every event of a synthesis. */
export async function collect(engine: TtsEngine, document: SpeechDocument, options: TtsOptions, signal = new AbortController().signal): Promise<TtsEvent[]> {
  const events: TtsEvent[] = [];
  for await (const event of engine.synthesize(document, options, signal)) events.push(event);
  return events;
}

/** Plain text in one passage. */
export function textDocument(text: string, language = 'de-CH', dialect: string | null = 'standard'): SpeechDocument {
  return { passages: [{ language, dialect, items: [{ type: 'text', text }] }] };
}

/** The audio of a synthesis as one array. */
export function joinAudio(events: readonly TtsEvent[]): Int16Array {
  const audio = events.filter((e) => e.type === 'audio');
  const out = new Int16Array(audio.reduce((sum, e) => sum + e.pcm.length, 0));
  let offset = 0;
  for (const event of audio) {
    out.set(event.pcm, offset);
    offset += event.pcm.length;
  }
  return out;
}

/** RMS level of PCM16 samples, 0 … 32767. */
export function rms(pcm: Int16Array): number {
  let sum = 0;
  for (const sample of pcm) sum += sample * sample;
  return Math.sqrt(sum / Math.max(1, pcm.length));
}

const OPTIONS: TtsOptions = { voice: 'anna', speed: 1, style: null, sampleRateHz: 16000 };

/**
 * The contract every synthesis engine keeps (engine/types.ts): audio chunks with a rate,
 * word and mark events in order with offsets inside the audio, an `end` event with the true
 * duration, exact breaks, and an abort that stops the stream.
 */
export function ttsConformance(name: string, makeEngine: () => TtsEngine): void {
  describe(`${name} keeps the TtsEngine contract`, () => {
    it('streams audio and ends with the duration of what it streamed', async () => {
      const engine = makeEngine();
      const events = await collect(engine, textDocument('Guten Tag. Wie kann ich Ihnen helfen?'), OPTIONS);
      const audio = events.filter((e) => e.type === 'audio');
      expect(audio.length).toBeGreaterThan(0);
      const rates = new Set(audio.map((e) => e.sampleRateHz));
      expect(rates.size).toBe(1);
      const [rate] = [...rates];
      if (engine.capabilities.sampleRateHz === 'any') expect(rate).toBe(OPTIONS.sampleRateHz);
      else expect(rate).toBe(engine.capabilities.sampleRateHz);
      const samples = audio.reduce((sum, e) => sum + e.pcm.length, 0);
      const end = events[events.length - 1]!;
      expect(end.type).toBe('end');
      expect(end.type === 'end' && end.durationSeconds).toBeCloseTo(samples / rate!, 6);
      expect(rms(joinAudio(events))).toBeGreaterThan(300);
    });

    it('reports words and marks in order, inside the audio', async () => {
      const document: SpeechDocument = {
        passages: [
          {
            language: 'de-CH',
            dialect: 'standard',
            items: [
              { type: 'text', text: 'Eins zwei ' },
              { type: 'mark', name: 'middle' },
              { type: 'text', text: 'drei vier.' },
            ],
          },
          {
            language: 'fr-CH',
            dialect: 'standard',
            items: [
              { type: 'text', text: 'Bonjour. ' },
              { type: 'mark', name: 'last' },
            ],
          },
        ],
      };
      const events = await collect(makeEngine(), document, OPTIONS);
      const end = events.find((e) => e.type === 'end')!;
      const duration = end.type === 'end' ? end.durationSeconds : 0;
      const timed = events.filter((e) => e.type === 'word' || e.type === 'mark') as Array<Extract<TtsEvent, { offsetSeconds: number }>>;
      const offsets = timed.map((e) => e.offsetSeconds);
      expect(offsets).toEqual([...offsets].sort((a, b) => a - b));
      for (const offset of offsets) {
        expect(offset).toBeGreaterThanOrEqual(0);
        expect(offset).toBeLessThanOrEqual(duration + 1e-6);
      }
      const words = timed.filter((e) => e.type === 'word').map((e) => (e.type === 'word' ? e.text : ''));
      expect(words.join(' ')).toMatch(/Eins.*zwei.*drei.*vier.*Bonjour/);
      const marks = timed.filter((e) => e.type === 'mark');
      expect(marks.map((e) => (e.type === 'mark' ? e.name : ''))).toEqual(['middle', 'last']);
      // The mark sits between "zwei" and "drei".
      const wordAt = (pattern: RegExp) => timed.find((e) => e.type === 'word' && pattern.test(e.text))!.offsetSeconds;
      const middle = marks[0]!.offsetSeconds;
      expect(middle).toBeGreaterThan(wordAt(/zwei/));
      expect(middle).toBeLessThanOrEqual(wordAt(/drei/));
      // The last mark follows every word (an engine may add a closing pause after it).
      expect(marks[1]!.offsetSeconds).toBeGreaterThanOrEqual(Math.max(...timed.filter((e) => e.type === 'word').map((e) => e.offsetSeconds)));
    });

    it('renders a break as silence of at least its length', async () => {
      const document: SpeechDocument = {
        passages: [
          {
            language: 'de-CH',
            dialect: 'standard',
            items: [
              { type: 'text', text: 'Eins.' },
              { type: 'break', milliseconds: 800 },
              { type: 'text', text: 'Zwei.' },
            ],
          },
        ],
      };
      const events = await collect(makeEngine(), document, OPTIONS);
      const audio = events.filter((e) => e.type === 'audio');
      const rate = audio[0]!.sampleRateHz;
      const pcm = joinAudio(events);
      let longest = 0;
      let run = 0;
      for (const sample of pcm) {
        run = Math.abs(sample) < 50 ? run + 1 : 0;
        longest = Math.max(longest, run);
      }
      expect(longest / rate).toBeGreaterThanOrEqual(0.8);
    });

    it('stops when the signal aborts', async () => {
      const controller = new AbortController();
      const long = textDocument('Dies ist ein langer Satz, der nie zu Ende gesprochen wird. '.repeat(40));
      let chunks = 0;
      const run = (async () => {
        for await (const event of makeEngine().synthesize(long, OPTIONS, controller.signal)) {
          if (event.type === 'audio' && ++chunks === 2) controller.abort();
        }
      })();
      await expect(run).rejects.toThrow();
      expect(chunks).toBe(2);
    });
  });
}
