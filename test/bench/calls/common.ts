/** What the parts of the call benchmark share: the frame size, waiting, percentiles and UDP sockets. */
import dgram from 'node:dgram';

export const FRAME_MS = 20;
export const FRAME_SAMPLES = 160;
export const MULAW_SILENCE = 0xff;

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `condition` every 5 ms; throws after `timeoutMs` naming `what` was waited for. */
export async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The value at percentile `p` of ascending values (the definition the other benchmarks use). */
export function rank(sorted: ArrayLike<number>, p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Median, 95th percentile, largest value and count of `values`. */
export interface Summary {
  readonly p50: number;
  readonly p95: number;
  readonly max: number;
  readonly count: number;
}

export function summary(values: number[]): Summary {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: rank(sorted, 50), p95: rank(sorted, 95), max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN, count: sorted.length };
}

/** A UDP socket bound to `port` on 127.0.0.1 (0: any free port). */
export function bind(port: number): Promise<dgram.Socket> {
  return new Promise((resolve, reject) => {
    const socket = dgram.createSocket('udp4');
    socket.once('error', (error) => {
      socket.close();
      reject(error);
    });
    socket.bind(port, '127.0.0.1', () => {
      socket.removeAllListeners('error');
      resolve(socket);
    });
  });
}

/** Closes a UDP socket; resolves once it is closed. */
export function closeSocket(socket: dgram.Socket): Promise<unknown> {
  return new Promise((resolve) => socket.close(() => resolve(undefined)));
}
