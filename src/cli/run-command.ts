/** The commands of `sprachrohr`, run with the streams and environment they are given. */
import { ConfigError } from '../config.js';
import { ApiClientError } from './api-client.js';
import { DB_HELP, dbCommand } from './db.js';
import { DIALECT_HELP, dialectCommand } from './dialect.js';
import { DIALPLAN_HELP, dialplanCommand } from './dialplan.js';
import { CommandFailure } from './command-failure.js';
import { ACCOUNTS_HELP, accountsCommand } from './accounts.js';
import { ENTITLEMENTS_HELP, entitlementsCommand } from './entitlements.js';
import { KEYS_HELP, keysCommand } from './keys.js';
import { MODELS_HELP, modelsCommand } from './models.js';
import { SERVE_HELP, serve } from './serve.js';
import { STT_HELP, sttCommand } from './stt.js';
import { TTS_HELP, ttsCommand } from './tts.js';
import { TRUNKS_HELP, trunksCommand } from './trunks.js';
import { CALL_HELP, callCommand } from './call.js';
import type { CommandIo } from './command-io.js';
import { DialplanError } from '../dialplan/yaml-file.js';
import { USAGE_HELP, usageCommand } from './usage.js';
import { UsageError } from './usage-error.js';
import { StoreUnavailableError } from '../store/open-store.js';

const MAIN_HELP = `sprachrohr — realtime telephony voice gateway and speech API

Usage: sprachrohr <command> [options]

Commands:
  serve         run the speech API (embedded store, or PostgreSQL with SPRACHROHR_DATABASE_URL)
  keys          create, list, revoke and rotate API keys
  accounts      create, list and show the accounts keys act for
  entitlements  what an account may use: free minutes, commitments, credit
  usage         what an account used, from the billing ledger
  db            migrate the store's schema, or show its version
  tts           synthesise text into an audio file through the API
  stt           transcribe a recording through the API
  dialect       show how a text is rendered into a Swiss German dialect
  dialplan      check dialplan files (call flows) before they go live
  trunks        the SIP trunks of a running gateway and their registrations
  call          place a call from a running gateway and follow it
  models        list, verify and download recognition models

Run "sprachrohr <command> --help" for the options of a command.
`;

const HELP: Record<string, string> = {
  serve: SERVE_HELP,
  keys: KEYS_HELP,
  accounts: ACCOUNTS_HELP,
  entitlements: ENTITLEMENTS_HELP,
  usage: USAGE_HELP,
  db: DB_HELP,
  tts: TTS_HELP,
  stt: STT_HELP,
  dialect: DIALECT_HELP,
  dialplan: DIALPLAN_HELP,
  trunks: TRUNKS_HELP,
  call: CALL_HELP,
  models: MODELS_HELP,
};

/**
 * Runs `sprachrohr ARGV…` with the given streams and environment and returns its exit status:
 * 0 done, 1 failed (also on an unexpected error, printed with its stack), 2 usage error,
 * 78 bad configuration. `main.ts` runs it with the process's own.
 */
export async function runCommand(argv: string[], io: CommandIo): Promise<number> {
  try {
    return await dispatch(argv, io);
  } catch (error) {
    io.stderr.write(`sprachrohr: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    return 1;
  }
}

async function dispatch(argv: string[], io: CommandIo): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === '--help' || command === '-h' || command === 'help') {
    io.stdout.write(MAIN_HELP);
    return command ? 0 : 2;
  }
  const help = HELP[command];
  if (!help) {
    io.stderr.write(`sprachrohr: unknown command "${command}"\n\n${MAIN_HELP}`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.stdout.write(help);
    return 0;
  }
  try {
    if (command === 'serve') {
      await serve(io.env);
      return 0;
    }
    const commands: Record<string, (argv: string[], io: CommandIo) => Promise<string>> = {
      keys: keysCommand,
      accounts: accountsCommand,
      entitlements: entitlementsCommand,
      usage: usageCommand,
      db: dbCommand,
      tts: ttsCommand,
      stt: sttCommand,
      dialect: dialectCommand,
      dialplan: dialplanCommand,
      trunks: trunksCommand,
      call: callCommand,
      models: modelsCommand,
    };
    const output = await commands[command]!(rest, io);
    // Commands that write their result to stdout themselves (audio) return nothing to print.
    if (output !== '') io.stdout.write(`${output}\n`);
    return 0;
  } catch (error) {
    if (error instanceof UsageError || (error instanceof TypeError && (error as NodeJS.ErrnoException).code?.startsWith('ERR_PARSE_ARGS'))) {
      io.stderr.write(`sprachrohr ${command}: ${error.message}\nRun "sprachrohr ${command} --help" for usage.\n`);
      return 2;
    }
    if (error instanceof ConfigError) {
      io.stderr.write(`sprachrohr: bad configuration: ${error.message}\n`);
      return 78;
    }
    if (error instanceof DialplanError) {
      // A dialplan or the trunk file stopped the start: where, and what is wrong, without a stack.
      io.stderr.write(`sprachrohr: ${error.message}\n`);
      return 78;
    }
    if (error instanceof StoreUnavailableError) {
      io.stderr.write(`sprachrohr: the store cannot be used: ${error.message}\n`);
      return 1;
    }
    if (error instanceof ApiClientError || error instanceof CommandFailure) {
      io.stderr.write(`sprachrohr ${command}: ${error.message}\n`);
      return 1;
    }
    throw error;
  }
}
