import fs from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { checkDialplan, describeRoute, DialplanError, routeKey } from '../dialplan/dialplan-loader.js';
import { checkTrunks, isTrunkFile } from '../telephony/trunks/trunk-loader.js';
import { checkLexicon, isLexiconFile } from '../speech/lexicon-loader.js';
import { simulateCommand } from './dialplan-simulate.js';
import { CommandFailure } from './command-failure.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

/** Help text of `sprachrohr dialplan`. */
export const DIALPLAN_HELP = `sprachrohr dialplan — check and try call flows before they go live

Usage: sprachrohr dialplan check FILE [FILE...]
       sprachrohr dialplan simulate FILE [--number N] [--trunk T] [--caller C]
                                         [--at ISO-DATETIME]
                                         [--transfer answer|busy|no-answer|refuse]

check     checks each file as the gateway does: YAML syntax, the schema, catalog voices,
          languages and dialects, the steps each step names, loops in which nothing listens,
          and numbers routed twice across the files given. A file named trunks.yaml (or
          trunks.yml) is checked as the trunk file: its fields, addresses, and that the
          variables its password_env name are set. A file named lexicon.yaml (or
          lexicon.yml, or the file SPRACHROHR_LEXICON_FILE names) is checked as the
          deployment lexicon: its fields, regions and IPA pronunciations. Prints
          "FILE: ok (N routes)" for each good file, each problem as FILE:LINE:COLUMN:
          message on standard error, and steps nothing reaches as FILE:LINE:COLUMN:
          warning: …. Exit 0 when every file is valid (warnings allowed), 1 otherwise.

simulate  runs a call through the route for --number (default: the route for any number) in
          the terminal, no phone or network; --trunk: as a call from that trunk (routes
          naming it go first). The caller's side comes from standard input,
          one line at a time:
            dtmf 12#    presses keys          silence   lets a timeout pass
            hangup      hangs up              any other line is what the caller says
          What happens is printed one event a line: "< TEXT" for each prompt as spoken
          (after dialect rendering), "-> transfer TARGET", "-> record", "-> hangup".
          --at fixes the clock (opening hours), e.g. 2026-12-24T14:00:00+01:00; --transfer
          says how a transfer target answers (default answer). --caller sets {{caller}}.
          Exit 0 when the call ends normally, 1 when it fails or passes max_turns.
`;

/** Runs `sprachrohr dialplan`; returns what to print, or fails naming every problem. */
export async function dialplanCommand(argv: string[], io: CommandIo): Promise<string> {
  if (argv[0] === 'simulate') return simulateCommand(argv.slice(1), io);
  const { positionals } = parseArgs({ args: argv, allowPositionals: true, options: {} });
  const [action, ...files] = positionals;
  if (action !== 'check') throw new UsageError(action ? `unknown action "${action}"; the actions are check and simulate` : 'give an action: check or simulate');
  if (files.length === 0) throw new UsageError('give the dialplan files to check');
  const good: string[] = [];
  const problems: string[] = [];
  const warnings: string[] = [];
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
      const namedLexicon = io.env['SPRACHROHR_LEXICON_FILE'];
      if (isLexiconFile(file) || (namedLexicon && path.resolve(namedLexicon) === path.resolve(file))) {
        const lexicon = checkLexicon(file, text);
        good.push(`${file}: ok (${lexicon.size} entr${lexicon.size === 1 ? 'y' : 'ies'})`);
        continue;
      }
      if (isTrunkFile(file)) {
        const trunks = checkTrunks(file, text, io.env);
        good.push(`${file}: ok (${trunks.length} trunk${trunks.length === 1 ? '' : 's'})`);
        continue;
      }
      const checked = checkDialplan(file, text);
      const routes = checked.routes;
      warnings.push(...checked.warnings.map((warning) => warning.message));
      const twice = routes.filter((route) => routedIn.has(routeKey(route)));
      for (const route of twice) problems.push(`${file}:0:0: the number ${describeRoute(route)} is routed twice (also in ${routedIn.get(routeKey(route))})`);
      for (const route of routes) if (!routedIn.has(routeKey(route))) routedIn.set(routeKey(route), file);
      if (twice.length === 0) good.push(`${file}: ok (${routes.length} route${routes.length === 1 ? '' : 's'})`);
    } catch (error) {
      if (!(error instanceof DialplanError)) throw error;
      problems.push(error.message);
    }
  }
  if (warnings.length > 0) io.stderr.write(`${warnings.join('\n')}\n`);
  if (problems.length > 0) {
    // Problems go to standard error one per line, in the FILE:LINE:COLUMN form editors jump to.
    if (good.length > 0) io.stdout.write(`${good.join('\n')}\n`);
    io.stderr.write(`${problems.join('\n')}\n`);
    throw new CommandFailure(`${problems.length} problem${problems.length === 1 ? '' : 's'} in ${files.length} file${files.length === 1 ? '' : 's'}`);
  }
  return good.join('\n');
}
