#!/usr/bin/env -S node --single-threaded-gc
/** The `sprachrohr` command: serve the API, manage keys, and call the API from a shell. */
import { processIo } from './command-io.js';
import { runCommand } from './run-command.js';

void runCommand(process.argv.slice(2), processIo()).then((code) => {
  if (code !== 0) process.exitCode = code;
});
