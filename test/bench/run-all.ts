/**
 * Runs every benchmark and prints the figures as docs/performance.md shows them.
 * Run: npm run bench   (the load figure needs wrk: apt-get install wrk; the call figures need
 * SIPp: apt-get install sip-tester, run as root or with CAP_NET_RAW for its RTP captures)
 */
import os from 'node:os';
import { benchBridge, printBridgeFigures } from './bridge.bench.js';
import { benchCalls, printCallsFigures } from './calls.bench.js';
import { benchEncoding } from './encode-formats.bench.js';
import { benchDialectQuality } from './dialect-quality.bench.js';
import { benchDialectFirstAudio, benchDialectSpeed } from './dialect-speed.bench.js';
import { benchStt, printSttFigures } from './stt.bench.js';
import { benchInstalledModels, printModelFigures } from './stt-models.bench.js';
import { benchRealtime, printRealtimeFigures } from './realtime.bench.js';
import { benchRoundTrip } from './roundtrip.bench.js';
import { benchRtpPacket, printRtpPacketFigures } from './rtp-packet.bench.js';
import { benchTtsEngine } from './tts-engine.bench.js';
import { benchTtsHttp } from './tts-http.bench.js';

const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`Machine: ${os.availableParallelism()} cores (${cpu}), Node ${process.version}, ${new Date().toISOString().slice(0, 10)}\n`);

const http = await benchTtsHttp();
console.log(`Sandbox POST /v1/tts, ${http.textCharacters} characters as pcm16 (${(http.responseBytes / 1024).toFixed(0)} KiB of audio), loopback:`);
console.log(`| measure | figure | target |`);
console.log(`|---|---|---|`);
console.log(
  `| latency, one connection, ${http.sequential.requests} sequential requests | p50 ${http.sequential.p50Ms.toFixed(2)} ms, p99 ${http.sequential.p99Ms.toFixed(2)} ms | p50 < 5 ms |`,
);
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

const engine = await benchTtsEngine();
console.log(`\nLive synthesis on eSpeak NG (${engine.workers} worker threads), batch path without HTTP:`);
console.log('| text | model | first audio p50 | first audio p95 |');
console.log('|---|---|---|---|');
for (const f of engine.firstAudio) console.log(`| ${f.text} | ${f.model} | ${f.p50Ms.toFixed(1)} ms | ${f.p95Ms.toFixed(1)} ms |`);
console.log('\n| text | format (rate) | audio | synthesis + encoding | real-time factor |');
console.log('|---|---|---|---|---|');
for (const b of engine.batch)
  console.log(`| ${b.text} | ${b.format} (${b.rateHz}) | ${b.audioSeconds.toFixed(1)} s | ${b.ms.toFixed(0)} ms | ${b.rtf.toFixed(4)} |`);
console.log(
  `\nPeak RSS ${engine.peakRssMb.toFixed(0)} MB. ${engine.concurrent.syntheses} concurrent 100-word syntheses (all formats): event-loop stall max ${engine.concurrent.maxStallMs.toFixed(1)} ms, p99 ${engine.concurrent.p99StallMs.toFixed(1)} ms; all done in ${(engine.concurrent.wallMs / 1000).toFixed(1)} s.`,
);

const roundTrip = await benchRoundTrip();
console.log('\nRound trip: English IVR commands, eSpeak NG → pocketsphinx (command grammar):');
console.log('| voice | rate | word accuracy | commands recognised exactly |');
console.log('|---|---|---|---|');
for (const f of roundTrip) console.log(`| ${f.voice} | ${f.rateHz} Hz | ${(f.wordAccuracy * 100).toFixed(1)} % | ${(f.commandAccuracy * 100).toFixed(0)} % |`);

console.log('\nSwiss German rendering on the development set (test/bench/dialect/devset.json):');
console.log('| region | sentences | chrF | WER | German copied: chrF / WER |');
console.log('|---|---|---|---|---|');
for (const f of await benchDialectQuality('devset')) {
  console.log(
    `| ${f.region} | ${f.sentences} | ${f.chrF.toFixed(1)} | ${(f.wer * 100).toFixed(1)} % | ${f.copyChrF.toFixed(1)} / ${(f.copyWer * 100).toFixed(1)} % |`,
  );
}

console.log('\nHeld-out set (test/bench/dialect/heldout.json, never used to write the data):');
console.log('| region | sentences | chrF | WER | German copied: chrF / WER |');
console.log('|---|---|---|---|---|');
for (const f of await benchDialectQuality('heldout')) {
  console.log(
    `| ${f.region} | ${f.sentences} | ${f.chrF.toFixed(1)} | ${(f.wer * 100).toFixed(1)} % | ${f.copyChrF.toFixed(1)} / ${(f.copyWer * 100).toFixed(1)} % |`,
  );
}

const speed = benchDialectSpeed();
console.log(`\nSwiss German rendering time (normalisation, rewrites, lexicon, rules, pronunciation; ${speed.characters} characters), target ≤ 2 ms:`);
console.log('| region | p50 | p99 |');
console.log('|---|---|---|');
for (const f of speed.perRegion) console.log(`| ${f.region} | ${f.p50Ms.toFixed(2)} ms | ${f.p99Ms.toFixed(2)} ms |`);
console.log(
  `10-word opening (added before swift's first audio, target ≤ 5 ms): p50 ${speed.tenWords.p50Ms.toFixed(3)} ms, p99 ${speed.tenWords.p99Ms.toFixed(3)} ms`,
);
console.log(`Pronouncing a word not yet in the cache: ${speed.uncachedWordUs.toFixed(1)} µs`);
console.log(
  `With a deployment lexicon of ${speed.withLexicon.entries} entries (loaded in ${speed.withLexicon.loadMs.toFixed(0)} ms): ` +
    speed.withLexicon.perRegion.map((f) => `${f.region} p50 ${f.p50Ms.toFixed(2)} ms, p99 ${f.p99Ms.toFixed(2)} ms`).join('; '),
);
const dialectFirstAudio = await benchDialectFirstAudio();
console.log(
  `eSpeak first audio of the opening (8 kHz): Zürich German as phonemes p50 ${dialectFirstAudio.zurich.p50Ms.toFixed(1)} ms / p95 ${dialectFirstAudio.zurich.p95Ms.toFixed(1)} ms; ` +
    `Swiss Standard German as text p50 ${dialectFirstAudio.hochdeutsch.p50Ms.toFixed(1)} ms / p95 ${dialectFirstAudio.hochdeutsch.p95Ms.toFixed(1)} ms`,
);

printSttFigures(await benchStt());
printModelFigures(await benchInstalledModels());
printRealtimeFigures(await benchRealtime());
printRtpPacketFigures(benchRtpPacket());
printCallsFigures(await benchCalls());
printBridgeFigures(await benchBridge());
