import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { FORMATS } from '../catalog/formats.js';
import { callApi, CLIENT_HELP, CLIENT_OPTIONS } from './api-client.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr tts`. */
export const TTS_HELP = `sprachrohr tts — synthesise text into an audio file through the API

Usage:
  sprachrohr tts --text "Grüezi mitenand" --out hello.mp3 [options]
  sprachrohr tts --in prompt.txt --out prompt.wav [options]

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
${CLIENT_HELP}

Prints the duration and the request id. A sandbox key (sv_test_…) gives
synthetic beeps; a live key gives speech.
`;

function formatFromExtension(file: string): string | undefined {
  const extension = path.extname(file).slice(1).toLowerCase();
  return FORMATS.find((f) => f.extension === extension || f.id === extension)?.id;
}

/** Runs `sprachrohr tts`; returns what to print. */
export async function ttsCommand(argv: string[]): Promise<string> {
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
      ...CLIENT_OPTIONS,
    },
  });
  if (!values.out) throw new UsageError('--out FILE is required');
  if ((values.text === undefined) === (values.in === undefined)) throw new UsageError('give exactly one of --text or --in');
  const text = values.text ?? (values.in === '-' ? await readStdin() : await fs.readFile(values.in!, 'utf8'));
  const number = (flag: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    const parsed = Number(value);
    if (!Number.isFinite(parsed)) throw new UsageError(`${flag} must be a number, not ${value}`);
    return parsed;
  };
  const body = {
    text,
    format: values.format ?? formatFromExtension(values.out) ?? 'mp3',
    sample_rate_hz: number('--rate', values.rate),
    voice: values.voice,
    language: values.language,
    dialect: values.dialect,
    speed: number('--speed', values.speed),
    style: values.style,
    model: values.model,
  };
  const response = await callApi(values, '/tts', {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  const audio = Buffer.from(await response.arrayBuffer());
  await fs.writeFile(values.out, audio);
  const duration = response.headers.get('x-speech-audio-duration');
  return `Wrote ${audio.length} bytes of ${body.format} (${duration} s, ${response.headers.get('x-speech-environment')}) to ${values.out} [${response.headers.get('x-speech-request-id')}]`;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
