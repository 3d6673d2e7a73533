/**
 * Text already written in a Swiss German dialect (`dialect_text`): the author's words stay as
 * written, and only what normalisation wrote out for them (numbers, dates, clock times, money,
 * phone numbers) is rendered into the dialect, as it would be in a rendered text.
 */
import type { DialectRenderer } from '../../engine/dialect/dialect-renderer.js';

/**
 * `said` is `written` after clock times and normalisation; the stretches of words `said` has
 * that `written` does not (a word-level diff) are rendered into the dialect, every other word
 * and all spacing stay as in `said`.
 */
export function renderWrittenOut(written: string, said: string, dialect: string | null, renderer: DialectRenderer): string {
  if (written === said) return said;
  const before = written.split(/\s+/u).filter((word) => word !== '');
  const parts = said.split(/(\s+)/u);
  const after = parts.filter((_, index) => index % 2 === 0);
  const kept = commonWords(before, after);
  let out = '';
  let run: string[] = [];
  const flush = (): void => {
    if (run.length === 0) return;
    const text = run.join('');
    // The run's spacing stays outside what is rendered.
    const trailing = /\s*$/u.exec(text)![0];
    out += renderer.render(text.slice(0, text.length - trailing.length), dialect) + trailing;
    run = [];
  };
  parts.forEach((part, index) => {
    if (index % 2 === 1) {
      if (run.length > 0) run.push(part);
      else out += part;
    } else if (kept[index / 2]) {
      flush();
      out += part;
    } else if (part !== '') {
      run.push(part);
    }
  });
  flush();
  return out;
}

/** For each word of `after`: whether it is one of a longest common subsequence with `before`. */
function commonWords(before: readonly string[], after: readonly string[]): boolean[] {
  const rows = before.length + 1;
  const columns = after.length + 1;
  const lengths = new Uint32Array(rows * columns);
  for (let i = before.length - 1; i >= 0; i--)
    for (let j = after.length - 1; j >= 0; j--)
      lengths[i * columns + j] =
        before[i] === after[j] ? lengths[(i + 1) * columns + j + 1]! + 1 : Math.max(lengths[(i + 1) * columns + j]!, lengths[i * columns + j + 1]!);
  const kept = after.map(() => false);
  let i = 0;
  let j = 0;
  while (i < before.length && j < after.length) {
    if (before[i] === after[j]) {
      kept[j] = true;
      i++;
      j++;
    } else if (lengths[(i + 1) * columns + j]! >= lengths[i * columns + j + 1]!) i++;
    else j++;
  }
  return kept;
}
