import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { callApi, CLIENT_HELP, CLIENT_OPTIONS } from './api-client.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr stt`. */
export const STT_HELP = `sprachrohr stt — transcribe a recording through the API

Usage:
  sprachrohr stt FILE [--lang CODES] [--vocabulary TERMS]

  FILE               WAV (PCM, float, µ-law, A-law), Ogg Opus or FLAC; ≤ 25 MB, ≤ 5 min
  --lang CODES       one code, comma-separated candidates, or auto (default de-CH)
  --vocabulary TERMS comma-separated list or JSON array of expected terms
${CLIENT_HELP}

Prints the transcript as JSON: text, lang, words (w, start, end, conf), duration_s.
`;

/** Runs `sprachrohr stt`; returns what to print. */
export async function sttCommand(argv: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { lang: { type: 'string' }, vocabulary: { type: 'string' }, ...CLIENT_OPTIONS },
  });
  const [file] = positionals;
  if (!file || positionals.length > 1) throw new UsageError('name exactly one audio FILE');
  let bytes: Buffer;
  try {
    bytes = await fs.readFile(file);
  } catch (error) {
    throw new UsageError(`cannot read ${file}: ${(error as Error).message}`);
  }
  const form = new FormData();
  form.append('audio', new Blob([bytes]), path.basename(file));
  if (values.lang) form.append('lang', values.lang);
  if (values.vocabulary) form.append('vocabulary', values.vocabulary);
  const response = await callApi(values, '/stt', { method: 'POST', body: form });
  return JSON.stringify(await response.json(), null, 2);
}
