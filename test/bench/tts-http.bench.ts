/**
 * Sandbox `POST /v1/tts` of a 200-character text as pcm16, over loopback, against one
 * `sprachrohr serve` process: latency of sequential requests on one connection (p50/p99),
 * then requests per second under load from wrk (Debian package `wrk`, a C load generator:
 * a Node load generator on the same two cores measured itself, not the server).
 * Keys: the per-key limit is 600 requests per minute, so the load spreads over many sandbox
 * keys, as a shared service sees many customers.
 * Run: npm run bench (or, after npm run build: node --import tsx test/bench/tts-http.bench.ts)
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { loadConfig } from '../../src/config.js';
import { openKeyStore } from '../../src/server.js';
import { startServeProcess, stopServeProcess } from './serve-process.js';

/** A 200-character IVR prompt. */
const TEXT =
  'Grüezi und willkommen beim Kundendienst der Stadtwerke Zürich. Für Fragen zur Rechnung drücken Sie b' +
  'itte die Eins, für Störungen die Zwei. Für alle anderen Anliegen bleiben Sie doch am Apparat. Merci.';
const KEYS = 300;
const SEQUENTIAL_REQUESTS = 3000;
const LOAD_SECONDS = 10;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

export interface HttpFigures {
  textCharacters: number;
  responseBytes: number;
  sequential: { requests: number; p50Ms: number; p99Ms: number };
  load: { connections: number; requestsPerSecond: number; p50Ms: number; p99Ms: number; non2xx: number };
}

const run = promisify(execFile);

/** Loads the server with wrk for {@link LOAD_SECONDS}, rotating over the keys. */
async function runWrk(address: string, keys: string[], body: string, connections: number, dir: string) {
  const script = path.join(dir, 'load.lua');
  await fs.writeFile(
    script,
    `keys = {${keys.map((k) => JSON.stringify(k)).join(',')}}\n` +
      `body = ${JSON.stringify(body)}\n` +
      'i = 0\n' +
      'request = function()\n  i = i + 1\n' +
      "  return wrk.format('POST', '/v1/tts', {['Content-Type'] = 'application/json', ['X-API-Key'] = keys[(i % #keys) + 1]}, body)\nend\n" +
      'done = function(summary, latency, requests)\n' +
      '  io.write(string.format("RESULT %d %f %f %f %d\\n", summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), summary.errors.status))\nend\n',
  );
  let stdout: string;
  try {
    ({ stdout } = await run('wrk', ['-t1', `-c${connections}`, `-d${LOAD_SECONDS}s`, '-s', script, address]));
  } catch (error) {
    throw new Error(`wrk is needed for the load figure (apt-get install wrk): ${(error as Error).message}`);
  }
  const match = /RESULT (\d+) ([\d.]+) ([\d.]+) ([\d.]+) (\d+)/.exec(stdout);
  if (!match) throw new Error(`unexpected wrk output:\n${stdout}`);
  const [, requests, durationUs, p50Us, p99Us, non2xx] = match.map(Number) as number[];
  return { requestsPerSecond: requests! / (durationUs! / 1e6), p50Ms: p50Us! / 1000, p99Ms: p99Us! / 1000, non2xx: non2xx! };
}

if (TEXT.length !== 200) throw new Error(`the benchmark text must be 200 characters, not ${TEXT.length}`);

/** Starts a server on a fresh data folder (and the store `env` names, if any), measures, stops it. */
export async function benchTtsHttp(env: Record<string, string> = {}): Promise<HttpFigures> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-bench-'));
  const config = loadConfig({ ...env, SPRACHROHR_DATA_DIR: dataDir });
  const { store, keys } = await openKeyStore(config);
  const apiKeys: string[] = [];
  for (let i = 0; i < KEYS; i++) apiKeys.push((await keys.create(`bench ${i}`, 'sandbox')).key);
  await store.close();
  const server = await startServeProcess({ ...env, SPRACHROHR_DATA_DIR: dataDir });
  const address = server.address;
  const url = new URL(address);
  const body = JSON.stringify({ text: TEXT, format: 'pcm16' });
  try {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    let responseBytes = 0;
    const once = (key: string) =>
      new Promise<number>((resolve, reject) => {
        const start = process.hrtime.bigint();
        const request = http.request(
          { host: url.hostname, port: url.port, path: '/v1/tts', method: 'POST', agent, headers: { 'content-type': 'application/json', 'x-api-key': key } },
          (response) => {
            let bytes = 0;
            response.on('data', (chunk: Buffer) => (bytes += chunk.length));
            response.on('end', () => {
              if (response.statusCode !== 200) reject(new Error(`status ${response.statusCode}`));
              responseBytes = bytes;
              resolve(Number(process.hrtime.bigint() - start) / 1e6);
            });
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    for (let i = 0; i < 200; i++) await once(apiKeys[i % KEYS]!); // warm up
    const latencies: number[] = [];
    for (let i = 0; i < SEQUENTIAL_REQUESTS; i++) latencies.push(await once(apiKeys[i % KEYS]!));
    agent.destroy();
    latencies.sort((a, b) => a - b);
    const connections = 16;
    const load = await runWrk(address, apiKeys, body, connections, dataDir);
    return {
      textCharacters: TEXT.length,
      responseBytes,
      sequential: { requests: SEQUENTIAL_REQUESTS, p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99) },
      load: { connections, ...load },
    };
  } finally {
    await stopServeProcess(server);
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(await benchTtsHttp(), null, 2));
}
