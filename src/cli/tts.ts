import { createWriteStream, type WriteStream } from 'node:fs';
import fs from 'node:fs/promises';
import { createInterface } from 'node:readline';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FORMATS } from '../catalog/formats.js';
import { callApi, CLIENT_HELP, CLIENT_OPTIONS, type ClientFlags } from './api-client.js';
import { errorFrameToError, openRealtime } from './realtime-client.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr tts`. */
export const TTS_HELP = `sprachrohr tts — synthesise text into an audio file through the API

Usage:
  sprachrohr tts --text "Grüezi mitenand" --out hello.mp3 [options]
  sprachrohr tts --in prompt.txt --out prompt.wav [options]
  sprachrohr tts --stream --in - --out reply.pcm [options]

  --text TEXT        text or a <speak> document
  --in FILE          read the text from FILE ("-" for standard input)
  --out FILE         where to write the audio (required)
  --format F         ${FORMATS.map((f) => f.id).join('|')} (default: from the --out extension, else mp3)
  --rate HZ          sample rate (per format, see GET /v1/capabilities)
  --voice ID         voice (default anna)
  --language CODE    language, also compact like de-CH-zurich (default de-CH)
  --dialect ID       dialect (default standard)
  --speed X          0.5 to 2 (default 1)
  --style TEXT       delivery prompt
  --model M          studio|swift (default studio)
  --stream           use the realtime endpoint (/v1/tts/stream): audio is written as
                     it arrives, sentence by sentence; with --in - each line read from
                     standard input is sent as soon as it is read. Formats pcm16, mulaw,
                     alaw or opus (default pcm16); --out - writes the audio to stdout.
${CLIENT_HELP}

Prints the duration and the request id. A sandbox key (sv_test_…) gives
synthetic beeps; a live key gives speech.
`;

function formatFromExtension(file: string): string | undefined {
  const extension = path.extname(file).slice(1).toLowerCase();
  return FORMATS.find((f) => f.extension === extension || f.id === extension)?.id;
}

/** Runs `sprachrohr tts`; returns what to print. */
export async function ttsCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values } = parseArgs({
    args: argv,
    options: {
      text: { type: 'string' },
      in: { type: 'string' },
      out: { type: 'string' },
      format: { type: 'string' },
      rate: { type: 'string' },
      voice: { type: 'string' },
      language: { type: 'string' },
      dialect: { type: 'string' },
      speed: { type: 'string' },
      style: { type: 'string' },
      model: { type: 'string' },
      stream: { type: 'boolean', default: false },
      ...CLIENT_OPTIONS,
    },
  });
  if (!values.out) throw new UsageError('--out FILE is required');
  if (values.stream) return streamTts(values, io);
  if ((values.text === undefined) === (values.in === undefined)) throw new UsageError('give exactly one of --text or --in');
  const text = values.text ?? (values.in === '-' ? await readStdin(io.stdin) : await fs.readFile(values.in!, 'utf8'));
  const body: Record<string, unknown> = { text, ...requestFields(values, 'mp3') };
  const response = await callApi(
    values,
    '/tts',
    {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    },
    io.env,
  );
  const audio = Buffer.from(await response.arrayBuffer());
  await fs.writeFile(values.out, audio);
  const duration = response.headers.get('x-speech-audio-duration');
  return `Wrote ${audio.length} bytes of ${String(body['format'])} (${duration} s, ${response.headers.get('x-speech-environment')}) to ${values.out} [${response.headers.get('x-speech-request-id')}]`;
}

/** The fields of a synthesis request the flags give (everything but the text). */
function requestFields(values: Record<string, string | boolean | undefined>, defaultFormat: string): Record<string, unknown> {
  const number = (flag: string, value: string | boolean | undefined): number | undefined => {
    if (typeof value !== 'string') return undefined;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) throw new UsageError(`${flag} must be a number, not ${value}`);
    return parsed;
  };
  return {
    format: (values['format'] as string | undefined) ?? formatFromExtension(values['out'] as string) ?? defaultFormat,
    sample_rate_hz: number('--rate', values['rate']),
    voice: values['voice'],
    language: values['language'],
    dialect: values['dialect'],
    speed: number('--speed', values['speed']),
    style: values['style'],
    model: values['model'],
  };
}

/** `tts --stream`: a realtime session; audio goes to the file as its frames arrive. */
async function streamTts(values: Record<string, string | boolean | undefined> & ClientFlags, io: CommandIo): Promise<string> {
  if ((values['text'] === undefined) === (values['in'] === undefined)) throw new UsageError('give exactly one of --text or --in');
  const fields = Object.fromEntries(Object.entries(requestFields(values, 'pcm16')).filter(([, value]) => value !== undefined));
  const out = values['out'] as string;
  const sink = out === '-' ? io.stdout : createWriteStream(out);
  const socket = await openRealtime(values, '/tts/stream', io.env);
  const started = performance.now();
  let firstAudioMs: number | null = null;
  let bytes = 0;
  const finished = new Promise<Record<string, unknown>>((resolve, reject) => {
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) {
        firstAudioMs ??= performance.now() - started;
        bytes += data.length;
        sink.write(data);
        return;
      }
      const frame = JSON.parse(data.toString('utf8')) as Record<string, unknown>;
      if (frame['type'] === 'error') reject(errorFrameToError(frame));
      if (frame['type'] === 'session.complete') resolve(frame);
    });
    socket.on('close', () => reject(new UsageError('the service closed the session before it completed')));
  });
  finished.catch(() => socket.close());
  socket.send(JSON.stringify({ type: 'session.start', ...fields, transport: 'binary' }));
  if (values['text'] !== undefined) {
    socket.send(JSON.stringify({ type: 'text.append', text: values['text'] }));
  } else if (values['in'] === '-') {
    // Each line goes out as soon as it is read, as a language model's output would.
    for await (const line of createInterface({ input: io.stdin })) socket.send(JSON.stringify({ type: 'text.append', text: `${line}\n` }));
  } else {
    socket.send(JSON.stringify({ type: 'text.append', text: await fs.readFile(values['in'] as string, 'utf8') }));
  }
  socket.send(JSON.stringify({ type: 'session.end' }));
  const complete = await finished;
  if (sink !== io.stdout) await new Promise<void>((resolve) => (sink as WriteStream).end(resolve));
  const first = firstAudioMs === null ? 'no audio' : `first audio after ${Math.round(firstAudioMs)} ms`;
  const report = `Streamed ${bytes} bytes of ${String(fields['format'])} (${String(complete['duration_seconds'])} s in ${String(complete['frames'])} frames, ${first})${out === '-' ? '' : ` to ${out}`}`;
  if (out !== '-') return report;
  // The audio went to stdout: the report goes to stderr.
  io.stderr.write(`${report}\n`);
  return '';
}

async function readStdin(stdin: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
