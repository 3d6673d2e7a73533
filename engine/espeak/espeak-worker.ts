/**
 * A worker thread that owns one eSpeak NG (its own copy of the native library, see
 * `espeak-native.ts`). Synthesis is synchronous inside eSpeak, so it runs here, never on the
 * event loop; audio goes back chunk by chunk as eSpeak's callback delivers it (about every
 * 100 ms of audio).
 */
import os from 'node:os';
import { parentPort, workerData } from 'node:worker_threads';
import { EspeakNative } from './espeak-native.js';
import type { SynthesisJob, WarmJob, WorkerMessage } from './espeak-protocol.js';

const port = parentPort;
if (!port) throw new Error('espeak-worker must run in a worker thread');

const post = (message: WorkerMessage, transfer: ArrayBuffer[] = []): void => port.postMessage(message, transfer);

const settings = workerData as { libraryPath: string; nice?: number };
// A background worker lowers its own priority (Linux applies it to this thread only; lowering
// needs no privilege), so that the interactive workers and the event loop get the cores first.
if (settings.nice !== undefined) os.setPriority(settings.nice);
// A library that cannot load ends the thread with its reason; the pool's start reports it.
const espeak = new EspeakNative(settings.libraryPath);

function synthesize(job: SynthesisJob): void {
  const abort = new Int32Array(job.abort);
  if (!espeak.setVoice(job.voice)) throw new Error(`eSpeak has no voice ${job.voice}`);
  espeak.setDelivery(job.wordsPerMinute, job.pitch, job.range);
  let aborted = false;
  espeak.synthesize(job.ssml, (pcm, events) => {
    if (pcm.length > 0 || events.length > 0) post({ type: 'chunk', id: job.id, pcm, events }, [pcm.buffer as ArrayBuffer]);
    // Returning true stops eSpeak before the next chunk.
    aborted = Atomics.load(abort, 0) === 1;
    return aborted;
  });
  post({ type: 'done', id: job.id, aborted, sampleRateHz: espeak.sampleRateHz });
}

function warm(job: WarmJob): void {
  for (const voice of job.voices) {
    if (!espeak.setVoice(voice)) throw new Error(`eSpeak has no voice ${voice}`);
    espeak.synthesize('<speak>1 2 3, ok.</speak>', () => false);
  }
  post({ type: 'done', id: job.id, aborted: false, sampleRateHz: espeak.sampleRateHz });
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
