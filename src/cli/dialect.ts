import { once } from 'node:events';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import type { DialectRenderer } from '../../engine/dialect/dialect-renderer.js';
import { explainRendering, RenderSteps } from '../../engine/dialect/render-trace.js';
import { createDialectRenderer } from '../../engine/registry.js';
import { findLanguage } from '../catalog/languages.js';
import type { Env } from '../config-values.js';
import { lexiconLocation, loadLexicon } from '../speech/lexicon-loader.js';
import { prepareSpeech } from '../speech/synthesis-service.js';
import { shippedDialplans } from '../telephony/telephony-config.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr dialect`. */
export const DIALECT_HELP = `sprachrohr dialect — show how Standard German is rendered into a Swiss German dialect

Usage: sprachrohr dialect --dialect REGION [--ipa] [--explain] [--dialect-text] ["TEXT" ...]

  --dialect REGION   one of the de-CH dialects (default standard)
  --ipa              also print how it is pronounced, in IPA (/…/ per word;
                     words in [brackets] are left to the engine to read)
  --explain          after each rendering, one line per step: what was replaced,
                     by what, and the data behind it — deployment lexicon entry,
                     phrase, pattern, formal verb, number words, word row or
                     spelling rules, each with its source note
  --dialect-text     the text is written in the dialect already (dialect_text):
                     only numbers, dates, times and money are rendered

Prints the text as synthesis speaks it: numbers, dates, times and money written
out, then rendered into the region's words (for reviewing the dialect data).
Without TEXT, reads standard input and prints one rendering per line as each
line arrives (a file of sentences in one run). The deployment lexicon applies:
the file SPRACHROHR_LEXICON_FILE names, else lexicon.yaml beside the dialplans
(SPRACHROHR_DIALPLANS_DIR).
`;

/** The renderer with the deployment's lexicon, as `serve` would have it. */
export async function deploymentRenderer(env: Env, dialplansDir?: string): Promise<DialectRenderer> {
  const renderer = createDialectRenderer();
  const directory = dialplansDir ?? (env['SPRACHROHR_DIALPLANS_DIR'] ? path.resolve(env['SPRACHROHR_DIALPLANS_DIR']) : shippedDialplans());
  renderer.setLexicon((await loadLexicon(lexiconLocation(env, directory)))?.lexicon ?? null);
  return renderer;
}

/** Runs `sprachrohr dialect`; returns what to print (nothing when it printed standard input's renderings itself). */
export async function dialectCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      dialect: { type: 'string', default: 'standard' },
      ipa: { type: 'boolean', default: false },
      explain: { type: 'boolean', default: false },
      'dialect-text': { type: 'boolean', default: false },
    },
  });
  const dialects = findLanguage('de-CH')!.dialects.map((d) => d.id);
  if (!dialects.includes(values.dialect)) throw new UsageError(`--dialect must be one of ${dialects.join(', ')}`);
  if (values['dialect-text'] && values.dialect === 'hochdeutsch')
    throw new UsageError('--dialect-text needs a Swiss German dialect; hochdeutsch is read as written');
  const renderer = await deploymentRenderer(io.env);
  const show = (text: string): string => {
    const trace = values.explain ? new RenderSteps() : undefined;
    const document = prepareSpeech({ passages: [{ language: 'de-CH', dialect: values.dialect, items: [{ type: 'text', text }] }] }, renderer, undefined, {
      dialectText: values['dialect-text'],
      ...(trace ? { trace } : {}),
    });
    const item = document.passages[0]!.items[0]!;
    if (item.type !== 'text') return '';
    const lines = [item.text];
    if (values.ipa)
      lines.push(
        (item.pronunciation ?? [{ text: item.text, ipa: null }])
          .map((span) => (span.ipa !== null ? `/${span.ipa}/` : span.text.replace(/\S+/gu, (word) => (/^\p{P}+$/u.test(word) ? word : `[${word}]`))))
          .join(''),
      );
    if (trace) lines.push(...explainRendering(trace.steps, values.dialect));
    return lines.join('\n');
  };
  if (positionals.length > 0) return positionals.map(show).join('\n');
  await eachLine(io, (line) => `${show(line)}\n`);
  return '';
}

/**
 * Answers standard input line by line: the lines of one read are answered together in one
 * write, as soon as they are read (a pipe fed slowly gets each answer at once); reading waits
 * while standard output is full.
 */
async function eachLine(io: CommandIo, answer: (line: string) => string): Promise<void> {
  const lines = createInterface({ input: io.stdin, crlfDelay: Infinity });
  let pending: string[] = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    if (pending.length === 0) return;
    const written = io.stdout.write(pending.join(''));
    pending = [];
    if (!written) {
      lines.pause();
      io.stdout.once('drain', () => lines.resume());
    }
  };
  lines.on('line', (line) => {
    pending.push(answer(line));
    if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  });
  await once(lines, 'close');
  flush();
}
