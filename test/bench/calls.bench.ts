/**
 * Phone calls against `sprachrohr serve` processes over loopback, the issue's four call figures:
 *
 * - Load: N concurrent calls from SIPp (test/bench/sipp/load-call.xml) on one gateway process,
 *   G.711 both ways for the whole call: the route loops a prompt (synthetic engines, no
 *   barge-in), SIPp plays the caller's speech (a capture of Debian's "go forward ten meters",
 *   looped) and the gateway runs its voice-activity detector on every frame. The gateway's RTP
 *   goes where the caller's packets come from: SIPp sends each call from the port its SDP names,
 *   and this process has a socket on each of those ports. Every packet's arrival is compared with
 *   the call's schedule: n × 20 ms after the call's first packet, n from the RTP timestamp (which
 *   runs on with the clock, also across the short gap between two prompts), the whole schedule
 *   shifted to the call's most punctual packet so that no packet counts as early. Only packets
 *   of the window in which all N calls are up count (S seconds from the moment the last call's
 *   first packet arrived). Arrival times are taken in this process's event loop, which shares the
 *   machine with the gateway and SIPp: its own event-loop delay in the window is reported beside
 *   them. The gateway's own pacer statistics (tick lateness) are read from inside the gateway by
 *   a small preload that answers SIGUSR2.
 * - Memory per call: the gateway's RSS (VmRSS) with N calls up (median of the window's samples)
 *   minus its RSS with no call (after a short warm-up round of calls), divided by N. The routes
 *   use the synthetic engines and the process runs without live engines
 *   (SPRACHROHR_TTS_ENGINE/STT_ENGINE none), so the engines are excluded.
 * - Barge-in: a scripted caller (SIP over UDP and an RTP socket, both in this process) streams
 *   silence, and during a long prompt (synthetic engines) switches to speech from its first
 *   frame louder than RMS 500. Measured in this process: sending of that first speech packet →
 *   arrival of the last prompt packet. The detector needs three voiced frames (60 ms) before it
 *   calls speech started; the figure is also given less those 60 ms.
 * - Turn latency, live engines (eSpeak NG and pocketsphinx, one worker each on two cores): the
 *   caller says the recording after the greeting; measured in this process from sending the last
 *   20 ms frame louder than RMS 500 (the 8 kHz audio) to the arrival of the reply's first packet.
 *   The recogniser's endpointer waits 500 ms of silence before the final; the figure is given in
 *   total and beyond that hangover. The gateway's own figure (its detector's last voiced frame →
 *   the reply's first packet sent, logged as `turnLatencyMs`) is given beside it.
 *
 * Sizes (environment): CALLS_BENCH_CALLS (200 concurrent calls), CALLS_BENCH_SECONDS (30 s with
 * all calls up), CALLS_BENCH_RATE (50 new calls a second), CALLS_BENCH_BARGE_INS (20 rounds),
 * CALLS_BENCH_TURNS (10 turns); 0 leaves a part out. CALLS_BENCH_MEDIA_PORT sets SIPp's media
 * port (-mp; the receivers use the ports 4n above it, below 20000 by default).
 * Needs SIPp (sip-tester) with PCAP play (raw sockets: root or CAP_NET_RAW).
 * Run: npm run bench (or, after npm run build: node --single-threaded-gc --import tsx test/bench/calls.bench.ts)
 */
import { execFileSync } from 'node:child_process';
import dgram from 'node:dgram';
import { readFileSync } from 'node:fs';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { encodeMulaw } from '../../src/audio/g711.js';
import { loadResampler, Resampler } from '../../src/audio/resampler.js';
import type { PacingStats } from '../../src/telephony/rtp/pacer.js';
import type { SipResponse } from '../../src/telephony/sip/sip-message.js';
import { Peer, request, response, sipRequest } from '../helpers/sip-peer.js';
import { freePort, removeSippRuns, requireSipp, startSipp, type SippResult } from '../helpers/sipp.js';
import { pcmuPackets, rtpPcap } from '../integration/sipp/make-pcap.js';
import { startServeProcess, stopServeProcess, type ServeProcess } from './serve-process.js';

const FRAME_MS = 20;
const FRAME_SAMPLES = 160;
/** Three voiced frames in a row are speech starting (the media session's detector). */
const SPEECH_START_MS = 60;
/** Silence the recogniser's endpointer waits for before its final. */
const HANGOVER_MS = 500;
/** A 20 ms frame of the 8 kHz caller audio louder than this (RMS) is speech. */
const LOUD_RMS = 500;
const MULAW_SILENCE = 0xff;
const LOAD_SCENARIO = fileURLToPath(new URL('./sipp/load-call.xml', import.meta.url));
const PACER_MODULE = new URL('../../dist/src/telephony/rtp/pacer.js', import.meta.url).href;

/** The sizes of a run, from the environment (the issue's sizes by default). */
export interface CallsBenchSettings {
  readonly calls: number;
  readonly seconds: number;
  readonly rate: number;
  readonly bargeIns: number;
  readonly turns: number;
}

function setting(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text.trim() === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a number ≥ 0, got ${JSON.stringify(text)}`);
  return value;
}

export function callsBenchSettings(): CallsBenchSettings {
  return {
    calls: Math.round(setting('CALLS_BENCH_CALLS', 200)),
    seconds: setting('CALLS_BENCH_SECONDS', 30),
    rate: Math.max(1, setting('CALLS_BENCH_RATE', 50)),
    bargeIns: Math.round(setting('CALLS_BENCH_BARGE_INS', 20)),
    turns: Math.round(setting('CALLS_BENCH_TURNS', 10)),
  };
}

/** A prompt of about 9 s (the synthetic engine speaks 15 characters a second), looped by the load route. */
const LOAD_PROMPT = 'Thank you for calling. All of our agents are busy at the moment. Please stay on the line, your call is important to us and will be answered shortly.';
/** A prompt far longer than a barge-in round. */
const LONG_PROMPT = `${LOAD_PROMPT} ${LOAD_PROMPT} ${LOAD_PROMPT}`;

const SYNTHETIC_DIALPLAN = `name: calls-bench
routes:
  - number: "load"
    engines: synthetic
    language: en
    voice: jonas
    max_turns: 1000
    steps:
      - answer: {}
      - id: prompt
        say:
          text: ${JSON.stringify(LOAD_PROMPT)}
          barge_in: false
      - goto: prompt
  - number: "barge"
    engines: synthetic
    language: en
    voice: jonas
    steps:
      - answer: {}
      - say:
          text: ${JSON.stringify(LONG_PROMPT)}
      - hangup: {}
`;

const LIVE_DIALPLAN = `name: calls-bench-live
routes:
  - number: "turn"
    engines: live
    language: en
    voice: jonas
    steps:
      - answer: {}
      - say:
          text: Hello.
          barge_in: false
      - listen:
          dtmf: false
          timeout_ms: 8000
          max_ms: 15000
      - say:
          text: "You said {{heard}}."
          barge_in: false
      - hangup: {}
`;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(condition: () => boolean, timeoutMs: number, what: string): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
}

/** The value at percentile `p` of ascending values (the definition the other benchmarks use). */
function rank(sorted: ArrayLike<number>, p: number): number {
  return sorted.length === 0 ? Number.NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

function summary(values: number[]): { p50: number; p95: number; max: number; count: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return { p50: rank(sorted, 50), p95: rank(sorted, 95), max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN, count: sorted.length };
}

// ---------------------------------------------------------------------------------------------
// The caller's audio

/** Debian's "go forward ten meters" at 8 kHz: µ-law frames and which of them are loud. */
interface CallerSpeech {
  readonly pcm: Int16Array;
  readonly frames: Uint8Array[];
  readonly firstLoud: number;
  readonly lastLoud: number;
}

async function callerSpeech(): Promise<CallerSpeech> {
  await loadResampler();
  const raw = readFileSync('/usr/share/pocketsphinx/test/data/goforward.raw');
  const wide = new Int16Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.length));
  const resampler = new Resampler(16000, 8000);
  const head = resampler.process(wide);
  const tail = resampler.flush();
  resampler.destroy();
  const pcm = new Int16Array(Math.ceil((head.length + tail.length) / FRAME_SAMPLES) * FRAME_SAMPLES);
  pcm.set(head);
  pcm.set(tail, head.length);
  const frames: Uint8Array[] = [];
  let firstLoud = -1;
  let lastLoud = -1;
  for (let at = 0, index = 0; at < pcm.length; at += FRAME_SAMPLES, index++) {
    const frame = pcm.subarray(at, at + FRAME_SAMPLES);
    let sum = 0;
    for (const sample of frame) sum += sample * sample;
    if (Math.sqrt(sum / FRAME_SAMPLES) > LOUD_RMS) {
      if (firstLoud < 0) firstLoud = index;
      lastLoud = index;
    }
    frames.push(encodeMulaw(frame));
  }
  if (firstLoud < 0) throw new Error('the recording has no frame louder than RMS 500');
  return { pcm, frames, firstLoud, lastLoud };
}

/** SIPp's capture: the recording and a second of silence, again and again, for `seconds`. */
function callerCapture(speech: CallerSpeech, seconds: number): Buffer {
  const cycle = new Int16Array(speech.pcm.length + 8000);
  cycle.set(speech.pcm);
  const total = new Int16Array(Math.ceil((seconds * 8000) / cycle.length) * cycle.length);
  for (let at = 0; at < total.length; at += cycle.length) total.set(cycle, at);
  return rtpPcap(pcmuPackets(encodeMulaw(total), { ssrc: 0x43414c4c }));
}

// ---------------------------------------------------------------------------------------------
// The gateway process

/** What the gateway logs that the benchmark reads: turn latencies, pacer statistics, ended calls. */
interface GatewayLog {
  readonly turnLatenciesMs: number[];
  readonly pacer: PacingStats[];
  callsEnded: number;
}

interface Gateway {
  readonly server: ServeProcess;
  readonly pid: number;
  readonly sipPort: number;
  readonly log: GatewayLog;
  readonly dir: string;
}

/**
 * The preload the gateway runs with: keeps the pacer clocks it creates and, on SIGUSR2, prints
 * each one's statistics (a `bench pacer` line) and starts them afresh. Nothing else changes.
 */
function pacerPreloadFlag(): string {
  const code = [
    `import { PacerClock } from ${JSON.stringify(PACER_MODULE)};`,
    'const clocks = new Set();',
    'const add = PacerClock.prototype.add;',
    'PacerClock.prototype.add = function (stream) { clocks.add(this); return add.call(this, stream); };',
    "process.on('SIGUSR2', () => {",
    "  for (const clock of clocks) process.stdout.write(JSON.stringify({ msg: 'bench pacer', stats: clock.stats() }) + '\\n');",
    '  for (const clock of clocks) clock.resetStats();',
    '});',
  ].join('\n');
  return `--import=data:text/javascript;base64,${Buffer.from(code).toString('base64')}`;
}

async function startGateway(dialplan: string, env: Record<string, string>): Promise<Gateway> {
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
  const log: GatewayLog = { turnLatenciesMs: [], pacer: [], callsEnded: 0 };
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
    }
  });
  return { server, pid: server.child.pid!, sipPort, log, dir };
}

async function stopGateway(gateway: Gateway): Promise<void> {
  await stopServeProcess(gateway.server);
  await fs.rm(gateway.dir, { recursive: true, force: true });
}

/** The gateway's pacer statistics since the last request (null when it printed none). */
async function pacerStats(gateway: Gateway): Promise<PacingStats | null> {
  const before = gateway.log.pacer.length;
  gateway.server.child.kill('SIGUSR2');
  await until(() => gateway.log.pacer.length > before, 2000, 'the pacer statistics').catch(() => undefined);
  const printed = gateway.log.pacer.slice(before);
  return printed.length === 0 ? null : printed.reduce((best, stats) => (stats.ticks > best.ticks ? stats : best));
}

/** Resident memory of a process in MiB (VmRSS). */
async function rssMb(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, 'utf8');
  const match = /VmRSS:\s+(\d+) kB/.exec(status);
  return match ? Number(match[1]) / 1024 : Number.NaN;
}

let clockTicks = 0;

/** CPU seconds (user + system) a process has used. */
async function cpuSeconds(pid: number | undefined): Promise<number> {
  if (pid === undefined) return Number.NaN;
  clockTicks ||= Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
  try {
    const stat = await fs.readFile(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  } catch {
    return Number.NaN;
  }
}

async function waitForCallsEnded(gateway: Gateway, count: number): Promise<void> {
  await until(() => gateway.log.callsEnded >= count, 15_000, `${count} calls to end`).catch(() => undefined);
}

// ---------------------------------------------------------------------------------------------
// Load: SIPp's calls and one receiving socket per call

/** The packets one call's receiver got: arrival times and their offsets from the call's schedule. */
class CallTrace {
  count = 0;
  lost = 0;
  foreign = 0;
  private ssrc = 0;
  private firstTimestamp = 0;
  private lastSequence = 0;
  at: Float64Array;
  offset: Float64Array;
  /** How many packets were missing before each one (gaps in the sequence numbers). */
  gapBefore: Uint16Array;

  /** `capacity`: the packets expected, so that the arrays need not grow while packets arrive. */
  constructor(capacity: number) {
    this.at = new Float64Array(capacity);
    this.offset = new Float64Array(capacity);
    this.gapBefore = new Uint16Array(capacity);
  }

  add(data: Buffer, at: number): void {
    if (data.length < 12 || data[0]! >> 6 !== 2) return;
    const sequence = data.readUInt16BE(2);
    const timestamp = data.readUInt32BE(4);
    const ssrc = data.readUInt32BE(8);
    let gap = 0;
    if (this.count === 0) {
      this.ssrc = ssrc;
      this.firstTimestamp = timestamp;
    } else if (ssrc !== this.ssrc) {
      this.foreign += 1;
      return;
    } else {
      const step = (sequence - this.lastSequence) & 0xffff;
      if (step > 1 && step < 0x8000) gap = step - 1;
      this.lost += gap;
    }
    this.lastSequence = sequence;
    if (this.count === this.at.length) {
      const grow = <T extends Float64Array | Uint16Array>(array: T, make: (length: number) => T): T => {
        const bigger = make(array.length * 2);
        bigger.set(array);
        return bigger;
      };
      this.at = grow(this.at, (n) => new Float64Array(n));
      this.offset = grow(this.offset, (n) => new Float64Array(n));
      this.gapBefore = grow(this.gapBefore, (n) => new Uint16Array(n));
    }
    const frames = ((timestamp - this.firstTimestamp) >>> 0) / FRAME_SAMPLES;
    this.at[this.count] = at;
    this.offset[this.count] = at - frames * FRAME_MS;
    this.gapBefore[this.count] = Math.min(gap, 0xffff);
    this.count += 1;
  }

  get firstAt(): number {
    return this.count > 0 ? this.at[0]! : Number.NaN;
  }

  get lastAt(): number {
    return this.count > 0 ? this.at[this.count - 1]! : Number.NaN;
  }
}

/** One socket per call on the ports SIPp's calls offer: media port + 4n for call n. */
class CallReceivers {
  traces: CallTrace[] = [];
  onAllStarted: (() => void) | null = null;
  private started = 0;
  /** Packets expected per call (grown to when a run is longer). */
  capacity = 2048;

  private constructor(
    readonly mediaPort: number,
    private readonly sockets: dgram.Socket[],
  ) {
    this.reset();
    sockets.forEach((socket, index) =>
      socket.on('message', (data) => {
        const at = performance.now();
        const trace = this.traces[index]!;
        const wasEmpty = trace.count === 0;
        trace.add(data, at);
        if (wasEmpty && trace.count > 0 && ++this.started === this.sockets.length) this.onAllStarted?.();
      }),
    );
  }

  /** Binds the receivers; SIPp's own media ports (the media port and two above) must be free too. */
  static async open(calls: number): Promise<CallReceivers> {
    const fixed = process.env['CALLS_BENCH_MEDIA_PORT'] ? Number(process.env['CALLS_BENCH_MEDIA_PORT']) : null;
    const span = 4 * (calls + 1);
    const bases = fixed !== null ? [fixed] : Array.from({ length: 40 }, (_, k) => 10_000 + k * (span + 4)).filter((base) => base + span < 20_000);
    for (const base of bases) {
      const sockets: dgram.Socket[] = [];
      try {
        for (const port of [base, base + 2]) await bind(port).then((socket) => new Promise((resolve) => socket.close(() => resolve(undefined))));
        for (let n = 1; n <= calls; n++) sockets.push(await bind(base + 4 * n));
        return new CallReceivers(base, sockets);
      } catch {
        await Promise.all(sockets.map((socket) => new Promise((resolve) => socket.close(() => resolve(undefined)))));
      }
    }
    throw new Error(`no free run of ports for ${calls} calls below 20000 (set CALLS_BENCH_MEDIA_PORT)`);
  }

  reset(): void {
    this.traces = this.sockets.map(() => new CallTrace(this.capacity));
    this.started = 0;
  }

  async close(): Promise<void> {
    await Promise.all(this.sockets.map((socket) => new Promise((resolve) => socket.close(() => resolve(undefined)))));
  }
}

function bind(port: number): Promise<dgram.Socket> {
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

/** What the load run measured. */
export interface LoadFigures {
  readonly calls: number;
  readonly cores: number;
  /** Calls whose RTP reached the receiver. */
  readonly callsWithAudio: number;
  /** Seconds with all calls up that were measured. */
  readonly windowSeconds: number;
  readonly packets: number;
  readonly lost: number;
  readonly pacingMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly laterThan2Ms: number;
  readonly laterThan10Ms: number;
  readonly sipp: { readonly successful: number; readonly failed: number; readonly exitCode: number | null };
  /** CPU used in the window, in cores (1 = one core busy all the time). */
  readonly cpu: { readonly gateway: number; readonly sipp: number; readonly bench: number };
  /** This process's event-loop delay in the window (the receivers' timing error). */
  readonly receiverLoopDelayMs: { readonly p99: number; readonly max: number };
  /** The gateway's pacer in the window (tick lateness against its deadlines). */
  readonly pacer: PacingStats | null;
  readonly rssMb: { readonly idle: number; readonly loaded: number; readonly after: number; readonly perCall: number };
}

interface Sample {
  readonly at: number;
  readonly rssMb: number;
  readonly gatewayCpu: number;
  readonly sippCpu: number;
  readonly benchCpu: number;
}

/** SIPp's calls: `calls` at `rate` a second, each `pauseMs` long after the ACK. */
async function sippCalls(gateway: Gateway, receivers: CallReceivers, capture: string, calls: number, rate: number, pauseMs: number) {
  return startSipp({
    scenario: LOAD_SCENARIO,
    target: `127.0.0.1:${gateway.sipPort}`,
    service: 'load',
    calls,
    rate,
    mediaPort: receivers.mediaPort,
    timeoutMs: pauseMs + (calls / rate) * 1000 + 60_000,
    variables: { caller_pcap: capture },
    extraArgs: ['-d', String(Math.round(pauseMs)), '-l', String(calls)],
  });
}

function failedSipp(result: SippResult, what: string): void {
  if (result.exitCode !== 0) console.error(`${what}: SIPp ${result.successful} calls successful, ${result.failed} failed\n${result.report}`);
}

async function loadRun(gateway: Gateway, speech: CallerSpeech, settings: CallsBenchSettings): Promise<LoadFigures> {
  const { calls, seconds, rate } = settings;
  const rampMs = (calls / rate) * 1000;
  const pauseMs = seconds * 1000 + rampMs + 3000;
  const captureDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-calls-capture-'));
  const receivers = await CallReceivers.open(calls);
  try {
    receivers.capacity = Math.ceil(pauseMs / FRAME_MS) + 500;
    const capture = path.join(captureDir, 'caller.pcap');
    await fs.writeFile(capture, callerCapture(speech, pauseMs / 1000 + 5));

    // Warm-up: a few calls, so that the idle figure is of a process that has taken calls.
    const warmCalls = Math.min(10, calls);
    const warm = await (await sippCalls(gateway, receivers, capture, warmCalls, Math.min(rate, 10), 3000)).result;
    failedSipp(warm, 'warm-up');
    await waitForCallsEnded(gateway, warmCalls);
    const idleSamples: number[] = [];
    for (let i = 0; i < 5; i++) {
      await sleep(400);
      idleSamples.push(await rssMb(gateway.pid));
    }
    const idle = rank(idleSamples.sort((a, b) => a - b), 50);
    receivers.reset();
    const endedBefore = gateway.log.callsEnded;

    const samples: Sample[] = [];
    let sippPid: number | undefined;
    const sample = async () => {
      const at = performance.now();
      const [rss, gatewayCpu, sippCpu] = await Promise.all([rssMb(gateway.pid), cpuSeconds(gateway.pid), cpuSeconds(sippPid)]);
      const usage = process.cpuUsage();
      samples.push({ at, rssMb: rss, gatewayCpu, sippCpu, benchCpu: (usage.user + usage.system) / 1e6 });
    };
    const sampler = setInterval(() => void sample(), 500);

    const loopDelay = monitorEventLoopDelay({ resolution: 1 });
    let windowStart = Number.NaN;
    let windowEnd = Number.NaN;
    let pacer: PacingStats | null = null;
    let windowDone: Promise<void> = Promise.resolve();
    receivers.onAllStarted = () => {
      windowStart = performance.now();
      loopDelay.enable();
      gateway.server.child.kill('SIGUSR2'); // starts the pacer's statistics afresh
      void sample();
      windowDone = sleep(seconds * 1000).then(async () => {
        windowEnd = performance.now();
        loopDelay.disable();
        await sample();
        pacer = await pacerStats(gateway);
      });
    };
    const run = await sippCalls(gateway, receivers, capture, calls, rate, pauseMs);
    sippPid = run.pid;
    const result = await run.result;
    await windowDone;
    clearInterval(sampler);
    failedSipp(result, 'load');
    await waitForCallsEnded(gateway, endedBefore + calls);
    await sleep(2000);
    const after = await rssMb(gateway.pid);

    const withAudio = receivers.traces.filter((trace) => trace.count > 0);
    if (withAudio.length === 0) throw new Error(`no RTP reached the receivers (SIPp: ${result.successful} successful, ${result.failed} failed)`);
    // The window: all calls up, at most `seconds` long, ended before the first call's last packet.
    const start = Number.isNaN(windowStart) ? Math.max(...withAudio.map((trace) => trace.firstAt)) : windowStart;
    const end = Math.min(Number.isNaN(windowEnd) ? start + seconds * 1000 : windowEnd, ...withAudio.map((trace) => trace.lastAt));
    let packets = 0;
    let lost = 0;
    for (const trace of withAudio) for (let i = 0; i < trace.count; i++) if (trace.at[i]! >= start && trace.at[i]! <= end) packets++;
    const errors = new Float64Array(packets);
    let k = 0;
    for (const trace of withAudio) {
      let anchor = Infinity;
      for (let i = 0; i < trace.count; i++) anchor = Math.min(anchor, trace.offset[i]!);
      for (let i = 0; i < trace.count; i++) {
        if (trace.at[i]! < start || trace.at[i]! > end) continue;
        errors[k++] = trace.offset[i]! - anchor;
        lost += trace.gapBefore[i]!;
      }
    }
    errors.sort();
    let laterThan2Ms = 0;
    let laterThan10Ms = 0;
    for (const error of errors) {
      if (error > 2) laterThan2Ms++;
      if (error > 10) laterThan10Ms++;
    }
    const inWindow = samples.filter((s) => s.at >= start - 1 && s.at <= end + 1).sort((a, b) => a.at - b.at);
    const first = inWindow[0];
    const last = inWindow[inWindow.length - 1];
    const span = first && last && last.at > first.at ? (last.at - first.at) / 1000 : Number.NaN;
    const loaded = rank(inWindow.map((s) => s.rssMb).sort((a, b) => a - b), 50);
    return {
      calls,
      cores: os.availableParallelism(),
      callsWithAudio: withAudio.length,
      windowSeconds: (end - start) / 1000,
      packets,
      lost,
      pacingMs: { p50: rank(errors, 50), p99: rank(errors, 99), max: errors.length ? errors[errors.length - 1]! : Number.NaN },
      laterThan2Ms,
      laterThan10Ms,
      sipp: { successful: result.successful, failed: result.failed, exitCode: result.exitCode },
      cpu: {
        gateway: first && last ? (last.gatewayCpu - first.gatewayCpu) / span : Number.NaN,
        sipp: first && last ? (last.sippCpu - first.sippCpu) / span : Number.NaN,
        bench: first && last ? (last.benchCpu - first.benchCpu) / span : Number.NaN,
      },
      receiverLoopDelayMs: { p99: loopDelay.count > 0 ? loopDelay.percentile(99) / 1e6 : Number.NaN, max: loopDelay.count > 0 ? loopDelay.max / 1e6 : Number.NaN },
      pacer,
      rssMb: { idle, loaded, after, perCall: (loaded - idle) / calls },
    };
  } finally {
    await receivers.close();
    await fs.rm(captureDir, { recursive: true, force: true });
    await removeSippRuns();
  }
}

// ---------------------------------------------------------------------------------------------
// A scripted caller: SIP over UDP and an RTP stream that never stops (silence between speech)

interface Arrival {
  readonly at: number;
  readonly marker: boolean;
}

class Caller {
  readonly received: Arrival[] = [];
  private readonly queue: Array<{ frame: Uint8Array; sent: (at: number) => void }> = [];
  private timer: NodeJS.Timeout | null = null;
  private sequence = 1000;
  private timestamp = 8000;
  private sentFrames = 0;
  private byeAnswered = false;

  private constructor(
    private readonly sip: Peer & { close(): void },
    private readonly media: dgram.Socket,
    private readonly callId: string,
    private readonly toTag: string,
    private readonly gatewayRtpPort: number,
  ) {
    media.on('message', (data) => {
      const at = performance.now();
      if (data.length >= 12) this.received.push({ at, marker: (data[1]! & 0x80) !== 0 });
    });
  }

  /** Calls `number`, acknowledges the 200 and starts the RTP stream (silence until {@link play}). */
  static async dial(sipPort: number, number: string, callId: string): Promise<Caller> {
    const sip = await Peer.udp(sipPort);
    const media = await bind(0);
    const rtpPort = media.address().port;
    const offer = `v=0\r\no=caller 1 1 IN IP4 127.0.0.1\r\ns=-\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\nm=audio ${rtpPort} RTP/AVP 0 101\r\na=rtpmap:0 PCMU/8000\r\na=rtpmap:101 telephone-event/8000\r\na=fmtp:101 0-16\r\na=ptime:20\r\n`;
    sip.write(sipRequest(sip, 'INVITE', { callId, cseq: 1, body: offer }).replace('sip:100@127.0.0.1 SIP/2.0', `sip:${number}@127.0.0.1 SIP/2.0`));
    const ok = (await sip.next(response(200, 'INVITE'), 0, 10_000)) as SipResponse;
    const toTag = /tag=([^;]+)/.exec(ok.headers.get('To')!)![1]!;
    sip.write(sipRequest(sip, 'ACK', { callId, cseq: 1, toTag }));
    const caller = new Caller(sip, media, callId, toTag, Number(/m=audio (\d+)/.exec(ok.body.toString())![1]));
    caller.startStream();
    return caller;
  }

  private startStream(): void {
    const start = performance.now();
    const silence = new Uint8Array(FRAME_SAMPLES).fill(MULAW_SILENCE);
    const tick = (): void => {
      const next = this.queue.shift();
      this.timestamp = (this.timestamp + FRAME_SAMPLES) >>> 0;
      const header = Buffer.alloc(12);
      header[0] = 0x80;
      header[1] = this.sentFrames === 0 ? 0x80 : 0;
      header.writeUInt16BE(this.sequence++ & 0xffff, 2);
      header.writeUInt32BE(this.timestamp, 4);
      header.writeUInt32BE(0x0bec0de5, 8);
      this.media.send(Buffer.concat([header, next?.frame ?? silence]), this.gatewayRtpPort, '127.0.0.1');
      next?.sent(performance.now());
      this.sentFrames += 1;
      this.timer = setTimeout(tick, Math.max(0, start + (this.sentFrames + 1) * FRAME_MS - performance.now()));
    };
    this.timer = setTimeout(tick, FRAME_MS);
  }

  /** Sends `frames` next in the stream; resolves with the time each one went out. */
  play(frames: readonly Uint8Array[]): Promise<number[]> {
    const times: number[] = [];
    return new Promise((resolve) => {
      frames.forEach((frame, index) =>
        this.queue.push({
          frame,
          sent: (at) => {
            times[index] = at;
            if (index === frames.length - 1) resolve(times);
          },
        }),
      );
    });
  }

  /** Waits for the gateway's BYE and answers it; false when none came in time. */
  async byeFromGateway(timeoutMs: number): Promise<boolean> {
    try {
      const bye = await this.sip.next(request('BYE'), 0, timeoutMs);
      this.sip.write(`SIP/2.0 200 OK\r\nVia: ${bye.headers.get('Via')}\r\nFrom: ${bye.headers.get('From')}\r\nTo: ${bye.headers.get('To')}\r\nCall-ID: ${this.callId}\r\nCSeq: ${bye.headers.get('CSeq')}\r\nContent-Length: 0\r\n\r\n`);
      this.byeAnswered = true;
      return true;
    } catch {
      return false;
    }
  }

  /** Stops the stream, hangs up unless the gateway did, and closes the sockets. */
  async close(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    if (!this.byeAnswered) {
      this.sip.write(sipRequest(this.sip, 'BYE', { callId: this.callId, cseq: 2, toTag: this.toTag }));
      await this.sip.next(response(200, 'BYE'), 0, 3000).catch(() => undefined);
    }
    this.sip.close();
    await new Promise((resolve) => this.media.close(() => resolve(undefined)));
  }
}

/** Barge-in: first speech packet sent → last prompt packet received, per round. */
async function bargeIns(gateway: Gateway, speech: CallerSpeech, rounds: number): Promise<{ delaysMs: number[]; failed: number }> {
  const delaysMs: number[] = [];
  let failed = 0;
  const words = speech.frames.slice(speech.firstLoud);
  for (let round = 0; round < rounds; round++) {
    const caller = await Caller.dial(gateway.sipPort, 'barge', `calls-bench-barge-${process.pid}-${round}`);
    try {
      await until(() => caller.received.length >= 40, 10_000, 'the prompt');
      // Speech starts at a different point of the gateway's 20 ms tick each round.
      await sleep(Math.random() * FRAME_MS);
      const sent = caller.play(words);
      const stopped = await caller.byeFromGateway(5000);
      const times = await sent;
      const last = caller.received[caller.received.length - 1]!.at;
      if (stopped) delaysMs.push(last - times[0]!);
      else failed += 1;
    } finally {
      await caller.close();
    }
  }
  return { delaysMs, failed };
}

/** Turns: last loud frame sent → first reply packet received, per turn. */
async function turns(gateway: Gateway, speech: CallerSpeech, rounds: number): Promise<{ latenciesMs: number[]; failed: number }> {
  const latenciesMs: number[] = [];
  let failed = 0;
  const words = [...speech.frames, ...Array.from({ length: 25 }, () => new Uint8Array(FRAME_SAMPLES).fill(MULAW_SILENCE))];
  for (let round = 0; round < rounds; round++) {
    const caller = await Caller.dial(gateway.sipPort, 'turn', `calls-bench-turn-${process.pid}-${round}`);
    try {
      // The greeting: wait until it has played and 300 ms passed without a packet.
      await until(() => caller.received.length > 0 && performance.now() - caller.received[caller.received.length - 1]!.at > 300, 15_000, 'the greeting');
      const heardBefore = caller.received.length;
      const times = await caller.play(words);
      await until(() => caller.received.length > heardBefore, 15_000, 'the reply').catch(() => undefined);
      const reply = caller.received[heardBefore];
      if (reply && reply.at > times[speech.lastLoud]!) latenciesMs.push(reply.at - times[speech.lastLoud]!);
      else failed += 1;
      await caller.byeFromGateway(20_000);
    } finally {
      await caller.close();
    }
  }
  return { latenciesMs, failed };
}

// ---------------------------------------------------------------------------------------------

export interface CallsFigures {
  readonly settings: CallsBenchSettings;
  readonly load: LoadFigures | null;
  readonly bargeIn: { readonly raw: ReturnType<typeof summary>; readonly lessDetection: ReturnType<typeof summary>; readonly failed: number } | null;
  readonly turn: {
    readonly total: ReturnType<typeof summary>;
    readonly beyondHangover: ReturnType<typeof summary>;
    /** The gateway's own figure: its detector's last voiced frame → the reply's first packet sent. */
    readonly gateway: ReturnType<typeof summary>;
    readonly failed: number;
  } | null;
}

/** Starts the gateways, measures, stops them. */
export async function benchCalls(settings: CallsBenchSettings = callsBenchSettings()): Promise<CallsFigures> {
  const speech = await callerSpeech();
  let load: LoadFigures | null = null;
  let bargeIn: CallsFigures['bargeIn'] = null;
  let turn: CallsFigures['turn'] = null;
  if (settings.calls > 0 || settings.bargeIns > 0) {
    const gateway = await startGateway(SYNTHETIC_DIALPLAN, {
      SPRACHROHR_TTS_ENGINE: 'none',
      SPRACHROHR_STT_ENGINE: 'none',
      SPRACHROHR_SIP_MAX_CALLS: String(Math.max(200, settings.calls + 10)),
      SPRACHROHR_SIP_MAX_CALLS_PER_SOURCE: String(Math.max(200, settings.calls + 10)),
    });
    try {
      if (settings.calls > 0) {
        await requireSipp();
        load = await loadRun(gateway, speech, settings);
      }
      if (settings.bargeIns > 0) {
        const { delaysMs, failed } = await bargeIns(gateway, speech, settings.bargeIns);
        bargeIn = { raw: summary(delaysMs), lessDetection: summary(delaysMs.map((ms) => ms - SPEECH_START_MS)), failed };
      }
    } finally {
      await stopGateway(gateway);
    }
  }
  if (settings.turns > 0) {
    const gateway = await startGateway(LIVE_DIALPLAN, { SPRACHROHR_TTS_ENGINE: 'espeak', SPRACHROHR_STT_ENGINE: 'pocketsphinx' });
    try {
      await turns(gateway, speech, 1); // warm-up: the engines' first use
      const logged = gateway.log.turnLatenciesMs.length;
      const { latenciesMs, failed } = await turns(gateway, speech, settings.turns);
      turn = {
        total: summary(latenciesMs),
        beyondHangover: summary(latenciesMs.map((ms) => ms - HANGOVER_MS)),
        gateway: summary(gateway.log.turnLatenciesMs.slice(logged)),
        failed,
      };
    } finally {
      await stopGateway(gateway);
    }
  }
  return { settings, load, bargeIn, turn };
}

const ms = (value: number, digits = 1) => `${value.toFixed(digits)} ms`;

/** Prints the figures as the README's table. */
export function printCallsFigures(figures: CallsFigures): void {
  const { load, bargeIn, turn } = figures;
  console.log(`\nPhone calls over loopback (one serve process; ${os.availableParallelism()} cores shared with SIPp and the measuring process):`);
  console.log('| measure | figure | target |');
  console.log('|---|---|---|');
  if (load) {
    const l = load;
    const setup = `${l.calls} concurrent calls from SIPp, G.711 both ways, VAD on, synthetic engines, ${l.windowSeconds.toFixed(1)} s with all up`;
    console.log(
      `| ${setup}: pacing error of the gateway's packets (arrival against first + n × 20 ms, ${l.packets.toLocaleString('en-US')} packets of ${l.callsWithAudio} calls) | p50 ${ms(l.pacingMs.p50, 2)}, p99 ${ms(l.pacingMs.p99, 2)}, max ${ms(l.pacingMs.max)}; ${l.laterThan10Ms} later than 10 ms, ${l.laterThan2Ms} later than 2 ms, ${l.lost} lost | p99 ≤ 2 ms, none later than 10 ms |`,
    );
    console.log(
      `| the same calls on one gateway process: its CPU in the window (1.00 = one core busy) | ${l.cpu.gateway.toFixed(2)} for ${l.calls} calls (${Math.round(l.calls / l.cpu.gateway)} calls per busy core; SIPp ${l.cpu.sipp.toFixed(2)}, measuring process ${l.cpu.bench.toFixed(2)}); SIPp: ${l.sipp.successful} calls successful, ${l.sipp.failed} failed | ≥ 200 calls per core |`,
    );
    const p = l.pacer;
    console.log(`| the same calls: the gateway's pacer, tick lateness against its deadlines | ${p ? `p50 ${ms(p.p50LatenessMs, 2)}, p99 ${ms(p.p99LatenessMs, 2)}, max ${ms(p.maxLatenessMs)}; ${p.skippedTicks} ticks skipped of ${p.ticks}` : 'not read'} | — |`);
    console.log(`| the same calls: event-loop delay of the measuring process (its timing error) | p99 ${ms(l.receiverLoopDelayMs.p99)}, max ${ms(l.receiverLoopDelayMs.max)} | — |`);
    console.log(
      `| memory per call, engines excluded ((RSS with ${l.calls} calls − RSS idle) / ${l.calls}) | ${l.rssMb.perCall.toFixed(2)} MB (idle ${l.rssMb.idle.toFixed(0)} MB, ${l.calls} calls ${l.rssMb.loaded.toFixed(0)} MB, after ${l.rssMb.after.toFixed(0)} MB) | ≤ 2 MB |`,
    );
  }
  if (bargeIn) {
    const b = bargeIn;
    console.log(
      `| barge-in: first speech packet sent → last prompt packet received (${b.raw.count} rounds${b.failed ? `, ${b.failed} not stopped` : ''}) | p50 ${ms(b.raw.p50)}, p95 ${ms(b.raw.p95)}, max ${ms(b.raw.max)} | — |`,
    );
    console.log(`| barge-in less the detector's 60 ms (three voiced frames) | p50 ${ms(b.lessDetection.p50)}, p95 ${ms(b.lessDetection.p95)}, max ${ms(b.lessDetection.max)} | ≤ 40 ms |`);
  }
  if (turn) {
    const t = turn;
    console.log(
      `| turn, eSpeak NG and pocketsphinx: last loud frame sent → first reply packet received (${t.total.count} turns${t.failed ? `, ${t.failed} without a reply` : ''}) | p50 ${ms(t.total.p50, 0)}, p95 ${ms(t.total.p95, 0)} | — |`,
    );
    console.log(`| the same turns beyond the recogniser's 500 ms hangover | p50 ${ms(t.beyondHangover.p50, 0)}, p95 ${ms(t.beyondHangover.p95, 0)} | p50 ≤ 300 ms |`);
    console.log(`| the same turns as the gateway logs them (its detector's last voiced frame → first reply packet sent) | p50 ${ms(t.gateway.p50, 0)}, p95 ${ms(t.gateway.p95, 0)} | — |`);
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const settings = callsBenchSettings();
  console.log(`Machine: ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; ${JSON.stringify(settings)}`);
  printCallsFigures(await benchCalls(settings));
}
