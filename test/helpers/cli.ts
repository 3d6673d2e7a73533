import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** The built `sprachrohr` command (`npm test` builds it first). */
export const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** Runs the CLI to its end; `input` is written to its standard input (which is then closed). */
export function runCli(args: string[], env: Record<string, string> = {}, input?: string): Promise<{ code: number | null; stdout: string; stderr: string }> {
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

/** A `sprachrohr serve` process and the address it listens on. */
export interface ServeProcess {
  readonly child: ChildProcessWithoutNullStreams;
  readonly baseUrl: string;
  readonly output: () => string;
  readonly exited: Promise<number | null>;
}

/** Starts `sprachrohr serve` on a free port and waits until it listens. */
export function startServe(env: Record<string, string>): Promise<ServeProcess> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [CLI, 'serve'], { env: { ...process.env, SPRACHROHR_PORT: '0', SPRACHROHR_SIP_PORT: '0', ...env } });
    let output = '';
    const exited = new Promise<number | null>((done) => child.on('close', done));
    const timer = setTimeout(() => reject(new Error(`serve did not start:\n${output}`)), 15_000);
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
