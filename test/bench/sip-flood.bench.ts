/**
 * What an OPTIONS flood leaves in the embedded SIP endpoint: 60,000 OPTIONS over UDP from
 * loopback (in windows of 50, each answered before the next), with RFC 3261's real timers
 * (T1 500 ms, so a completed non-INVITE transaction would stay 32 s), measuring the heap (after
 * a full collection) and RSS before, just after, and 35 s after the flood.
 * Run: npm run bench:sip-flood   (node --expose-gc is set by the script)
 */
import dgram from 'node:dgram';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import { SipEndpoint } from '../../src/telephony/sip/sip-endpoint.js';

/** The figures of one flood. */
export interface FloodFigures {
  readonly requests: number;
  readonly seconds: number;
  readonly answered: number;
  readonly transactionsAfter: number;
  readonly heapMb: { readonly before: number; readonly after: number; readonly settled: number };
  readonly rssMb: { readonly before: number; readonly after: number; readonly settled: number };
}

const mb = (bytes: number): number => Math.round((bytes / 1024 / 1024) * 10) / 10;

function memory(): { heap: number; rss: number } {
  (globalThis as { gc?: () => void }).gc?.();
  const usage = process.memoryUsage();
  return { heap: mb(usage.heapUsed), rss: mb(usage.rss) };
}

function options(port: number, index: number): Buffer {
  return Buffer.from(
    [
      'OPTIONS sip:100@127.0.0.1 SIP/2.0',
      `Via: SIP/2.0/UDP 127.0.0.1:${port};branch=z9hG4bK-flood-${index};rport`,
      'Max-Forwards: 70',
      `From: <sip:prober@127.0.0.1:${port}>;tag=flood-${index}`,
      'To: <sip:100@127.0.0.1>',
      `Call-ID: flood-${index}@127.0.0.1`,
      'CSeq: 1 OPTIONS',
      'Content-Length: 0',
      '',
      '',
    ].join('\r\n'),
  );
}

/** Floods a fresh endpoint with `requests` OPTIONS and reports what they left. */
export async function benchOptionsFlood(requests = 60_000, settleMs = 35_000): Promise<FloodFigures> {
  const endpoint = new SipEndpoint({ host: '127.0.0.1', port: 0, logger: pino({ level: 'silent' }) });
  await endpoint.listen();
  const client = dgram.createSocket('udp4');
  await new Promise<void>((resolve) => client.bind(0, '127.0.0.1', resolve));
  const port = client.address().port;
  let answered = 0;
  let wake: (() => void) | null = null;
  client.on('message', () => {
    answered += 1;
    wake?.();
  });
  const before = memory();
  const started = performance.now();
  // Small windows: each datagram costs a few KB of socket buffer on loopback, and a larger
  // burst overflows the default receive buffer.
  const window = 50;
  for (let sent = 0; sent < requests; sent += window) {
    for (let i = sent; i < Math.min(requests, sent + window); i++) client.send(options(port, i), endpoint.ports.udp, '127.0.0.1');
    const target = Math.min(requests, sent + window);
    const deadline = performance.now() + 2000;
    // A datagram lost on loopback is not waited for beyond two seconds.
    while (answered < target && performance.now() < deadline) await new Promise<void>((resolve) => ((wake = resolve), setTimeout(resolve, 50)));
  }
  const seconds = (performance.now() - started) / 1000;
  const after = memory();
  const transactionsAfter = endpoint.serverTransactionCount;
  await new Promise((resolve) => setTimeout(resolve, settleMs));
  const settled = memory();
  client.close();
  await endpoint.close();
  return {
    requests,
    seconds,
    answered,
    transactionsAfter,
    heapMb: { before: before.heap, after: after.heap, settled: settled.heap },
    rssMb: { before: before.rss, after: after.rss, settled: settled.rss },
  };
}

/** Prints the figures as docs/performance.md shows them. */
export function printFloodFigures(figures: FloodFigures): void {
  console.log(
    `\nOPTIONS flood: ${figures.requests} over UDP in ${figures.seconds.toFixed(1)} s, ${figures.answered} answered, ${figures.transactionsAfter} transactions kept`,
  );
  console.log('| measure | before | just after | 35 s after |');
  console.log('|---|---|---|---|');
  console.log(`| heap used (after GC) | ${figures.heapMb.before} MB | ${figures.heapMb.after} MB | ${figures.heapMb.settled} MB |`);
  console.log(`| RSS | ${figures.rssMb.before} MB | ${figures.rssMb.after} MB | ${figures.rssMb.settled} MB |`);
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) printFloodFigures(await benchOptionsFlood());
