/** Starts `sprachrohr serve` (the built CLI) for a benchmark and waits until it listens. */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../dist/src/cli/main.js', import.meta.url));

/** A server process and the address it listens on (`http://127.0.0.1:PORT`). */
export interface ServeProcess {
  readonly child: ChildProcess;
  readonly address: string;
}

export function startServeProcess(env: Record<string, string>): Promise<ServeProcess> {
  // BENCH_SERVER_NODE_FLAGS adds flags for the server's Node (e.g. `--cpu-prof` to profile it).
  const extraFlags = (process.env['BENCH_SERVER_NODE_FLAGS'] ?? '').split(' ').filter((flag) => flag !== '');
  const child = spawn(process.execPath, ['--single-threaded-gc', ...extraFlags, CLI, 'serve'], {
    env: { ...process.env, SPRACHROHR_PORT: '0', SPRACHROHR_SIP_PORT: '0', SPRACHROHR_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  return new Promise((resolve, reject) => {
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      const match = /"address":"(http:\/\/[^"]+)"/.exec(output);
      if (match) resolve({ child, address: match[1]! });
    });
    child.on('close', (code) => reject(new Error(`server exited with ${code}`)));
  });
}

/** Stops the server and waits for it to exit. */
export async function stopServeProcess(server: ServeProcess): Promise<void> {
  server.child.kill('SIGTERM');
  await new Promise((resolve) => server.child.once('close', resolve));
}
