import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { PassThrough, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';

/** The built `sprachrohr` command (`npm test` builds it first). */
export const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** Runs the CLI to its end; `input` is written to its standard input (which is then closed). */
export function runCli(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env } });
    if (input !== undefined) child.stdin.end(input);
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** What a run of the CLI gave: its exit status (null if a signal ended it) and its output. */
export interface CliResult {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** A stream that keeps what is written to it. */
function capture(): { stream: Writable; text: () => string } {
  const chunks: Buffer[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk);
      done();
    },
  });
  return { stream, text: () => Buffer.concat(chunks).toString() };
}

/**
 * Runs the CLI in this process, as {@link runCli} runs it in its own: the same dispatch, exit
 * status and output, with the environment `process.env` and `env` make. Standard input is
 * `input` (then its end); without it, a stream that never ends, as a child's open pipe is.
 * What it saves is the start of a process and the loading of the modules each time (they are
 * loaded on the first call, so files that only spawn the CLI do not load them).
 */
export async function runCliInProcess(args: string[], env: Record<string, string> = {}, input?: string): Promise<CliResult> {
  const stdout = capture();
  const stderr = capture();
  const stdin = new PassThrough();
  if (input !== undefined) stdin.end(input);
  const { runCommand } = await import('../../src/cli/run-command.js');
  const code = await runCommand(args, { stdout: stdout.stream, stderr: stderr.stream, stdin, env: { ...process.env, ...env } });
  return { code, stdout: stdout.text(), stderr: stderr.text() };
}

/** A `sprachrohr serve` process and the address it listens on. */
export interface ServeProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly baseUrl: string;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/** `serve` processes started and not yet exited: killed when the test process exits, whatever the tests did. */
const running = new Set<ChildProcessWithoutNullStreams>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/**
 * Starts `sprachrohr serve` on a free port and waits until it listens (`timeoutMs` at most, 30 s
 * unless given: a loaded machine starts it slowly); `nodeFlags` go to its Node (a benchmark
 * passes `--single-threaded-gc`, as the `sprachrohr` command runs).
 */
export function startServe(env: Record<string, string>, timeoutMs = 30_000, nodeFlags: readonly string[] = []): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeFlags, CLI, 'serve'], { env: { ...process.env, SPRACHROHR_PORT: '0', SPRACHROHR_SIP_PORT: '0', ...env } });
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('close', done));
    running.add(child);
    child.once('exit', () => running.delete(child));
    // A serve that does not start in time is killed, not left running after the test.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve did not start within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"address":"(http:\/\/[^"]+)"/.exec(output);
      if (match) {
        clearTimeout(timer);
        resolve({ child, baseUrl: `${match[1]}/v1`, output: () => output, exited });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.on('close', (code) => {
      clearTimeout(timer);
      reject(new Error(`serve exited with ${code}:\n${output}`));
    });
  });
}
