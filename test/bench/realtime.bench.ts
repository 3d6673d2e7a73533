/**
 * The realtime endpoints over loopback against one `sprachrohr serve` process with the defaults
 * of a two-core machine (eSpeak NG and pocketsphinx, one worker each):
 * - synthesis: time from `text.append` (a complete sentence) to the first `audio.chunk`;
 * - recognition: partial lag (arrival minus the time the audio it had heard was sent) and the
 *   final's arrival after the end of speech beyond the 500 ms hangover, audio sent in real time;
 * - concurrency: 100 eSpeak synthesis sessions at once, JSON then binary transport (every frame
 *   against its playback deadline: first frame + seq × 20 ms), and 50 recognition sessions at
 *   once (sandbox recogniser, so the media path is measured: one pocketsphinx worker takes 8
 *   streams), audio sent in real time.
 * Run: npm run bench (or, after npm run build: node --import tsx test/bench/realtime.bench.ts)
 */
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { loadConfig } from '../../src/config.js';
import { openKeyStore } from '../../src/server.js';
import { startServeProcess, stopServeProcess, type ServeProcess } from './serve-process.js';
import { lastSpeechFrame } from './speech-end.js';
import { percentile } from './stt.bench.js';

const HANGOVER_MS = 500;

/**
 * A running server, its address and keys. Session opens are rate-limited per key (bursts of
 * 25), so the crowds spread over ten keys of each kind, as many customers would.
 */
interface Server {
  readonly process: ServeProcess;
  readonly ws: string;
  readonly liveKeys: string[];
  readonly sandboxKeys: string[];
  readonly dataDir: string;
}

async function startServer(env: Record<string, string> = {}): Promise<Server> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-realtime-bench-'));
  const { store, keys } = await openKeyStore(loadConfig({ SPRACHROHR_DATA_DIR: dataDir }));
  const liveKeys: string[] = [];
  const sandboxKeys: string[] = [];
  for (let i = 0; i < 10; i++) {
    liveKeys.push((await keys.create(`bench live ${i}`, 'live')).key);
    sandboxKeys.push((await keys.create(`bench sandbox ${i}`, 'sandbox')).key);
  }
  await store.close();
  const server = await startServeProcess({
    SPRACHROHR_DATA_DIR: dataDir,
    SPRACHROHR_REALTIME_SANDBOX_KEY_MAX_SESSIONS: '100',
    SPRACHROHR_REALTIME_IDLE_TIMEOUT_MS: '120000',
    ...env,
  });
  const address = server.address.replace(/^http:\/\//, '');
  return { process: server, ws: `ws://${address}/v1`, liveKeys, sandboxKeys, dataDir };
}

async function stopServer(server: Server): Promise<void> {
  await stopServeProcess(server.process);
  await fs.rm(server.dataDir, { recursive: true, force: true });
}

/**
 * Opens a session socket; JSON frames are handed to `onFrame` with their arrival time, binary
 * frames (audio with `transport: binary`) to `onBinary`.
 */
function open(
  url: string,
  key: string,
  onFrame: (frame: Record<string, unknown>, atMs: number) => void,
  onBinary: (atMs: number) => void = () => {},
): Promise<WebSocket> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers: { 'X-API-Key': key } });
    socket.on('message', (data: Buffer, isBinary: boolean) => {
      if (isBinary) onBinary(performance.now());
      else onFrame(JSON.parse(data.toString('utf8')) as Record<string, unknown>, performance.now());
    });
    socket.once('open', () => resolve(socket));
    socket.once('error', reject);
  });
}

const sleepUntil = (atMs: number) => new Promise((resolve) => setTimeout(resolve, Math.max(0, atMs - performance.now())));

const START = { type: 'session.start', model: 'swift', voice: 'anna', language: 'de-CH', format: 'pcm16', sample_rate_hz: 16000 };

/** Synthesis: `text.append` of a sentence to the first `audio.chunk`, one session at a time. */
async function firstAudio(server: Server, rounds: number): Promise<number[]> {
  const times: number[] = [];
  for (let round = 0; round < rounds; round++) {
    let sentAt = 0;
    let first = 0;
    let resolveFirst!: () => void;
    const gotFirst = new Promise<void>((resolve) => (resolveFirst = resolve));
    let resolveReady!: () => void;
    const ready = new Promise<void>((resolve) => (resolveReady = resolve));
    const socket = await open(`${server.ws}/tts/stream`, server.liveKeys[round % 10]!, (frame, at) => {
      if (frame['type'] === 'session.ready') resolveReady();
      if (frame['type'] === 'audio.chunk' && first === 0) {
        first = at;
        resolveFirst();
      }
    });
    socket.send(JSON.stringify(START));
    await ready;
    sentAt = performance.now();
    socket.send(JSON.stringify({ type: 'text.append', text: 'Grüezi und willkommen beim Kundendienst der Stadtwerke. ' }));
    await gotFirst;
    times.push(first - sentAt);
    socket.close();
  }
  return times;
}

/** Debian's "go forward ten meters", 16 kHz PCM16, with silence around it. */
function speech(): Buffer {
  const raw = readFileSync('/usr/share/pocketsphinx/test/data/goforward.raw');
  return Buffer.concat([Buffer.alloc(16000 * 0.3 * 2), raw, Buffer.alloc(16000 * 1.2 * 2)]);
}

/** Where speech ends in `speech()`, in seconds: the end of its last frame within 30 dB of the loudest (see `speech-end.ts`). */
function speechEndSeconds(audio: Buffer): number {
  const pcm = new Int16Array(audio.buffer.slice(audio.byteOffset, audio.byteOffset + audio.length));
  return ((lastSpeechFrame(pcm, 320) + 1) * 320) / 16000;
}

/** Recognition with audio sent in real time: partial lags and final lags beyond the hangover. */
async function recognitionLag(
  server: Server,
  keys: readonly string[],
  sessions: number,
  rounds: number,
): Promise<{ partialLags: number[]; finalLags: number[] }> {
  const audio = speech();
  const speechEnd = speechEndSeconds(audio);
  const partialLags: number[] = [];
  const finalLags: number[] = [];
  for (let round = 0; round < rounds; round++) {
    await Promise.all(
      Array.from({ length: sessions }, async (_, index) => {
        let start = 0;
        let done!: () => void;
        const complete = new Promise<void>((resolve) => (done = resolve));
        let readyResolve!: () => void;
        const ready = new Promise<void>((resolve) => (readyResolve = resolve));
        const socket = await open(`${server.ws}/stt/stream`, keys[index % keys.length]!, (frame, at) => {
          if (frame['type'] === 'session.ready') readyResolve();
          else if (frame['type'] === 'transcript.partial') partialLags.push(at - (start + (frame['duration_s'] as number) * 1000));
          else if (frame['type'] === 'transcript.final' && (frame['text'] as string) !== '') finalLags.push(at - (start + speechEnd * 1000) - HANGOVER_MS);
          else if (frame['type'] === 'session.complete') done();
        });
        socket.send(JSON.stringify({ type: 'config', lang: 'en' }));
        await ready;
        start = performance.now();
        // Each 20 ms frame goes out when its last sample would have been recorded.
        for (let at = 0, n = 1; at < audio.length; at += 640, n++) {
          await sleepUntil(start + n * 20);
          socket.send(audio.subarray(at, at + 640));
        }
        socket.send(JSON.stringify({ type: 'audio.end' }));
        await complete;
        socket.close();
      }),
    );
  }
  return { partialLags, finalLags };
}

/** What a crowd of synthesis sessions measured. */
export interface CrowdSynthesis {
  frames: number;
  lateOver20Ms: number;
  worstLateMs: number;
  firstAudioP50Ms: number;
  firstAudioMaxMs: number;
}

/**
 * Many synthesis sessions opened at once, each speaking two sentences: how late each audio
 * frame arrives against real-time playback from the session's first frame (first + seq × 20 ms).
 * With `transport: binary` the frames' order is their sequence.
 */
async function concurrentSynthesis(server: Server, sessions: number, transport: 'json' | 'binary'): Promise<CrowdSynthesis> {
  let frames = 0;
  let late = 0;
  let worst = 0;
  const firstAudio: number[] = [];
  await Promise.all(
    Array.from({ length: sessions }, async (_, index) => {
      let first = 0;
      let appendedAt = 0;
      let received = 0;
      let done!: () => void;
      const complete = new Promise<void>((resolve) => (done = resolve));
      let readyResolve!: () => void;
      const ready = new Promise<void>((resolve) => (readyResolve = resolve));
      const onAudio = (seq: number, at: number): void => {
        if (first === 0) {
          first = at;
          firstAudio.push(at - appendedAt);
        }
        const lateness = at - (first + seq * 20);
        frames += 1;
        if (lateness > 20) late += 1;
        worst = Math.max(worst, lateness);
      };
      const socket = await open(
        `${server.ws}/tts/stream`,
        server.liveKeys[index % 10]!,
        (frame, at) => {
          if (frame['type'] === 'session.ready') readyResolve();
          if (frame['type'] === 'audio.chunk') onAudio(frame['seq'] as number, at);
          if (frame['type'] === 'session.complete') done();
        },
        (at) => onAudio(received++, at),
      );
      socket.send(JSON.stringify({ ...START, transport }));
      await ready;
      appendedAt = performance.now();
      socket.send(JSON.stringify({ type: 'text.append', text: 'Grüezi und willkommen. Für Fragen zur Rechnung drücken Sie bitte die Eins. ' }));
      socket.send(JSON.stringify({ type: 'session.end' }));
      await complete;
      socket.close();
    }),
  );
  return { frames, lateOver20Ms: late, worstLateMs: worst, firstAudioP50Ms: percentile(firstAudio, 50), firstAudioMaxMs: Math.max(...firstAudio) };
}

export interface RealtimeFigures {
  firstAudioMs: { p50: number; p95: number; count: number };
  partialLagMs: { p50: number; p95: number; count: number };
  finalBeyondHangoverMs: { p50: number; p95: number; count: number };
  /** 100 sessions at once, audio as JSON `audio.chunk` frames, then as binary frames. */
  synthesis100: { json: CrowdSynthesis; binary: CrowdSynthesis };
  recognition50: { partials: number; partialLagP99Ms: number; partialLagMaxMs: number; finals: number; finalBeyondHangoverP99Ms: number };
}

const summary = (values: number[]) => ({ p50: percentile(values, 50), p95: percentile(values, 95), count: values.length });

/** Starts a server, measures, stops it. */
export async function benchRealtime(): Promise<RealtimeFigures> {
  const server = await startServer();
  try {
    await firstAudio(server, 5); // warm-up
    const first = await firstAudio(server, 30);
    const live = await recognitionLag(server, server.liveKeys, 1, 5);
    const synthesis100 = { json: await concurrentSynthesis(server, 100, 'json'), binary: await concurrentSynthesis(server, 100, 'binary') };
    const crowd = await recognitionLag(server, server.sandboxKeys, 50, 1);
    return {
      firstAudioMs: summary(first),
      partialLagMs: summary(live.partialLags),
      finalBeyondHangoverMs: summary(live.finalLags),
      synthesis100,
      recognition50: {
        partials: crowd.partialLags.length,
        partialLagP99Ms: percentile(crowd.partialLags, 99),
        partialLagMaxMs: Math.max(...crowd.partialLags, NaN),
        finals: crowd.finalLags.length,
        finalBeyondHangoverP99Ms: percentile(crowd.finalLags, 99),
      },
    };
  } finally {
    await stopServer(server);
  }
}

/** Prints the figures as docs/performance.md shows it. */
export function printRealtimeFigures(figures: RealtimeFigures): void {
  const f = figures;
  console.log('\nRealtime over loopback (one serve process; eSpeak NG and pocketsphinx, one worker each):');
  console.log('| measure | figure | target |');
  console.log('|---|---|---|');
  console.log(
    `| text.append → first audio.chunk (${f.firstAudioMs.count} sessions) | p50 ${f.firstAudioMs.p50.toFixed(1)} ms, p95 ${f.firstAudioMs.p95.toFixed(1)} ms | p50 ≤ 40, p95 ≤ 80 ms |`,
  );
  console.log(
    `| recognition partial lag, audio in real time (${f.partialLagMs.count} partials) | p50 ${f.partialLagMs.p50.toFixed(1)} ms, p95 ${f.partialLagMs.p95.toFixed(1)} ms | ≤ 60 ms |`,
  );
  console.log(
    `| final after end of speech, beyond the 500 ms hangover (${f.finalBeyondHangoverMs.count} finals) | p50 ${f.finalBeyondHangoverMs.p50.toFixed(1)} ms, p95 ${f.finalBeyondHangoverMs.p95.toFixed(1)} ms | ≤ 150 ms |`,
  );
  for (const transport of ['json', 'binary'] as const) {
    const s = f.synthesis100[transport];
    console.log(
      `| 100 synthesis sessions at once (eSpeak NG), ${transport} transport: frames later than playback deadline + 20 ms | ${s.lateOver20Ms} of ${s.frames} (worst ${s.worstLateMs.toFixed(1)} ms late) | none |`,
    );
    console.log(
      `| the same 100 sessions: text.append → first audio frame | p50 ${s.firstAudioP50Ms.toFixed(0)} ms, max ${s.firstAudioMaxMs.toFixed(0)} ms | — |`,
    );
  }
  const r = f.recognition50;
  console.log(
    `| 50 recognition sessions at once (sandbox recogniser), audio in real time | ${r.finals} finals, final beyond hangover p99 ${r.finalBeyondHangoverP99Ms.toFixed(1)} ms | — |`,
  );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  printRealtimeFigures(await benchRealtime());
}
