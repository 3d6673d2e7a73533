import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { AudioDecodeError, decodeAudio } from '../audio/decode.js';
import { concatPcm } from '../audio/pcm.js';
import { loadResampler, Resampler } from '../audio/resampler.js';
import { STT_STREAM_RATE_HZ } from '../catalog/limits.js';
import { ApiError } from '../api/errors.js';
import { parseVocabulary } from '../speech/recognition-request.js';
import { callApi, CLIENT_HELP, CLIENT_OPTIONS, type ClientFlags } from './api-client.js';
import { errorFrameToError, openRealtime } from './realtime-client.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr stt`. */
export const STT_HELP = `sprachrohr stt — transcribe a recording through the API

Usage:
  sprachrohr stt FILE [--lang CODES] [--vocabulary TERMS]
  sprachrohr stt --stream FILE [--lang CODES] [--vocabulary TERMS] [--fast]

  FILE               WAV (PCM, float, µ-law, A-law), Ogg Opus or FLAC; ≤ 25 MB, ≤ 5 min
  --lang CODES       one code, comma-separated candidates, or auto (default de-CH)
  --vocabulary TERMS comma-separated list or JSON array of expected terms
  --stream           use the realtime endpoint (/v1/stt/stream): the recording is sent
                     in 20 ms frames at its own pace (--fast: as fast as possible), and
                     partial and final transcripts are printed as they arrive
${CLIENT_HELP}

Prints the transcript as JSON: text, lang, words (w, start, end, conf), duration_s.
With --stream, one line per partial ("~ [lang] text") and final ("= [lang] text").
`;

/** Runs `sprachrohr stt`; returns what to print. */
export async function sttCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      lang: { type: 'string' },
      vocabulary: { type: 'string' },
      stream: { type: 'boolean', default: false },
      fast: { type: 'boolean', default: false },
      ...CLIENT_OPTIONS,
    },
  });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError('name exactly one audio FILE');
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  if (values.stream) return streamStt(bytes, values, io);
  const form = new FormData();
  form.append('audio', new Blob([bytes]), path.basename(file));
  if (values.lang) form.append('lang', values.lang);
  if (values.vocabulary) form.append('vocabulary', values.vocabulary);
  const response = await callApi(values, '/stt', { method: 'POST', body: form }, io.env);
  return JSON.stringify(await response.json(), null, 2);
}

/** The recording as PCM16 mono at 16 kHz, the realtime endpoint's audio. */
async function toStreamAudio(bytes: Buffer): Promise<Int16Array> {
  let decoded;
  try {
    decoded = await decodeAudio(bytes);
  } catch (error) {
    if (error instanceof AudioDecodeError) throw new UsageError(`cannot decode the recording: ${error.message}`);
    throw error;
  }
  const pcm = Int16Array.from(decoded.samples, (value) => Math.max(-32768, Math.min(32767, Math.round(value * 32767))));
  if (decoded.sampleRateHz === STT_STREAM_RATE_HZ) return pcm;
  await loadResampler();
  const resampler = new Resampler(decoded.sampleRateHz, STT_STREAM_RATE_HZ);
  try {
    return concatPcm([resampler.process(pcm), resampler.flush()]);
  } finally {
    resampler.destroy();
  }
}

/** `stt --stream`: a realtime session fed the recording in 20 ms frames; transcripts printed as they come. */
async function streamStt(
  bytes: Buffer,
  values: { lang?: string | undefined; vocabulary?: string | undefined; fast?: boolean | undefined } & ClientFlags,
  io: CommandIo,
): Promise<string> {
  const audio = await toStreamAudio(bytes);
  let vocabulary: string[];
  try {
    vocabulary = parseVocabulary(values.vocabulary);
  } catch (error) {
    if (error instanceof ApiError) throw new UsageError(`--vocabulary: ${error.detail ?? error.message}`);
    throw error;
  }
  const socket = await openRealtime(values, '/stt/stream', io.env);
  const finals: string[] = [];
  const done = new Promise<void>((resolve, reject) => {
    socket.on('message', (data: Buffer) => {
      const frame = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      if (frame['type'] === 'transcript.partial') io.stdout.write(`~ [${String(frame['lang'])}] ${String(frame['text'])}\n`);
      else if (frame['type'] === 'transcript.final') {
        finals.push(String(frame['text']));
        io.stdout.write(`= [${String(frame['lang'])}] ${String(frame['text'])}\n`);
      } else if (frame['type'] === 'error') reject(errorFrameToError(frame));
      else if (frame['type'] === 'session.complete') resolve();
    });
    socket.on('close', () => reject(new UsageError('the service closed the session before it completed')));
  });
  done.catch(() => socket.close());
  socket.send(JSON.stringify({ type: 'config', ...(values.lang ? { lang: values.lang } : {}), vocabulary }));
  const frame = STT_STREAM_RATE_HZ / 50;
  const start = performance.now();
  for (let at = 0, n = 1; at < audio.length; at += frame, n++) {
    // At the recording's own pace unless --fast: each frame leaves when it would have been recorded.
    if (!values.fast) await new Promise((resolve) => setTimeout(resolve, Math.max(0, start + n * 20 - performance.now())));
    const piece = audio.subarray(at, at + frame);
    socket.send(Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength));
  }
  socket.send(JSON.stringify({ type: 'audio.end' }));
  await done;
  socket.close();
  return `${finals.length} final transcript${finals.length === 1 ? '' : 's'}, ${(audio.length / STT_STREAM_RATE_HZ).toFixed(2)} s of audio`;
}
