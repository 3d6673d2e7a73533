/**
 * The gateway's RTP as the kernel saw it leave: `tcpdump` on the loopback interface records
 * every datagram to the receivers' ports with a kernel timestamp, so the pacing figure does not
 * carry the measuring process's own event-loop delay. Used when tcpdump is installed (Debian
 * `tcpdump`; a benchmark tool, not needed by the tests); needs the right to capture (root).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { capturedDatagrams, type CapturedDatagram } from './pcap-reader.js';
import { CallTrace } from './rtp-receiver.js';

/** A capture in progress. */
export interface WireCapture {
  /** Stops the capture; one trace per port of `ports`, and the packets tcpdump says the kernel dropped. */
  stop(): Promise<{ traces: CallTrace[]; dropped: number }>;
}

/** What a capture may do besides tracing the packets to the ports. */
export interface WireCaptureOptions {
  /** Also capture the datagrams sent from the ports (the callers' own RTP); they go to `onDatagram` only, not into the traces. */
  readonly fromPorts?: boolean;
  /** Called on {@link WireCapture.stop} with every captured datagram, and its time on this process's `performance.now()` clock. */
  readonly onDatagram?: (datagram: CapturedDatagram, at: number) => void;
}

/** Starts capturing UDP to `ports` on `lo`; resolves once tcpdump listens, or with the reason it cannot. */
export async function startWireCapture(
  ports: readonly number[],
  capacity: number,
  options: WireCaptureOptions = {},
): Promise<WireCapture | { unavailable: string }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-calls-wire-'));
  const file = path.join(dir, 'rtp.pcap');
  const low = Math.min(...ports);
  const high = Math.max(...ports);
  // 64 bytes reach the RTP header; root keeps the right to write the file (no privilege drop).
  const filter = options.fromPorts ? `udp and (dst portrange ${low}-${high} or src portrange ${low}-${high})` : `udp and dst portrange ${low}-${high}`;
  const args = ['-i', 'lo', '-n', '-s', '64', '-B', '32768', '-Z', 'root', '--time-stamp-precision=nano', '-w', file, filter];
  let child: ChildProcess;
  try {
    child = spawn('tcpdump', args, { stdio: ['ignore', 'ignore', 'pipe'] });
  } catch (error) {
    await fs.rm(dir, { recursive: true, force: true });
    return { unavailable: `tcpdump did not start (${(error as Error).message})` };
  }
  let stderr = '';
  child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<number | null>((resolve) => {
    child.once('error', () => resolve(-1));
    child.once('exit', (code) => resolve(code));
  });
  const listening = await Promise.race([
    new Promise<boolean>((resolve) => {
      const check = (): void => {
        if (stderr.includes('listening on')) resolve(true);
      };
      child.stderr!.on('data', check);
    }),
    exited.then(() => false),
    new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 5000)),
  ]);
  if (!listening) {
    child.kill('SIGKILL');
    await fs.rm(dir, { recursive: true, force: true });
    const reason = stderr.trim().split('\n').pop() ?? '';
    return { unavailable: `tcpdump did not start capturing (${reason || 'not installed?'})` };
  }
  return {
    async stop() {
      child.kill('SIGINT');
      await exited;
      try {
        const byPort = new Map(ports.map((port) => [port, new CallTrace(capacity)]));
        for (const datagram of capturedDatagrams(await fs.readFile(file))) {
          const at = datagram.atMs - performance.timeOrigin;
          options.onDatagram?.(datagram, at);
          if (!options.fromPorts || !byPort.has(datagram.sourcePort)) byPort.get(datagram.destinationPort)?.add(datagram.payload, at);
        }
        const dropped = Number(/(\d+) packets? dropped by kernel/.exec(stderr)?.[1] ?? 0);
        return { traces: ports.map((port) => byPort.get(port)!), dropped };
      } finally {
        await fs.rm(dir, { recursive: true, force: true });
      }
    },
  };
}
