import fs from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { DialplanError, parseDialplan } from '../dialplan/dialplan-loader.js';
import { CommandFailure } from './command-failure.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr dialplan`. */
export const DIALPLAN_HELP = `sprachrohr dialplan — check call flows before they go live

Usage: sprachrohr dialplan check FILE [FILE...]

Checks each dialplan file as the gateway does at start: YAML syntax, the schema, catalog
voices and languages, goto targets, and numbers routed twice across the files given.
Prints "FILE: ok (N routes)" for each good file and each problem as FILE:LINE:COLUMN: message
on standard error. Exit 0 when every file is valid, 1 otherwise.
`;

/** Runs `sprachrohr dialplan`; returns what to print, or fails naming every problem. */
export async function dialplanCommand(argv: string[]): Promise<string> {
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} });
  const [action, ...files] = positionals;
  if (action !== 'check') throw new UsageError(action ? `unknown action "${action}"; the action is check` : 'give an action: check');
  if (files.length === 0) throw new UsageError('give the dialplan files to check');
  const good: string[] = [];
  const problems: string[] = [];
  // Where each number is routed, to find a number routed twice across the files.
  const routedIn = new Map<string, string>();
  for (const file of files) {
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      problems.push(`${file}:0:0: cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
      continue;
    }
    try {
      const routes = parseDialplan(file, text);
      const twice = routes.filter((route) => routedIn.has(route.number));
      for (const route of twice) problems.push(`${file}:0:0: the number ${route.number} is routed twice (also in ${routedIn.get(route.number)})`);
      for (const route of routes) if (!routedIn.has(route.number)) routedIn.set(route.number, file);
      if (twice.length === 0) good.push(`${file}: ok (${routes.length} route${routes.length === 1 ? '' : 's'})`);
    } catch (error) {
      if (!(error instanceof DialplanError)) throw error;
      problems.push(error.message);
    }
  }
  if (problems.length > 0) {
    // Problems go to standard error one per line, in the FILE:LINE:COLUMN form editors jump to.
    if (good.length > 0) process.stdout.write(`${good.join('\n')}\n`);
    process.stderr.write(`${problems.join('\n')}\n`);
    throw new CommandFailure(`${problems.length} problem${problems.length === 1 ? '' : 's'} in ${files.length} file${files.length === 1 ? '' : 's'}`);
  }
  return good.join('\n');
}
