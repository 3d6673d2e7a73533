/**
 * Synthesis jobs on the live engine (eSpeak NG) of a real `sprachrohr serve`:
 * - submission → callback delivered, for a job of a 200-word text (one at a time);
 * - interactive `POST /v1/tts` latency on an idle server, and again while a queue of such jobs
 *   runs, with the jobs' throughput meanwhile (jobs run behind interactive synthesis).
 * Callbacks go to an HTTP server on loopback (SPRACHROHR_CALLBACK_ALLOW=127.0.0.0/8).
 * Run: npm run build && node --single-threaded-gc --import tsx test/bench/jobs.bench.ts
 * Interactive load: one sentence every 1/JOBS_BENCH_RATE s (default 20 a second) for
 * JOBS_BENCH_SECONDS (15), the same on the idle server and while the queue runs.
 * (sizes: JOBS_BENCH_LATENCY_JOBS, JOBS_BENCH_QUEUE, JOBS_BENCH_RATE, JOBS_BENCH_SECONDS)
 */
import fs from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.js';
import { openKeyStore } from '../../src/server.js';
import { startServeProcess, stopServeProcess } from './serve-process.js';

const setting = (name: string, fallback: number): number => Number(process.env[name] ?? fallback);
const LATENCY_JOBS = setting('JOBS_BENCH_LATENCY_JOBS', 10);
const QUEUE = setting('JOBS_BENCH_QUEUE', 30);
const RATE = setting('JOBS_BENCH_RATE', 20);
const WINDOW_SECONDS = setting('JOBS_BENCH_SECONDS', 15);
const KEYS = 40;

/** 200 words of a utility's customer letter. */
const WORDS = (
  'Sehr geehrte Kundin, sehr geehrter Kunde. Wir informieren Sie über die geplanten Arbeiten an der Wasserleitung in Ihrem Quartier. ' +
  'Vom dritten bis zum siebten März ersetzen wir zwischen der Bahnhofstrasse und dem Stadthaus die alten Leitungen. ' +
  'Während dieser Zeit kann das Wasser in einzelnen Häusern für einige Stunden unterbrochen sein. Wir kündigen jeden Unterbruch am Vortag an. ' +
  'Bitte füllen Sie vorher einige Flaschen mit Trinkwasser ab und schliessen Sie Ihre Waschmaschine nicht an. ' +
  'Nach den Arbeiten kann das Wasser kurze Zeit trüb sein. Lassen Sie es dann einige Minuten laufen, bis es wieder klar ist. ' +
  'Für Fragen erreichen Sie unseren Kundendienst von Montag bis Freitag zwischen acht und siebzehn Uhr. ' +
  'Bei einem Notfall ausserhalb dieser Zeiten wählen Sie die Pikettnummer, die auf Ihrer Rechnung steht. ' +
  'Wir danken Ihnen für Ihr Verständnis und entschuldigen uns für die Unannehmlichkeiten. ' +
  'Die neuen Leitungen sichern Ihre Versorgung für die nächsten Jahrzehnte. Auf unserer Webseite finden Sie den Bauplan und die aktuellen Meldungen. ' +
  'Wenn Sie Fragen zur Bauzeit oder zu den Unterbrüchen haben, schreiben Sie uns eine Nachricht, wir antworten Ihnen innerhalb von zwei Arbeitstagen. ' +
  'Freundliche Grüsse, Ihre Stadtwerke. Wir wünschen Ihnen einen schönen Tag und bedanken uns für Ihre Geduld während der ganzen Bauzeit.'
).trim();
const INTERACTIVE_TEXT = JSON.stringify({ text: 'Grüezi, Sie sind mit dem Kundendienst verbunden.', format: 'pcm16' });

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

/** The callbacks that arrived: job id → when. */
function callbackReceiver(): Promise<{ url: string; arrived: Map<string, number>; close(): Promise<void> }> {
  const arrived = new Map<string, number>();
  const server = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    request.on('end', () => {
      arrived.set((JSON.parse(body) as { id: string }).id, performance.now());
      response.writeHead(204).end();
    });
  });
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/done`,
        arrived,
        close: () => new Promise((done) => server.close(() => done())),
      }),
    ),
  );
}

async function waitFor(condition: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 2));
  }
}

/** One interactive synthesis; its latency. */
async function synthesis(base: string, key: string): Promise<number> {
  const started = performance.now();
  const response = await fetch(`${base}/tts`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: INTERACTIVE_TEXT });
  await response.arrayBuffer();
  if (response.status !== 200) throw new Error(`interactive request answered ${response.status}`);
  return performance.now() - started;
}

/** Interactive syntheses started every 1/rate s for `seconds`, rotating the keys; each one's latency. */
async function interactive(base: string, keys: string[], rate: number, seconds: number): Promise<number[]> {
  const count = Math.round(rate * seconds);
  const start = performance.now();
  const pending: Array<Promise<number>> = [];
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(synthesis(base, keys[i % keys.length]!));
  }
  return Promise.all(pending);
}

async function submit(base: string, key: string, callbackUrl: string): Promise<string> {
  const response = await fetch(`${base}/jobs`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-api-key': key },
    body: JSON.stringify({ kind: 'tts', text: WORDS, format: 'mp3', callback_url: callbackUrl }),
  });
  if (response.status !== 202) throw new Error(`job submission answered ${response.status}: ${await response.text()}`);
  return ((await response.json()) as { id: string }).id;
}

const words = WORDS.split(/\s+/).length;
if (words !== 200) throw new Error(`the job text must be 200 words, not ${words}`);

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-jobs-bench-'));
const { store, keys: keyService } = await openKeyStore(loadConfig({ SPRACHROHR_DATA_DIR: dataDir }));
const keys: string[] = [];
for (let i = 0; i < KEYS; i++) keys.push((await keyService.create(`bench ${i}`, 'live')).key);
await store.close();
const receiver = await callbackReceiver();
const server = await startServeProcess({ SPRACHROHR_DATA_DIR: dataDir, SPRACHROHR_CALLBACK_ALLOW: '127.0.0.0/8', SPRACHROHR_SIP: 'off' });
const base = `${server.address}/v1`;
try {
  await interactive(base, keys, RATE, 2); // warm-up
  const latency: number[] = [];
  for (let i = 0; i < LATENCY_JOBS; i++) {
    const started = performance.now();
    const id = await submit(base, keys[i % KEYS]!, receiver.url);
    await waitFor(() => receiver.arrived.has(id), 120_000);
    latency.push(receiver.arrived.get(id)! - started);
  }
  const idle = await interactive(base, keys, RATE, WINDOW_SECONDS);
  const queuedAt = performance.now();
  const ids: string[] = [];
  for (let i = 0; i < QUEUE; i++) ids.push(await submit(base, keys[i % KEYS]!, receiver.url));
  const busyStarted = performance.now();
  const busy = await interactive(base, keys, RATE, WINDOW_SECONDS);
  const busyEnded = performance.now();
  const doneDuring = ids.filter((id) => (receiver.arrived.get(id) ?? Infinity) <= busyEnded).length;
  await waitFor(() => ids.every((id) => receiver.arrived.has(id)), 600_000);
  const allDone = Math.max(...ids.map((id) => receiver.arrived.get(id)!));
  const audio = (await (await fetch(`${base}/jobs/${ids[0]}`, { headers: { 'x-api-key': keys[0]! } })).json()) as { audio_seconds: number };

  console.log(`Jobs on eSpeak NG (${os.availableParallelism()} cores; a job of ${words} words is ${audio.audio_seconds.toFixed(1)} s of speech):`);
  console.log('| measure | figure | target |');
  console.log('|---|---|---|');
  console.log(
    `| submission → callback delivered, one job of 200 words at a time (${LATENCY_JOBS} jobs) | p50 ${percentile(latency, 50).toFixed(0)} ms, p95 ${percentile(latency, 95).toFixed(0)} ms | — |`,
  );
  const idleP50 = percentile(idle, 50);
  const busyP50 = percentile(busy, 50);
  const windowSeconds = (busyEnded - busyStarted) / 1000;
  console.log(
    `| interactive POST /v1/tts (one sentence, pcm16), ${RATE} a second for ${WINDOW_SECONDS} s, idle server | p50 ${idleP50.toFixed(1)} ms, p95 ${percentile(idle, 95).toFixed(1)} ms | — |`,
  );
  console.log(
    `| the same while ${QUEUE} such jobs are queued and run | p50 ${busyP50.toFixed(1)} ms (${(((busyP50 - idleP50) / idleP50) * 100).toFixed(0)} % over idle), p95 ${percentile(busy, 95).toFixed(1)} ms | p50 within 20 % of idle |`,
  );
  console.log(
    `| jobs through the queue meanwhile | ${doneDuring} jobs in ${windowSeconds.toFixed(1)} s: ${(doneDuring / windowSeconds).toFixed(2)} jobs/s (${((doneDuring * audio.audio_seconds) / windowSeconds).toFixed(0)} s of speech a second) | — |`,
  );
  console.log(`| the whole queue, ${QUEUE} jobs submitted at once | ${(QUEUE / ((allDone - queuedAt) / 1000)).toFixed(2)} jobs/s | — |`);
} finally {
  await stopServeProcess(server);
  await receiver.close();
  await fs.rm(dataDir, { recursive: true, force: true });
}
