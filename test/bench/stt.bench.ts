/**
 * Live recognition, measured: word error rate per evaluation set (Debian's real English test
 * recordings; English IVR sentences spoken by eSpeak NG), each at 16 kHz and as 8 kHz µ-law
 * telephone audio going through the same decode-and-resample path as `POST /v1/stt`; batch
 * real-time factor; streaming partial lag and final latency beyond the endpointing hangover
 * with audio fed in real time; memory per open stream; throughput of one worker; voice
 * activity detection per frame.
 * Run: npm run bench (or: node --single-threaded-gc --import tsx test/bench/stt.bench.ts)
 */
import { readFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { encodeMulaw } from '../../src/audio/g711.js';
import { Resampler } from '../../src/audio/resampler.js';
import { parseWav } from '../../src/audio/wav.js';
import { findPocketsphinx, PocketsphinxEngine } from '../../engine/pocketsphinx/pocketsphinx-engine.js';
import type { SttEvent } from '../../engine/types.js';
import { DEFAULT_ENDPOINTER_OPTIONS } from '../../engine/vad/endpointer.js';
import { WebRtcVad } from '../../engine/vad/webrtc-vad.js';
import { concatPcm } from '../../src/audio/pcm.js';
import { decodeRecording } from '../../src/speech/recognition-service.js';
import { recognizeLive } from '../../src/speech/live-recognition.js';
import { customWav } from '../helpers/audio-fixtures.js';
import { wordErrors } from '../helpers/pocketsphinx.js';
import { silencePcm, SpeechAudio } from '../helpers/speech-audio.js';

const DATA = '/usr/share/pocketsphinx/test/data';
const RATE = 16000;

/** The English IVR sentences of the synthetic set (written for this benchmark). */
export const IVR_SENTENCES = [
  'i would like to pay my bill',
  'what are your opening hours',
  'please transfer me to an agent',
  'i want to cancel my order',
  'my internet connection is not working',
  'can you repeat that please',
  'yes that is correct',
  'no thank you',
  'i need to change my address',
  'when will my package arrive',
  'i lost my card',
  'check my account balance',
];

export interface Item {
  readonly id: string;
  readonly reference: string;
  readonly pcm: Int16Array;
}

export const words = (text: string) =>
  text
    .toLowerCase()
    .replace(/[^a-z' ]/g, ' ')
    .split(/\s+/)
    .filter(Boolean);

/** A 16-bit PCM WAV file (or a headerless one) as samples. */
function readWave(path: string): Int16Array {
  const bytes = readFileSync(path);
  if (bytes.toString('ascii', 0, 4) !== 'RIFF') return new Int16Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length));
  const info = parseWav(bytes);
  return new Int16Array(bytes.buffer.slice(bytes.byteOffset + info.dataOffset, bytes.byteOffset + info.dataOffset + info.dataBytes));
}

/** Debian's `pocketsphinx-testdata`: real recordings with their transcripts (16 kHz). */
export function debianRecordings(): Item[] {
  const items: Item[] = [];
  const read = (folder: string, list: string, name: (id: string) => string) => {
    for (const line of readFileSync(`${DATA}/${folder}/${list}`, 'utf8').trim().split('\n')) {
      const id = /\(([^)]+)\)\s*$/.exec(line)![1]!;
      // "mr" is written out the way the dictionary spells the spoken word.
      const reference = line
        .replace(/<\/?s>/g, '')
        .replace(/\([^)]*\)\s*$/, '')
        .trim()
        .replace(/\bmr\b/g, 'mister');
      items.push({ id: `${folder}/${id}`, reference, pcm: readWave(`${DATA}/${folder}/${name(id)}`) });
    }
  };
  read('cards', 'cards.transcription', (id) => `${id}.wav`);
  read('librivox', 'transcription', (id) => `${id}.wav`);
  items.push({ id: 'goforward', reference: 'go forward ten meters', pcm: readWave(`${DATA}/goforward.raw`) });
  return items;
}

export function wav(pcm: Int16Array, rateHz: number): Buffer {
  return customWav({ tag: 1, channels: 1, rate: rateHz, bits: 16, data: Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength) });
}

/** 16 kHz speech as a telephone line carries it: 8 kHz µ-law WAV (SpeexDSP resampler, as the service uses). */
export function telephoneWav(pcm: Int16Array): Buffer {
  const resampler = new Resampler(RATE, 8000);
  const narrow = concatPcm([resampler.process(pcm), resampler.flush()]);
  resampler.destroy();
  return customWav({ tag: 7, channels: 1, rate: 8000, bits: 8, data: Buffer.from(encodeMulaw(narrow)) });
}

/** Microseconds WebRTC voice activity detection takes per 20 ms frame of speech at 16 kHz. */
function vadMicroseconds(pcm: Int16Array): number {
  const vad = WebRtcVad.create(RATE);
  const frames = Math.floor(pcm.length / 320);
  const started = performance.now();
  for (let round = 0; round < 20; round++) for (let frame = 0; frame < frames; frame++) vad.isSpeech(pcm.subarray(frame * 320, frame * 320 + 320));
  const perFrame = ((performance.now() - started) * 1000) / (20 * frames);
  vad.close();
  return perFrame;
}

export interface SttFigures {
  wer: Array<{ set: string; audio: string; vocabulary: string; words: number; errors: number; wer: number }>;
  batchRtf: number;
  partialLagMs: { p50: number; p95: number; count: number };
  finalBeyondHangoverMs: { p50: number; p95: number; count: number };
  memoryPerStreamMb: number;
  streamThroughput: { streams: number; audioSeconds: number; wallSeconds: number; realTimeStreamsPerWorker: number };
  vadMicrosecondsPerFrame: number;
}

export const percentile = (values: number[], p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor((p / 100) * values.length))] ?? NaN;

/** Runs every measurement (one recogniser worker, as on a two-core machine). */
export async function benchStt(): Promise<SttFigures> {
  const found = await findPocketsphinx();
  if (!found.available) throw new Error(found.reason);
  const engine = await PocketsphinxEngine.start({ modelDir: found.modelDir, languages: ['en'], workers: 1 });
  const recognisers = { engines: [engine], engineFor: () => engine, languages: ['en'], unavailable: [], languageId: null, voiceActivity: 'webrtc' as const };
  const speech = await SpeechAudio.start();
  try {
    const debian = debianRecordings();
    const synthetic: Item[] = [];
    for (const [index, sentence] of IVR_SENTENCES.entries()) {
      synthetic.push({ id: `ivr-${index}`, reference: sentence, pcm: await speech.speak(sentence, RATE, 'en', index % 2 ? 'jonas' : 'anna') });
    }
    const figures: SttFigures['wer'] = [];
    let processing = 0;
    let audioSeconds = 0;
    const evaluate = async (set: string, items: Item[], audio: '16 kHz' | '8 kHz µ-law', vocabulary: string[]) => {
      let errors = 0;
      let total = 0;
      for (const item of items) {
        const padded = concatPcm([silencePcm(0.3, RATE), item.pcm, silencePcm(0.6, RATE)]);
        const bytes = audio === '16 kHz' ? wav(padded, RATE) : telephoneWav(padded);
        const started = performance.now();
        const decoded = await decodeRecording(bytes);
        const result = await recognizeLive(recognisers, decoded, { candidates: ['en'], vocabulary }, new AbortController().signal);
        if (audio === '16 kHz' && vocabulary.length === 0) {
          processing += performance.now() - started;
          audioSeconds += decoded.durationSeconds;
        }
        errors += wordErrors(words(item.reference).join(' '), words(result.text).join(' '));
        total += words(item.reference).length;
      }
      figures.push({
        set,
        audio,
        vocabulary: vocabulary.length > 0 ? 'the set’s sentences as grammar' : 'open (language model)',
        words: total,
        errors,
        wer: errors / total,
      });
    };
    for (const audio of ['16 kHz', '8 kHz µ-law'] as const) {
      await evaluate('Debian test recordings (11 real, 96 words)', debian, audio, []);
      await evaluate('IVR sentences by eSpeak NG (12)', synthetic, audio, []);
      await evaluate('IVR sentences by eSpeak NG (12)', synthetic, audio, IVR_SENTENCES);
    }

    // Streaming in real time: each 20 ms chunk is written at its deadline.
    const partialLags: number[] = [];
    const finalLags: number[] = [];
    const hangover = DEFAULT_ENDPOINTER_OPTIONS.hangoverMs;
    for (const item of debian.slice(0, 6)) {
      const audio = concatPcm([silencePcm(0.3, RATE), item.pcm, silencePcm(1, RATE)]);
      const stream = engine.open({ language: 'en', vocabulary: [], sampleRateHz: RATE }, new AbortController().signal);
      const start = performance.now();
      const reading = (async () => {
        for await (const event of stream as AsyncIterable<SttEvent>) {
          const now = performance.now() - start;
          if (event.type === 'partial') partialLags.push(now - event.audioSeconds * 1000);
          else finalLags.push(now - event.endSeconds * 1000 - hangover);
        }
      })();
      const chunk = RATE / 50;
      for (let at = 0, n = 0; at < audio.length; at += chunk, n++) {
        const due = start + (n + 1) * 20;
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, due - performance.now())));
        stream.write(audio.subarray(at, at + chunk));
      }
      stream.end();
      await reading;
    }

    // Memory: streams that each hold a decoder mid-utterance.
    const before = process.memoryUsage().rss;
    const open = Array.from({ length: 3 }, () => engine.open({ language: 'en', vocabulary: [], sampleRateHz: RATE }, new AbortController().signal));
    const readers = open.map(async (stream) => {
      for await (const event of stream) void event;
    });
    for (const stream of open) stream.write(debian[6]!.pcm);
    await new Promise((resolve) => setTimeout(resolve, 4000));
    const memoryPerStreamMb = (process.memoryUsage().rss - before) / 3 / 1024 / 1024;
    for (const stream of open) stream.end();
    await Promise.all(readers);

    // Throughput: four streams at once, fed as fast as they are decoded.
    const throughputItems = debian.slice(5, 9);
    const throughputStart = performance.now();
    await Promise.all(
      throughputItems.map(async (item) => {
        const stream = engine.open({ language: 'en', vocabulary: [], sampleRateHz: RATE }, new AbortController().signal);
        const reading = (async () => {
          for await (const event of stream) void event;
        })();
        stream.write(concatPcm([item.pcm, silencePcm(1, RATE)]));
        stream.end();
        await reading;
      }),
    );
    const wallSeconds = (performance.now() - throughputStart) / 1000;
    const throughputAudio = throughputItems.reduce((sum, item) => sum + item.pcm.length / RATE + 1, 0);
    return {
      wer: figures,
      batchRtf: processing / 1000 / audioSeconds,
      partialLagMs: { p50: percentile(partialLags, 50), p95: percentile(partialLags, 95), count: partialLags.length },
      finalBeyondHangoverMs: { p50: percentile(finalLags, 50), p95: percentile(finalLags, 95), count: finalLags.length },
      memoryPerStreamMb,
      streamThroughput: {
        streams: throughputItems.length,
        audioSeconds: throughputAudio,
        wallSeconds,
        realTimeStreamsPerWorker: throughputAudio / wallSeconds,
      },
      vadMicrosecondsPerFrame: vadMicroseconds(debian[6]!.pcm),
    };
  } finally {
    await speech.close();
    await engine.close();
  }
}

/** Prints the figures as docs/performance.md shows them. */
export function printSttFigures(figures: SttFigures): void {
  console.log('\nRecognition (pocketsphinx, US English model; one worker):');
  console.log('| set | audio | vocabulary | words | WER |');
  console.log('|---|---|---|---|---|');
  for (const row of figures.wer) console.log(`| ${row.set} | ${row.audio} | ${row.vocabulary} | ${row.words} | ${(row.wer * 100).toFixed(1)} % |`);
  console.log(`Batch real-time factor (decode, resample, detect, recognise; Debian set, 16 kHz, open): ${figures.batchRtf.toFixed(3)}`);
  console.log(
    `Streaming in real time: partial lag p50 ${figures.partialLagMs.p50.toFixed(0)} ms / p95 ${figures.partialLagMs.p95.toFixed(0)} ms (${figures.partialLagMs.count} partials); final after end of speech beyond the ${DEFAULT_ENDPOINTER_OPTIONS.hangoverMs} ms hangover p50 ${figures.finalBeyondHangoverMs.p50.toFixed(0)} ms / p95 ${figures.finalBeyondHangoverMs.p95.toFixed(0)} ms (${figures.finalBeyondHangoverMs.count} finals)`,
  );
  console.log(`Memory per open stream (its decoder with the language model): ${figures.memoryPerStreamMb.toFixed(0)} MB`);
  const t = figures.streamThroughput;
  console.log(`Voice activity detection: ${figures.vadMicrosecondsPerFrame.toFixed(1)} µs per 20 ms frame`);
  console.log(
    `Throughput: ${t.streams} streams at once, ${t.audioSeconds.toFixed(1)} s of audio in ${t.wallSeconds.toFixed(1)} s on one worker: ${t.realTimeStreamsPerWorker.toFixed(1)} real-time streams per worker (core)`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printSttFigures(await benchStt());
}
