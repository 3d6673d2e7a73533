/**
 * Answering-machine detection on a labelled set of synthetic calls: machine greetings (German
 * and English, four eSpeak NG voices at three speeds, with and without a beep, with and without
 * leading silence) and people answering (short and a few long answers, then waiting in
 * silence), all with line noise, at 8 and 16 kHz. Prints the confusion matrix, recall per
 * class, the unknown rate, decision times, how well the beep wait finds the end of the beep or
 * of the greeting, and the detector's cost per 20 ms frame.
 * Run: npm run bench:amd
 */
import { PerformanceObserver, performance } from 'node:perf_hooks';
import { findEspeakLibrary } from '../../engine/espeak/espeak-native.js';
import { EspeakPool } from '../../engine/espeak/espeak-pool.js';
import { EspeakTtsEngine } from '../../engine/espeak/espeak-tts.js';
import { decodeMulaw, encodeMulaw } from '../../src/audio/g711.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { loadResampler, Resampler } from '../../src/audio/resampler.js';
import { AnsweringMachineDetector, type AmdOptions, type AmdOutcome, type AmdResult } from '../../src/telephony/amd/answering-machine-detector.js';
import { BeepWaiter } from '../../src/telephony/amd/beep-wait.js';
import { loudSpan } from '../helpers/speech-audio.js';
import { feedFrames, pieceStarts, recording, type LineOptions, type Piece } from '../telephony/amd/amd-recordings.js';

type Language = 'de' | 'en';
type Label = Exclude<AmdResult, 'unknown'>;

/** Greetings as Swiss and German mailboxes and English voicemail play them (written for this benchmark). */
const GREETINGS: ReadonlyArray<readonly [Language, string]> = [
  ['de', 'Guten Tag, Sie sind verbunden mit der Combox von Hans Müller. Bitte hinterlassen Sie eine Nachricht nach dem Signalton.'],
  ['de', 'Grüezi, hier ist der Anrufbeantworter der Familie Meier. Wir sind im Moment nicht erreichbar. Bitte sprechen Sie nach dem Piepton.'],
  ['de', 'Hallo, hier ist Anna. Ich kann gerade nicht abnehmen, ruf mich später zurück.'],
  ['de', 'Der gewünschte Teilnehmer ist zurzeit nicht erreichbar. Bitte hinterlassen Sie eine Nachricht.'],
  ['de', 'Praxis Doktor Keller, guten Tag. Unsere Praxis ist heute geschlossen. In dringenden Fällen wählen Sie bitte die Nummer des Notfalldienstes.'],
  ['de', 'Mailbox von Peter Graf. Bitte sprechen Sie jetzt.'],
  ['en', "Hi, you've reached John. Please leave a message after the tone."],
  ['en', 'Hello, you have reached the voicemail of Sarah Miller. I am not available right now. Please leave your name and number and I will call you back.'],
  ['en', 'The person you are calling is not available. Please leave a message after the tone.'],
  ['en', 'Thank you for calling. Our office is currently closed. Please call again during our business hours.'],
];

/** People answering; the last ones of each language are long for an answer, and hard. */
const ANSWERS: ReadonlyArray<readonly [Language, string]> = [
  ['de', 'Hallo?'],
  ['de', 'Ja?'],
  ['de', 'Grüezi.'],
  ['de', 'Müller.'],
  ['de', 'Ja, bitte?'],
  ['de', 'Grüezi, Müller?'],
  ['de', 'Hallo, wer ist da?'],
  ['de', 'Meier, guten Tag.'],
  ['de', 'Ja, hallo, hier ist Meier.'],
  ['de', 'Ja, hallo, hier ist Meier, was kann ich für Sie tun?'],
  ['de', 'Grüezi, Sie sprechen mit Hans Müller von der Firma Keller.'],
  ['en', 'Hello?'],
  ['en', 'Yes?'],
  ['en', 'Hi, this is John.'],
  ['en', 'Hello, who is this?'],
  ['en', 'Hello, this is John Smith speaking, how can I help you?'],
];

const VOICES = ['jonas', 'anna', 'lea', 'marco'];
const SPEEDS = [1, 0.85, 1.2];
const LEADS_S = [0, 0.4, 1];
const BEEPS: ReadonlyArray<{ readonly beepHz: number; readonly beepMs: number } | null> = [
  null,
  { beepHz: 1000, beepMs: 300 },
  { beepHz: 440, beepMs: 500 },
  { beepHz: 1400, beepMs: 200 },
];
const VARIANTS = 4;

/** Lines the set is heard on besides the plain one: the 8 kHz calls through G.711 µ-law, more noise, quieter speakers. */
const LINES: ReadonlyArray<{ readonly name: string; readonly line: LineOptions; readonly mulaw: boolean }> = [
  { name: 'noise ±50 (−61 dBFS)', line: {}, mulaw: false },
  { name: 'the same, 8 kHz calls through G.711 µ-law', line: {}, mulaw: true },
  { name: 'noise ±500 (−41 dBFS), µ-law', line: { noise: 500 }, mulaw: true },
  { name: 'speech and beeps 20 dB quieter, µ-law', line: { gainDb: -20 }, mulaw: true },
];

interface Call {
  readonly name: string;
  readonly label: Label;
  readonly rateHz: number;
  readonly pieces: readonly Piece[];
  /** On the plain line (noise ±50). */
  readonly pcm: Int16Array;
  /** Where the speech starts and ends, in seconds. */
  readonly speechStartS: number;
  readonly speechEndS: number;
  /** The beep's end, in seconds, when there is one. */
  readonly beepEndS: number | null;
}

/** eSpeak NG at a speed the test helper does not offer, resampled once to the call's rate. */
class Speaker {
  private constructor(
    private readonly engine: EspeakTtsEngine,
    private readonly pool: EspeakPool,
  ) {}

  static async start(): Promise<Speaker> {
    await loadResampler();
    const pool = await EspeakPool.start(1, findEspeakLibrary(undefined));
    return new Speaker(new EspeakTtsEngine(pool), pool);
  }

  async say(text: string, language: Language, voice: string, speed: number, rateHz: number): Promise<Int16Array> {
    const document = { passages: [{ language, dialect: 'standard', items: [{ type: 'text' as const, text }] }] };
    const options = { voice, speed, style: null, sampleRateHz: rateHz };
    const native: Int16Array[] = [];
    let nativeRate = rateHz;
    for await (const event of this.engine.synthesize(document, options, new AbortController().signal))
      if (event.type === 'audio') {
        native.push(event.pcm);
        nativeRate = event.sampleRateHz;
      }
    const resampler = new Resampler(nativeRate, rateHz);
    const pcm = concatPcm([resampler.process(concatPcm(native)), resampler.flush()]);
    resampler.destroy();
    return pcm;
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}

async function buildCalls(): Promise<Call[]> {
  const speaker = await Speaker.start();
  const calls: Call[] = [];
  const add = async (label: Label, index: number, variant: number, language: Language, text: string): Promise<void> => {
    const k = index + variant;
    const voice = VOICES[k % VOICES.length]!;
    const speed = SPEEDS[(index + 2 * variant) % SPEEDS.length]!;
    const rateHz = k % 5 === 4 ? 16000 : 8000;
    const lead = LEADS_S[(index + variant) % LEADS_S.length]! + (label === 'human' ? 0.3 : 0);
    const speech = await speaker.say(text, language, voice, speed, rateHz);
    const beep = label === 'machine' ? BEEPS[variant % BEEPS.length]! : null;
    // A person waits for us after answering; a machine beeps (or not) and records.
    const pieces: Piece[] = [{ silenceS: lead }, speech, ...(beep ? [{ silenceS: 0.4 }, beep] : []), { silenceS: 3 }];
    const pcm = recording(rateHz, pieces, { seed: calls.length + 1 });
    const starts = pieceStarts(rateHz, pieces);
    const span = loudSpan(pcm, rateHz, starts[1]! * rateHz, starts[2]! * rateHz);
    const beepEndS = beep ? starts[3]! + beep.beepMs / 1000 : null;
    const name = `${text.slice(0, 28)} (${voice}, ${speed}×, ${rateHz / 1000} kHz${beep ? `, beep ${beep.beepHz} Hz` : ''}, lead ${lead} s)`;
    calls.push({ name, label, rateHz, pieces, pcm, speechStartS: span.start, speechEndS: span.end, beepEndS });
  };
  for (const [i, [language, text]] of GREETINGS.entries()) for (let v = 0; v < VARIANTS; v++) await add('machine', i, v, language, text);
  for (const [i, [language, text]] of ANSWERS.entries()) for (let v = 0; v < 3; v++) await add('human', i, v, language, text);
  await speaker.close();
  return calls;
}

const percentile = (values: readonly number[], p: number): number => {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};
const ms = (value: number): string => (Number.isNaN(value) ? '—' : `${Math.round(value)} ms`);

/** Share of the calls labelled `label` that got that verdict, in %. */
function recallOf(outcomes: Figures['outcomes'], label: Label): number {
  const row = outcomes.filter((o) => o.call.label === label);
  return (row.filter((o) => o.outcome.result === label).length / row.length) * 100;
}

interface Figures {
  readonly outcomes: ReadonlyArray<{ readonly call: Call; readonly outcome: AmdOutcome }>;
}

function classify(calls: readonly Call[], options: AmdOptions, heard: (call: Call) => Int16Array = (call) => call.pcm): Figures {
  return {
    outcomes: calls.map((call) => {
      const detector = new AnsweringMachineDetector(call.rateHz, options);
      return { call, outcome: feedFrames(detector, heard(call))! };
    }),
  };
}

/** A call as heard on `line`. */
function onLine(call: Call, index: number, line: (typeof LINES)[number]): Int16Array {
  const pcm = recording(call.rateHz, call.pieces, { ...line.line, seed: index + 1 });
  return line.mulaw && call.rateHz === 8000 ? decodeMulaw(encodeMulaw(pcm)) : pcm;
}

function printClassification({ outcomes }: Figures): void {
  const results: AmdResult[] = ['human', 'machine', 'unknown'];
  console.log('| truth \\ verdict | human | machine | unknown |');
  console.log('|---|---|---|---|');
  for (const label of ['human', 'machine'] as const) {
    const row = outcomes.filter((o) => o.call.label === label);
    console.log(`| ${label} (${row.length}) | ${results.map((r) => row.filter((o) => o.outcome.result === r).length).join(' | ')} |`);
  }
  const recall = (label: Label) => recallOf(outcomes, label);
  const unknown = (outcomes.filter((o) => o.outcome.result === 'unknown').length / outcomes.length) * 100;
  const correct = outcomes.filter((o) => o.outcome.result === o.call.label).length;
  console.log(
    `\naccuracy ${((correct / outcomes.length) * 100).toFixed(1)} % (${correct} of ${outcomes.length}); machine recall ${recall('machine').toFixed(1)} %, human recall ${recall('human').toFixed(1)} %, unknown ${unknown.toFixed(1)} %`,
  );
  for (const long of [false, true]) {
    const answers = outcomes.filter((o) => o.call.label === 'human' && o.call.speechEndS - o.call.speechStartS >= 2 === long);
    const found = answers.filter((o) => o.outcome.result === 'human').length;
    console.log(`people who spoke ${long ? 'for 2 s or more' : 'for less than 2 s'}: ${found} of ${answers.length} recognised`);
  }
  const machines = outcomes.filter((o) => o.call.label === 'machine' && o.outcome.result === 'machine');
  const humans = outcomes.filter((o) => o.call.label === 'human' && o.outcome.result === 'human');
  const beforeEnd = machines.filter((o) => o.outcome.afterMs < o.call.speechEndS * 1000).length;
  console.log('\n| decision time | p50 | p95 |');
  console.log('|---|---|---|');
  const row = (what: string, values: number[]) => console.log(`| ${what} | ${ms(percentile(values, 50))} | ${ms(percentile(values, 95))} |`);
  row(
    'machine, from the answer',
    machines.map((o) => o.outcome.afterMs),
  );
  row(
    'human, from the answer',
    humans.map((o) => o.outcome.afterMs),
  );
  row(
    'human, after the end of speech',
    humans.map((o) => o.outcome.afterMs - o.call.speechEndS * 1000),
  );
  console.log(`\nmachines found before their greeting ended: ${beforeEnd} of ${machines.length}`);
  const wrong = outcomes.filter((o) => o.outcome.result !== o.call.label);
  if (wrong.length > 0) console.log('\nnot recognised:');
  for (const o of wrong) console.log(`  ${o.call.label} → ${o.outcome.result} (${o.outcome.reason}, ${o.outcome.afterMs} ms): ${o.call.name}`);
}

/** The beep wait from the detector's verdict on, for the machines it found. */
function printBeepWait({ outcomes }: Figures): void {
  const beepErrors: number[] = [];
  const silenceAfterEnd: number[] = [];
  let missed = 0;
  let falseBeeps = 0;
  for (const { call, outcome } of outcomes) {
    if (call.label !== 'machine' || outcome.result !== 'machine') continue;
    const fromMs = outcome.afterMs;
    const waited = outcome.reason === 'beep' ? { beep: true, afterMs: 0 } : feedFrames(new BeepWaiter(call.rateHz), call.pcm, (fromMs / 1000) * call.rateHz)!;
    const atMs = fromMs + waited.afterMs;
    if (call.beepEndS !== null) {
      if (waited.beep) beepErrors.push(atMs - call.beepEndS * 1000);
      else missed++;
    } else if (waited.beep) falseBeeps++;
    else silenceAfterEnd.push(atMs - call.speechEndS * 1000);
  }
  const abs = beepErrors.map(Math.abs);
  console.log('\n| beep wait (machines found) | figure |');
  console.log('|---|---|');
  console.log(`| beeps found | ${beepErrors.length} of ${beepErrors.length + missed} |`);
  console.log(`| found − the beep's end | p50 ${ms(percentile(beepErrors, 50))}, max |error| ${ms(Math.max(...abs))} |`);
  console.log(`| beeps reported on machines without one | ${falseBeeps} |`);
  console.log(
    `| without a beep: end of greeting found after its last word | p50 ${ms(percentile(silenceAfterEnd, 50))}, p95 ${ms(percentile(silenceAfterEnd, 95))} |`,
  );
}

/** Garbage collections while `work` runs (they are reported to the observer asynchronously). */
async function collectionsDuring(work: () => void): Promise<number> {
  let collections = 0;
  const observer = new PerformanceObserver((list) => (collections += list.getEntries().length));
  observer.observe({ entryTypes: ['gc'] });
  work();
  await new Promise((resolve) => setTimeout(resolve, 100));
  observer.disconnect();
  return collections;
}

/** Each call's audio cut into 20 ms frames beforehand, so that what is collected later is the detectors' own. */
const framesOf = (calls: readonly Call[], rateHz: number): Int16Array[][] =>
  calls.map((call) =>
    Array.from({ length: Math.floor(call.pcm.length / (rateHz / 50)) }, (_, k) => call.pcm.subarray((k * rateHz) / 50, ((k + 1) * rateHz) / 50)),
  );

/** Options under which the detector decides on nothing but a beep: every frame gets the full work. */
const NEVER = { initialSilenceMs: Infinity, greetingMs: Infinity, afterGreetingSilenceMs: Infinity, maxWords: Infinity, maxAnalysisMs: Infinity };

/**
 * Cost of a frame at a rate: every frame of every call at that rate through new detectors
 * (median of 7 rounds after one to warm up), with the collections meanwhile; then one detector
 * fed a million frames (the calls without a beep over and over), to show what a frame allocates.
 */
async function printCost(calls: readonly Call[]): Promise<void> {
  console.log('\n| rate | µs per 20 ms frame (median of 7 rounds) | frames a round | detectors made | garbage collections |');
  console.log('|---|---|---|---|---|');
  for (const rateHz of [8000, 16000]) {
    const framed = framesOf(
      calls.filter((call) => call.rateHz === rateHz),
      rateHz,
    );
    const frames = framed.reduce((sum, call) => sum + call.length, 0);
    const round = (): void => {
      for (const call of framed) {
        const detector = new AnsweringMachineDetector(rateHz, NEVER);
        for (const frame of call) detector.push(frame);
      }
    };
    round();
    const rounds: number[] = [];
    const collections = await collectionsDuring(() => {
      for (let k = 0; k < 7; k++) {
        const started = performance.now();
        round();
        rounds.push(((performance.now() - started) * 1000) / frames);
      }
    });
    console.log(`| ${rateHz} Hz | ${percentile(rounds, 50).toFixed(2)} | ${frames} | ${7 * framed.length} | ${collections} |`);
  }
  const plain = framesOf(
    calls.filter((call) => call.rateHz === 8000 && call.beepEndS === null),
    8000,
  ).flat();
  const detector = new AnsweringMachineDetector(8000, NEVER);
  let fed = 0;
  const collections = await collectionsDuring(() => {
    while (fed < 1_000_000)
      for (const frame of plain) {
        detector.push(frame);
        fed++;
      }
  });
  console.log(`\none detector, ${fed} frames at 8 kHz: ${collections} garbage collections${detector.decision ? ' (it decided: the figure is void)' : ''}`);
}

/** Calls without a beep in which the beep tracker finds one anywhere (speech taken for a tone). */
function falseBeeps(calls: readonly Call[]): number {
  const listenToAll = { endSilenceMs: Infinity, maxWaitMs: Infinity };
  return calls.filter((call) => call.beepEndS === null && feedFrames(new BeepWaiter(call.rateHz, listenToAll), call.pcm)?.beep).length;
}

const calls = await buildCalls();
console.log(`Answering-machine detection, ${calls.length} synthetic calls (eSpeak NG, line noise ±50):\n`);
const figures = classify(calls, {});
printClassification(figures);
printBeepWait(figures);
console.log(`\nbeeps found in calls without one, listening to the whole call: ${falseBeeps(calls)} of ${calls.filter((c) => c.beepEndS === null).length}`);
await printCost(calls);

console.log('\nThe same calls on other lines:\n');
console.log('| line | accuracy | machine recall | human recall | unknown |');
console.log('|---|---|---|---|---|');
for (const line of LINES) {
  const { outcomes } = classify(calls, {}, (call) => onLine(call, calls.indexOf(call), line));
  const share = (count: number) => `${((count / outcomes.length) * 100).toFixed(1)} %`;
  const correct = outcomes.filter((o) => o.outcome.result === o.call.label).length;
  const unknown = outcomes.filter((o) => o.outcome.result === 'unknown').length;
  console.log(
    `| ${line.name} | ${share(correct)} | ${recallOf(outcomes, 'machine').toFixed(1)} % | ${recallOf(outcomes, 'human').toFixed(1)} % | ${share(unknown)} |`,
  );
}

console.log('\nThe greeting length against the set (other rules at their defaults):\n');
console.log('| greeting length | human recall | machine recall | machine decided, p50 |');
console.log('|---|---|---|---|');
for (const greetingMs of [1500, 1800, 2000, 2500, 3000]) {
  const { outcomes } = classify(calls, { greetingMs });
  const recall = (label: Label) => `${recallOf(outcomes, label).toFixed(1)} %`;
  const found = outcomes.filter((o) => o.call.label === 'machine' && o.outcome.result === 'machine').map((o) => o.outcome.afterMs);
  console.log(`| ${greetingMs} ms | ${recall('human')} | ${recall('machine')} | ${ms(percentile(found, 50))} |`);
}
