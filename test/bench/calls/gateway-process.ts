/**
 * The gateway under test: a `sprachrohr serve` process with the benchmark's dialplan, its SIP port
 * and what it logs (turn latencies, pacer statistics, ended calls).
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PacingStats } from '../../../src/telephony/rtp/pacer.js';
import { freePort } from '../../helpers/sipp.js';
import { startServeProcess, stopServeProcess, type ServeProcess } from '../serve-process.js';
import { until } from './common.js';

const SERVICE_MODULE = new URL('../../../dist/src/telephony/telephony-service.js', import.meta.url).href;

/** What the gateway logs that the benchmark reads: turn latencies, transcripts, pacer statistics, ended calls. */
export interface GatewayLog {
  readonly turnLatenciesMs: number[];
  /** What each listen step heard (its 'listened' line). */
  readonly heard: string[];
  readonly pacer: PacingStats[];
  callsEnded: number;
}

/** A running gateway: its process, SIP port, log and the folder with its dialplan and data. */
export interface Gateway {
  readonly server: ServeProcess;
  readonly pid: number;
  readonly sipPort: number;
  readonly log: GatewayLog;
  readonly dir: string;
}

/**
 * The preload the gateway runs with: keeps the telephony services it starts and, on SIGUSR2,
 * prints each one's pacer statistics (a `bench pacer` line) and starts them afresh. Nothing else
 * changes.
 */
function pacerPreloadFlag(): string {
  const code = [
    `import { TelephonyService } from ${JSON.stringify(SERVICE_MODULE)};`,
    'const services = new Set();',
    'const start = TelephonyService.start;',
    'TelephonyService.start = async function (...args) { const service = await start.apply(this, args); services.add(service); return service; };',
    "process.on('SIGUSR2', async () => {",
    '  for (const service of services) {',
    '    const stats = await service.pacingStats(true);',
    "    process.stdout.write(JSON.stringify({ msg: 'bench pacer', stats }) + '\\n');",
    '  }',
    '});',
  ].join('\n');
  return `--import=data:text/javascript;base64,${Buffer.from(code).toString('base64')}`;
}

/** Starts a gateway with `dialplan` on a free SIP port (`env` adds settings) and follows its log. */
export async function startGateway(dialplan: string, env: Record<string, string>): Promise<Gateway> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-calls-bench-'));
  await fs.mkdir(path.join(dir, 'dialplans'));
  await fs.writeFile(path.join(dir, 'dialplans', 'bench.yaml'), dialplan);
  const sipPort = await freePort('127.0.0.1', 't1');
  const flagsBefore = process.env['BENCH_SERVER_NODE_FLAGS'];
  process.env['BENCH_SERVER_NODE_FLAGS'] = `${flagsBefore ?? ''} ${pacerPreloadFlag()}`.trim();
  let server: ServeProcess;
  try {
    server = await startServeProcess({
      SPRACHROHR_DATA_DIR: path.join(dir, 'data'),
      SPRACHROHR_DIALPLANS_DIR: path.join(dir, 'dialplans'),
      SPRACHROHR_SIP_PORT: String(sipPort),
      ...env,
    });
  } finally {
    if (flagsBefore === undefined) delete process.env['BENCH_SERVER_NODE_FLAGS'];
    else process.env['BENCH_SERVER_NODE_FLAGS'] = flagsBefore;
  }
  const log: GatewayLog = { turnLatenciesMs: [], heard: [], pacer: [], callsEnded: 0 };
  let pending = '';
  server.child.stdout!.on('data', (chunk: Buffer) => {
    pending += chunk.toString('utf8');
    for (let newline = pending.indexOf('\n'); newline >= 0; newline = pending.indexOf('\n')) {
      const line = pending.slice(0, newline);
      pending = pending.slice(newline + 1);
      if (!line.startsWith('{')) continue;
      let entry: Record<string, unknown>;
      try {
        entry = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue;
      }
      if (entry['msg'] === 'turn' && typeof entry['turnLatencyMs'] === 'number') log.turnLatenciesMs.push(entry['turnLatencyMs']);
      else if (entry['msg'] === 'bench pacer') log.pacer.push(entry['stats'] as PacingStats);
      else if (entry['msg'] === 'call ended') log.callsEnded += 1;
      else if (entry['msg'] === 'listened') log.heard.push(String(entry['heard'] ?? ''));
    }
  });
  return { server, pid: server.child.pid!, sipPort, log, dir };
}

/** Stops the gateway and removes its folder. */
export async function stopGateway(gateway: Gateway): Promise<void> {
  await stopServeProcess(gateway.server);
  await fs.rm(gateway.dir, { recursive: true, force: true });
}

/** The gateway's pacer statistics since the last request (null when it printed none). */
export async function pacerStats(gateway: Gateway): Promise<PacingStats | null> {
  const before = gateway.log.pacer.length;
  gateway.server.child.kill('SIGUSR2');
  await until(() => gateway.log.pacer.length > before, 2000, 'the pacer statistics').catch(() => undefined);
  const printed = gateway.log.pacer.slice(before);
  return printed.length === 0 ? null : printed.reduce((best, stats) => (stats.ticks > best.ticks ? stats : best));
}

/** Waits (15 s at most) until the gateway has logged `count` ended calls. */
export async function waitForCallsEnded(gateway: Gateway, count: number): Promise<void> {
  await until(() => gateway.log.callsEnded >= count, 15_000, `${count} calls to end`).catch(() => undefined);
}
