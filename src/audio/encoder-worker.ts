/**
 * A worker thread that resamples and encodes syntheses for background work (jobs), at a low
 * priority, so that none of that work runs on the event loop or takes a core from interactive
 * requests while they need it. Streams are encoded as their audio arrives, so the encoding of
 * a long text overlaps its synthesis.
 */
import os from 'node:os';
import { parentPort } from 'node:worker_threads';
import type { EncodeResult, EncoderCommand, PcmRun } from './encoder-protocol.js';
import { loadMp3Encoder } from './mp3-encoder.js';
import { RateMatcher } from './rate-matcher.js';
import { loadResampler } from './resampler.js';
import { createStreamEncoder, type StreamEncoder } from './stream-encoder.js';

const port = parentPort;
if (!port) throw new Error('encoder-worker must run in a worker thread');

/** Nice value of this thread (Linux applies it to the calling thread only; lowering needs no privilege). */
const NICE = 10;
/** Samples handed to the resampler and encoder at once: bounds the WebAssembly memory a long run needs. */
const SLICE = 24_000;

os.setPriority(NICE);
await loadResampler();

/** One stream being encoded; `failure` once something went wrong (reported at its finish). */
interface Stream {
  encoder: StreamEncoder | null;
  readonly rate: RateMatcher;
  readonly parts: Uint8Array[];
  samples: number;
  failure: string | null;
}

const streams = new Map<number, Stream | Promise<Stream>>();

async function open(format: EncoderCommand & { type: 'open' }): Promise<Stream> {
  const stream: Stream = { encoder: null, rate: new RateMatcher(format.sampleRateHz), parts: [], samples: 0, failure: null };
  try {
    if (format.format === 'mp3') await loadMp3Encoder(1);
    stream.encoder = await createStreamEncoder(format.format, format.sampleRateHz, format.serial);
  } catch (error) {
    stream.failure = messageOf(error);
  }
  return stream;
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

function encode(stream: Stream, pcm: Int16Array): void {
  stream.samples += pcm.length;
  if (pcm.length > 0) stream.parts.push(...stream.encoder!.write(pcm));
}

function write(stream: Stream, runs: readonly PcmRun[]): void {
  if (stream.failure) return;
  try {
    for (const run of runs) {
      for (let at = 0; at < run.pcm.length; at += SLICE) encode(stream, stream.rate.push(run.pcm.subarray(at, at + SLICE), run.rateHz));
    }
  } catch (error) {
    stream.failure = messageOf(error);
  }
}

/** Closes the stream's resampler and encoder; the bytes, or why there are none. */
function finish(id: number, stream: Stream): EncodeResult {
  try {
    if (!stream.failure) {
      const tail = stream.rate.finish();
      if (tail) encode(stream, tail);
      stream.parts.push(...stream.encoder!.end());
      stream.encoder = null;
    }
  } catch (error) {
    stream.failure = messageOf(error);
  }
  drop(stream);
  if (stream.failure) return { id, ok: false, message: stream.failure };
  // One fresh buffer, so that it can be handed over without copying.
  const audio = new Uint8Array(stream.parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of stream.parts) {
    audio.set(part, offset);
    offset += part.length;
  }
  return { id, ok: true, audio, samples: stream.samples };
}

/** Frees what a stream holds (an MP3 encoder goes back to its pool). */
function drop(stream: Stream): void {
  stream.rate.finish();
  try {
    stream.encoder?.end();
  } catch {
    // The encoder failed already; that failure is the one reported.
  }
  stream.encoder = null;
}

// Commands of one stream are handled in order: each waits for the stream's opening.
port.on('message', (command: EncoderCommand) => {
  if (command.type === 'open') {
    const opening = open(command);
    streams.set(command.id, opening);
    void opening.then((stream) => {
      if (streams.has(command.id)) streams.set(command.id, stream);
    });
    return;
  }
  const entry = streams.get(command.id);
  if (!entry) return;
  void Promise.resolve(entry).then((stream) => {
    if (command.type === 'write') return write(stream, command.runs);
    streams.delete(command.id);
    if (command.type === 'abandon') return drop(stream);
    const result = finish(command.id, stream);
    port.postMessage(result, result.ok ? [result.audio.buffer as ArrayBuffer] : []);
  });
});
port.postMessage('ready');
