import { pino, type Logger } from 'pino';
import type { Config } from './config.js';

/** Creates the process logger: JSON lines on stdout, with secrets redacted. */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({
    level: config.logLevel,
    base: { service: 'sprachrohr' },
    redact: { paths: ['req.headers["x-api-key"]', 'headers["x-api-key"]', 'apiKey'], censor: '[redacted]' },
  });
}
