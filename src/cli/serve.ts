import { CONFIG_VARIABLES, loadConfig } from '../config.js';
import type { Env } from '../config-values.js';
import { createLogger } from '../log.js';
import { startServer } from '../server.js';

/** Help text of `sprachrohr serve`. */
export const SERVE_HELP = `sprachrohr serve — run the speech API

Usage: sprachrohr serve

Starts the HTTP API on the embedded store (no external server needed) and
stops gracefully on SIGTERM or SIGINT (or POST /v1/admin/drain): it drains
(new requests, sessions and calls get 503, GET /readyz turns 503) while
calls, realtime sessions and requests finish, up to
SPRACHROHR_DRAIN_TIMEOUT_MS, then ends what is left and exits. A second
signal ends the wait at once.

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
  // However the drain starts (a signal, or an operator through the API), the process then stops.
  server.drain.onStart(() => {
    server
      .drained()
      .then(() => {
        logger.info('shutting down: finishing requests in flight');
        return server.close();
      })
      .then(
        () => {
          logger.info('stopped');
          process.exitCode = 0;
        },
        (error: unknown) => {
          logger.error({ err: error }, 'shutdown failed');
          process.exitCode = 1;
        },
      );
  });
  const signalled = (signal: string): void => {
    // The first signal drains; another one means the operator does not want to wait.
    if (!server.drain.start(signal)) {
      logger.warn({ signal }, 'second signal: ending the drain now');
      server.drain.endWait();
    }
  };
  process.on('SIGTERM', () => signalled('SIGTERM'));
  process.on('SIGINT', () => signalled('SIGINT'));
}
