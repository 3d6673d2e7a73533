import { parseArgs } from 'node:util';
import { createDialectRenderer } from '../../engine/registry.js';
import { findLanguage } from '../catalog/languages.js';
import { prepareSpeech } from '../speech/synthesis-service.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr dialect`. */
export const DIALECT_HELP = `sprachrohr dialect — show how Standard German is rendered into a Swiss German dialect

Usage: sprachrohr dialect --dialect REGION [--ipa] "TEXT" [...]

  --dialect REGION   one of the de-CH dialects (default standard)
  --ipa              also print how it is pronounced, in IPA (/…/ per word;
                     words in [brackets] are left to the engine to read)

Prints the text as synthesis speaks it: numbers, dates, times and money written
out, then rendered into the region's words (for reviewing the dialect data).
`;

/** Runs `sprachrohr dialect`; returns what to print. */
export async function dialectCommand(argv: string[]): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: { dialect: { type: 'string', default: 'standard' }, ipa: { type: 'boolean', default: false } },
  });
  const dialects = findLanguage('de-CH')!.dialects.map((d) => d.id);
  if (!dialects.includes(values.dialect)) throw new UsageError(`--dialect must be one of ${dialects.join(', ')}`);
  if (positionals.length === 0) throw new UsageError('give the text to render');
  const renderer = createDialectRenderer();
  return positionals
    .map((text) => {
      const document = prepareSpeech({ passages: [{ language: 'de-CH', dialect: values.dialect, items: [{ type: 'text', text }] }] }, renderer);
      const item = document.passages[0]!.items[0]!;
      if (item.type !== 'text') return '';
      if (!values.ipa) return item.text;
      const said = (item.pronunciation ?? [{ text: item.text, ipa: null }])
        .map((span) => (span.ipa !== null ? `/${span.ipa}/` : span.text.replace(/\S+/gu, (word) => (/^\p{P}+$/u.test(word) ? word : `[${word}]`))))
        .join('');
      return `${item.text}\n${said}`;
    })
    .join('\n');
}
