import { CONFIG_VARIABLES, loadConfig } from '../config.js';
import type { Env } from '../config-values.js';
import { createLogger } from '../log.js';
import { startServer } from '../server.js';

/** Help text of `sprachrohr serve`. */
export const SERVE_HELP = `sprachrohr serve — run the speech API

Usage: sprachrohr serve

Starts the HTTP API on the embedded store (no external server needed) and
stops gracefully on SIGTERM or SIGINT: it stops accepting, lets requests in
flight finish, then exits.

Environment:
${CONFIG_VARIABLES.map(([name, meaning]) => `  ${name.padEnd(40)} ${meaning}`).join('\n')}
`;

/** Runs the service, configured by `env`, until SIGTERM/SIGINT. */
export async function serve(env: Env): Promise<void> {
  const config = loadConfig(env);
  const logger = createLogger(config);
  const server = await startServer(config, logger);
  // Parallel garbage-collector helpers compete with the synthesis workers for cores and
  // stall the event loop on small machines; the `sprachrohr` command starts Node without them.
  const singleThreadedGc = process.execArgv.includes('--single-threaded-gc');
  logger.info({ address: server.address, dataDir: config.dataDir, singleThreadedGc }, 'sprachrohr is listening');
  const stop = (signal: string) => {
    logger.info({ signal }, 'shutting down: finishing requests in flight');
    server.close().then(
      () => {
        logger.info('stopped');
        process.exitCode = 0;
      },
      (error: unknown) => {
        logger.error({ err: error }, 'shutdown failed');
        process.exitCode = 1;
      },
    );
  };
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
}
