/** A pino logger whose JSON lines are kept in an array, so tests can read what was logged. */
import { Writable } from 'node:stream';
import { pino, type Logger } from 'pino';

export function capturedLogger(): { logger: Logger; logs: Array<Record<string, unknown>> } {
  const logs: Array<Record<string, unknown>> = [];
  const logger = pino(
    { level: 'info' },
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString().split('\n')) if (line.trim()) logs.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    }),
  );
  return { logger, logs };
}
