/**
 * A worker thread that owns one eSpeak NG instance (WebAssembly). Synthesis is synchronous
 * inside eSpeak, so it runs here, never on the event loop; audio goes back chunk by chunk as
 * eSpeak's callback delivers it (about every 100 ms of audio).
 */
import { parentPort } from 'node:worker_threads';
import EspeakModule from '@echogarden/espeak-ng-emscripten';
import type { EspeakEvent, SynthesisJob, WarmJob, WorkerMessage } from './espeak-protocol.js';

interface RawEvent {
  type: string;
  text_position: number;
  word_length: number;
  audio_position: number;
  id?: string | number;
}

interface EspeakInstance {
  set_voice(name: string): number;
  set_rate(wordsPerMinute: number): void;
  set_pitch(pitch: number): void;
  set_range(range: number): void;
  synthesize(text: string, callback: (audio: Int16Array, events: RawEvent[]) => boolean): number;
  readonly samplerate: number;
}

const port = parentPort;
if (!port) throw new Error('espeak-worker must run in a worker thread');

const module = (await (EspeakModule as unknown as () => Promise<{ eSpeakNGWorker: new () => EspeakInstance }>)());
const espeak = new module.eSpeakNGWorker();

const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

function toEvent(raw: RawEvent): EspeakEvent | undefined {
  if (raw.type !== 'word' && raw.type !== 'sentence' && raw.type !== 'mark' && raw.type !== 'end') return undefined;
  return {
    type: raw.type,
    textPosition: raw.text_position,
    length: raw.word_length,
    audioPositionMs: raw.audio_position,
    ...(raw.type === 'mark' ? { name: String(raw.id) } : {}),
  };
}

function synthesize(job: SynthesisJob): void {
  const abort = new Int32Array(job.abort);
  if (espeak.set_voice(job.voice) !== 0) throw new Error(`eSpeak has no voice ${job.voice}`);
  espeak.set_rate(job.wordsPerMinute);
  espeak.set_pitch(job.pitch);
  espeak.set_range(job.range);
  let aborted = false;
  espeak.synthesize(job.ssml, (audio, rawEvents) => {
    const events = rawEvents.map(toEvent).filter((e): e is EspeakEvent => e !== undefined);
    if (audio.length > 0 || events.length > 0) post({ type: 'chunk', id: job.id, pcm: audio, events }, [audio.buffer as ArrayBuffer]);
    // Returning true stops eSpeak before the next chunk.
    aborted = Atomics.load(abort, 0) === 1;
    return aborted;
  });
  post({ type: 'done', id: job.id, aborted, sampleRateHz: espeak.samplerate });
}

function warm(job: WarmJob): void {
  for (const voice of job.voices) {
    espeak.set_voice(voice);
    espeak.synthesize('<speak>1 2 3, ok.</speak>', () => false);
  }
  post({ type: 'done', id: job.id, aborted: false, sampleRateHz: espeak.samplerate });
}

port.on('message', (job: SynthesisJob | WarmJob) => {
  try {
    if (job.type === 'synthesize') synthesize(job);
    else warm(job);
  } catch (error) {
    post({ type: 'error', id: job.id, message: error instanceof Error ? error.message : String(error) });
  }
});
post({ type: 'ready' });
