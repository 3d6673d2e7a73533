/**
 * `sprachrohr dialplan simulate`: runs a call through a dialplan in the terminal. The caller's
 * side is read from standard input, one line at a time; what the gateway does is printed as it
 * happens (see {@link SimulatedCall}).
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import readline from 'node:readline';
import { parseArgs } from 'node:util';
import { pino } from 'pino';
import { loadConfig } from '../config.js';
import { checkDialplan, DialplanError, Dialplans } from '../dialplan/dialplan-loader.js';
import { runRoute } from '../dialplan/run-route.js';
import { SimulatedCall, type SimulatedTarget } from '../dialplan/simulation/simulated-call.js';
import { CommandFailure } from './command-failure.js';
import { deploymentRenderer } from './dialect.js';
import type { CommandIo } from './command-io.js';
import { UsageError } from './usage-error.js';

const TARGETS: readonly SimulatedTarget[] = ['answer', 'busy', 'no-answer', 'refuse'];

/** Runs `sprachrohr dialplan simulate FILE …`; the caller's lines come from `io.stdin`; prints as the call goes and returns ''. */
export async function simulateCommand(argv: string[], io: CommandIo): Promise<string> {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      number: { type: 'string', default: '' },
      caller: { type: 'string', default: 'sip:+41790000000@simulation.invalid' },
      at: { type: 'string' },
      transfer: { type: 'string', default: 'answer' },
      trunk: { type: 'string' },
    },
  });
  if (positionals.length !== 1) throw new UsageError('give one dialplan file to simulate');
  const file = positionals[0]!;
  const at = values.at === undefined ? new Date() : new Date(values.at);
  if (Number.isNaN(at.getTime())) throw new UsageError(`--at takes an ISO date and time such as 2026-12-24T10:30:00+01:00, not "${values.at}"`);
  if (!TARGETS.includes(values.transfer as SimulatedTarget)) throw new UsageError(`--transfer must be one of ${TARGETS.join(', ')}`);
  let text: string;
  try {
    text = await fs.readFile(file, 'utf8');
  } catch (error) {
    throw new CommandFailure(`${file} cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  let plans: Dialplans;
  try {
    plans = new Dialplans(checkDialplan(file, text).routes);
  } catch (error) {
    if (error instanceof DialplanError) throw new CommandFailure(error.message);
    throw error;
  }
  const route = plans.route(values.number, values.trunk ?? null);
  if (!route)
    throw new CommandFailure(
      `no route of ${file} takes the number "${values.number}"${values.trunk ? ` from the trunk ${values.trunk}` : ''} (give one with --number)`,
    );
  const lines = readline.createInterface({ input: io.stdin, crlfDelay: Infinity })[Symbol.asyncIterator]();
  const call = new SimulatedCall(
    route,
    { caller: values.caller, called: values.number, at, target: values.transfer as SimulatedTarget, webhookSecret: loadConfig(io.env).recordings.secret },
    {
      readLine: async () => {
        const next = await lines.next();
        return next.done ? null : next.value;
      },
      print: (line) => void io.stdout.write(`${line}\n`),
    },
    // Prompts as the gateway would speak them, with the lexicon beside the file (or the one named).
    await deploymentRenderer(io.env, path.dirname(path.resolve(file))),
    pino({ level: 'silent' }),
  );
  const end = await runRoute(call);
  if (end === 'last-step') await call.hangup();
  await lines.return?.();
  if (end === 'max-turns') throw new CommandFailure(`the call was sent back more than max_turns (${route.max_turns ?? 20}) times and ended`);
  return '';
}
