import type { Env } from '../config-values.js';

/**
 * What a command reads and writes, and the environment it takes its configuration from: the
 * process's own when it runs as `sprachrohr`, others when it runs in another program (the tests
 * run most commands in their own process this way).
 */
export interface CommandIo {
  readonly stdout: NodeJS.WritableStream;
  readonly stderr: NodeJS.WritableStream;
  readonly stdin: NodeJS.ReadableStream;
  readonly env: Env;
}

/** The process's standard streams and environment; standard input is opened when first read. */
export function processIo(): CommandIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    get stdin() {
      return process.stdin;
    },
    env: process.env,
  };
}
