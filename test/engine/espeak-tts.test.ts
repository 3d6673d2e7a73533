import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findEspeakLibrary } from '../../engine/espeak/espeak-native.js';
import { EspeakPool } from '../../engine/espeak/espeak-pool.js';
import { SwissGermanRenderer } from '../../engine/dialect/swiss-german-renderer.js';
import { EspeakTtsEngine, segmentToSsml } from '../../engine/espeak/espeak-tts.js';
import { NEUTRAL_PROSODY, type SpeechDocument, type SpeechItem } from '../../engine/types.js';
import { prepareSpeech } from '../../src/speech/synthesis-service.js';
import { ESPEAK_VOICE_STYLES, espeakLanguageVoice } from '../../engine/espeak/espeak-voices.js';
import { LANGUAGES } from '../../src/catalog/languages.js';
import { VOICES } from '../../src/catalog/voices.js';
import { medianPitchHz } from '../helpers/audio-analysis.js';
import { collect, joinAudio, rms, textDocument, ttsConformance } from './tts-conformance.js';

let pool: EspeakPool;
beforeAll(async () => {
  pool = await EspeakPool.start(Math.min(2, os.availableParallelism()), findEspeakLibrary(undefined));
});
afterAll(async () => pool.close());

ttsConformance('eSpeak NG', () => new EspeakTtsEngine(pool));

async function speak(text: string, language: string, dialect: string | null, voice = 'anna', speed = 1) {
  const events = await collect(new EspeakTtsEngine(pool), textDocument(text, language, dialect), { voice, speed, style: null, sampleRateHz: 22050 });
  return joinAudio(events);
}

describe('eSpeak NG voices and languages', () => {
  it('has a voice style for every catalog voice and a language voice for every language and dialect', () => {
    for (const voice of VOICES) expect(ESPEAK_VOICE_STYLES[voice.id], voice.id).toBeDefined();
    for (const language of LANGUAGES) {
      for (const dialect of language.dialects) expect(espeakLanguageVoice(language.code, dialect.id), `${language.code}/${dialect.id}`).toBeDefined();
    }
  });

  const samples: Record<string, string> = {
    de: 'Guten Tag, wie kann ich Ihnen helfen?',
    fr: 'Bonjour, comment puis-je vous aider?',
    it: 'Buongiorno, come posso aiutarla?',
    en: 'Good morning, how can I help you?',
  };
  for (const language of LANGUAGES) {
    it(`speaks ${language.code}`, async () => {
      const pcm = await speak(samples[language.code.slice(0, 2)]!, language.code, language.default_dialect);
      expect(pcm.length / 22050).toBeGreaterThan(1);
      expect(pcm.length / 22050).toBeLessThan(5);
      expect(rms(pcm)).toBeGreaterThan(1000);
    });
  }

  it('renders a French sentence differently from the same letters read as German', async () => {
    const french = await speak('Je voudrais un rendez-vous demain matin.', 'fr-CH', 'standard');
    const german = await speak('Je voudrais un rendez-vous demain matin.', 'de-CH', 'standard');
    expect(Math.abs(french.length - german.length) / french.length).toBeGreaterThan(0.05);
  });

  it('gives the voices audibly different pitch and pace', async () => {
    const text = 'Ihre Wartezeit beträgt ungefähr drei Minuten. Vielen Dank für Ihre Geduld.';
    const anna = await speak(text, 'de-CH', 'standard', 'anna');
    const lea = await speak(text, 'de-CH', 'standard', 'lea');
    const jonas = await speak(text, 'de-CH', 'standard', 'jonas');
    const marco = await speak(text, 'de-CH', 'standard', 'marco');
    const pitch = { anna: medianPitchHz(anna, 22050), lea: medianPitchHz(lea, 22050), jonas: medianPitchHz(jonas, 22050), marco: medianPitchHz(marco, 22050) };
    // Female voices sit well above male ones; within each pair the pitch or the pace differs.
    expect(Math.min(pitch.anna, pitch.lea)).toBeGreaterThan(Math.max(pitch.jonas, pitch.marco) * 1.3);
    expect(pitch.lea).toBeGreaterThan(pitch.anna * 1.1);
    expect(marco.length).toBeLessThan(jonas.length * 0.9);
  });

  it('follows speed', async () => {
    const text = 'Bitte halten Sie Ihre Kundennummer bereit.';
    const normal = await speak(text, 'de-CH', 'standard', 'anna', 1);
    const fast = await speak(text, 'de-CH', 'standard', 'anna', 2);
    const slow = await speak(text, 'de-CH', 'standard', 'anna', 0.5);
    expect(fast.length).toBeLessThan(normal.length * 0.7);
    expect(slow.length).toBeGreaterThan(normal.length * 1.5);
  });

  it('frees the worker after an abort: the next synthesis runs at once', async () => {
    const engine = new EspeakTtsEngine(pool);
    const controllers = Array.from({ length: pool.workers }, () => new AbortController());
    await Promise.all(
      controllers.map(async (controller) => {
        const run = (async () => {
          for await (const event of engine.synthesize(
            textDocument('Ein sehr langer Text. '.repeat(200)),
            { voice: 'anna', speed: 1, style: null, sampleRateHz: 22050 },
            controller.signal,
          )) {
            if (event.type === 'audio') controller.abort();
          }
        })();
        await expect(run).rejects.toThrow();
      }),
    );
    const started = performance.now();
    const pcm = await speak('Weiter geht es.', 'de-CH', 'standard');
    expect(pcm.length).toBeGreaterThan(10_000);
    expect(performance.now() - started).toBeLessThan(1000);
  });

  it('tells its load: workers at work, syntheses waiting for one, time spent', async () => {
    const engine = new EspeakTtsEngine(pool);
    const before = engine.load();
    expect(before).toMatchObject({ workers: pool.workers, busy: 0, waiting: 0 });
    const running = Array.from({ length: pool.workers + 2 }, () =>
      speak('Der nächste freie Mitarbeiter ist gleich für Sie da. '.repeat(4), 'de-CH', 'standard'),
    );
    // Every worker is taken and two syntheses wait, until the first ends.
    let full = false;
    for (let turn = 0; turn < 1000 && !full; turn++) {
      const load = engine.load();
      full = load.busy === pool.workers && load.waiting === 2;
      if (!full) await new Promise((resolve) => setImmediate(resolve));
    }
    expect(full).toBe(true);
    await Promise.all(running);
    const after = engine.load();
    expect(after).toMatchObject({ busy: 0, waiting: 0 });
    expect(after.busySeconds!).toBeGreaterThan(before.busySeconds!);
  });

  it('never stalls the event loop while four syntheses run', async () => {
    const histogram = monitorEventLoopDelay({ resolution: 1 });
    histogram.enable();
    await Promise.all(Array.from({ length: 4 }, () => speak('Der nächste freie Mitarbeiter ist gleich für Sie da. '.repeat(8), 'de-CH', 'standard')));
    histogram.disable();
    expect(histogram.max / 1e6).toBeLessThan(50);
  });
});

describe('eSpeak NG reads text verbatim', () => {
  it('does not take [[…]] in the text as phoneme codes', async () => {
    const literal = await speak('Code [[h@l]] bitte', 'de-CH', 'standard');
    const parted = await speak('Code [ [h@l] ] bitte', 'de-CH', 'standard');
    expect(Math.abs(literal.length - parted.length) / parted.length).toBeLessThan(0.02);
  });
});

describe('eSpeak NG speaks Swiss German with its pronunciation', () => {
  const renderer = new SwissGermanRenderer();
  const options = { voice: 'anna', speed: 1, style: null, sampleRateHz: 22050 };
  function swissDocument(items: SpeechItem[], dialect = 'zurich'): SpeechDocument {
    return prepareSpeech({ passages: [{ language: 'de-CH', dialect, items }] }, renderer);
  }

  it('gives eSpeak phoneme input and reports the written words', async () => {
    const document = swissDocument([{ type: 'text', text: 'Das Geschäft ist am Samstag geöffnet.' }]);
    const items = document.passages[0]!.items;
    expect(segmentToSsml(items, undefined).ssml).toBe("<speak>[[sgS'Eft]] [[IS]] [[am]] [[s'amStIg]] [['Of@]].</speak>");
    const events = await collect(new EspeakTtsEngine(pool), document, options);
    const words = events.filter((event) => event.type === 'word').map((event) => (event as { text: string }).text);
    expect(words).toEqual(['S Gschäft', 'isch', 'am', 'Samschtig', 'offe']);
    const pcm = joinAudio(events);
    expect(pcm.length / 22050).toBeGreaterThan(1);
    expect(rms(pcm)).toBeGreaterThan(1000);
  });

  it('sounds different from the same letters read as German', async () => {
    // Read as German, each article letter is a spelled letter name ("Es Huus", "De Frau").
    const document = swissDocument([{ type: 'text', text: 'Das Haus, die Frau, das Kind, die Leute, das Geschäft.' }]);
    const asGerman = textDocument((document.passages[0]!.items[0] as { text: string }).text, 'de-CH', 'zurich');
    const swiss = joinAudio(await collect(new EspeakTtsEngine(pool), document, options));
    const german = joinAudio(await collect(new EspeakTtsEngine(pool), asGerman, options));
    expect(Math.abs(swiss.length - german.length) / german.length).toBeGreaterThan(0.05);
  });

  it('keeps every word after a mark that follows a full stop', async () => {
    const text = (items: SpeechItem[]) => collect(new EspeakTtsEngine(pool), swissDocument(items), options);
    const plain = await text([{ type: 'text', text: 'Willkommen. Für Deutsch drücken Sie die Eins.' }]);
    const marked = await text([
      { type: 'text', text: 'Willkommen. ' },
      { type: 'mark', name: 'menu' },
      { type: 'text', text: 'Für Deutsch drücken Sie die Eins.' },
    ]);
    const plainLength = joinAudio(plain).length;
    expect(Math.abs(joinAudio(marked).length - plainLength) / plainLength).toBeLessThan(0.05);
    const mark = marked.find((event) => event.type === 'mark') as { offsetSeconds: number };
    const firstAfter = marked.find((event) => event.type === 'word' && event.text === 'Für') as { offsetSeconds: number };
    expect(mark.offsetSeconds).toBeGreaterThan(0.3);
    expect(firstAfter.offsetSeconds).toBeCloseTo(mark.offsetSeconds, 2);
  });

  it('makes emphasis audible on words given as phonemes', async () => {
    const plain = swissDocument([{ type: 'text', text: 'Ihre Wartezeit beträgt ungefähr drei Minuten.' }]);
    const stressedItems = plain.passages[0]!.items.map((item) =>
      item.type === 'text' ? { ...item, prosody: { ...NEUTRAL_PROSODY, emphasis: 'strong' as const } } : item,
    );
    const stressed: SpeechDocument = { passages: [{ ...plain.passages[0]!, items: stressedItems }] };
    const plainSeconds = joinAudio(await collect(new EspeakTtsEngine(pool), plain, options)).length / 22050;
    const stressedSeconds = joinAudio(await collect(new EspeakTtsEngine(pool), stressed, options)).length / 22050;
    expect(stressedSeconds).toBeGreaterThan(plainSeconds * 1.1);
  });
});

describe('the eSpeak pool serves the earliest need first', () => {
  it('gives a free worker to the job needed soonest, not the one that asked first', async () => {
    const single = await EspeakPool.start(1, findEspeakLibrary(undefined));
    try {
      const job = (text: string) => ({ ssml: `<speak>${text}</speak>`, voice: 'de', wordsPerMinute: 175, pitch: 50, range: 50 });
      const signal = new AbortController().signal;
      const order: string[] = [];
      const run = async (name: string, text: string, neededAtMs?: number) => {
        for await (const message of single.synthesize(job(text), signal, neededAtMs)) {
          if (message.type === 'done') break;
        }
        order.push(name);
      };
      // The first job takes the only worker; of the two that then wait, the one needed now
      // (a stream without audio yet) goes before the one needed in ten seconds.
      const busy = run('busy', 'Dies ist ein langer Satz, der den einzigen Arbeiter eine Weile beschäftigt. '.repeat(4));
      const later = run('later', 'Später.', performance.now() + 10_000);
      const now = run('now', 'Jetzt.');
      await Promise.all([busy, later, now]);
      expect(order).toEqual(['busy', 'now', 'later']);
    } finally {
      await single.close();
    }
  });
});

describe('eSpeak workers side by side', () => {
  it('gives each worker its own eSpeak: two languages at once come out as they do one after another', async () => {
    // libespeak-ng keeps its state in globals; each worker loads its own copy of the library.
    // eSpeak varies a sample or two between runs, so the words and their timing are compared.
    const twoWorkers = await EspeakPool.start(2, findEspeakLibrary(undefined));
    try {
      const jobs = [
        { ssml: '<speak>Grüezi und willkommen beim Kundendienst der Stadtwerke.</speak>', voice: 'gmw/de+f3', wordsPerMinute: 165, pitch: 55, range: 50 },
        {
          ssml: '<speak>Bonjour et bienvenue au service clientèle, merci de patienter.</speak>',
          voice: 'roa/fr+m3',
          wordsPerMinute: 180,
          pitch: 40,
          range: 60,
        },
      ];
      const signal = new AbortController().signal;
      const run = async (job: (typeof jobs)[number]) => {
        let samples = 0;
        const words: Array<{ at: number; ms: number }> = [];
        for await (const message of twoWorkers.synthesize(job, signal)) {
          if (message.type === 'done') break;
          samples += message.pcm.length;
          for (const event of message.events) if (event.type === 'word') words.push({ at: event.textPosition, ms: event.audioPositionMs });
        }
        return { seconds: samples / 22050, words };
      };
      const alone = [await run(jobs[0]!), await run(jobs[1]!)];
      for (let round = 0; round < 5; round++) {
        const together = await Promise.all(jobs.map(run));
        together.forEach((result, index) => {
          const expected = alone[index]!.words;
          expect(result.words.map((word) => word.at)).toEqual(expected.map((word) => word.at));
          result.words.forEach((word, at) => expect(Math.abs(word.ms - expected[at]!.ms)).toBeLessThanOrEqual(20));
          expect(Math.abs(result.seconds - alone[index]!.seconds)).toBeLessThan(0.02);
        });
      }
    } finally {
      await twoWorkers.close();
    }
  });
});
