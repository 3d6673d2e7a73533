/**
 * Runs every benchmark and prints the figures as the README's Performance section shows them.
 * Run: npm run bench   (the load figure needs wrk: apt-get install wrk)
 */
import os from 'node:os';
import { benchEncoding } from './encode-formats.bench.js';
import { benchTtsHttp } from './tts-http.bench.js';

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`Machine: ${os.availableParallelism()} cores (${cpu}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`);

const http = await benchTtsHttp();
console.log(`Sandbox POST /v1/tts, ${http.textCharacters} characters as pcm16 (${(http.responseBytes / 1024).toFixed(0)} KiB of audio), loopback:`);
console.log(`| measure | figure | target |`);
console.log(`|---|---|---|`);
console.log(`| latency, one connection, ${http.sequential.requests} sequential requests | p50 ${http.sequential.p50Ms.toFixed(2)} ms, p99 ${http.sequential.p99Ms.toFixed(2)} ms | p50 < 5 ms |`);
console.log(
  `| throughput, ${http.load.connections} connections (wrk) | ${Math.round(http.load.requestsPerSecond)} requests/s (p50 ${http.load.p50Ms.toFixed(1)} ms, p99 ${http.load.p99Ms.toFixed(1)} ms, ${http.load.non2xx} non-2xx) | ≥ 1,500 requests/s |`,
);

console.log('\nEncoding cost per second of audio (median of 7 trials):');
console.log('| format | rate (Hz) | ms per audio second | × real time |');
console.log('|---|---|---|---|');
for (const figure of await benchEncoding()) {
  // Raw PCM is handed out as a view of the samples: there is nothing to time.
  const cost = figure.msPerAudioSecond < 0.001 ? '< 0.001 (no copy)' : figure.msPerAudioSecond.toFixed(3);
  const speed = figure.msPerAudioSecond < 0.001 ? '—' : Math.round(figure.timesRealTime).toLocaleString('en-US');
  console.log(`| ${figure.format} | ${figure.rateHz} | ${cost} | ${speed} |`);
}
