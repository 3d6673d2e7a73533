/**
 * Media stream: N SIPp calls at once (arriving at a few a second while the others talk), each
 * handed by its route's only step, `stream`, to a bot on loopback that speaks Twilio Media
 * Streams and sends every `media` message it gets straight back (and a `mark` every second).
 * The gateway turns the caller's RTP into `media` messages and paces the bot's audio back onto
 * the call, so each call's RTP from the gateway is the caller's own audio, echoed.
 *
 * Measured, as in the load run (load.ts): the pacing error of the gateway's packets on the wire
 * (tcpdump's kernel timestamps, each packet against its call's schedule by its RTP timestamp)
 * in the window with all calls up, and while the calls arrived; the ticks on which a call had no
 * echoed frame to send (the echo came too late for its slot: the RTP timestamp runs on, nothing
 * is sent); the gateway's CPU and RSS per call; the pacer's own tick lateness. Besides: the echo's
 * round trip on the wire (each caller frame carries its number in its first four bytes, which
 * G.711 passes unchanged through the gateway and the bot: the caller's packet seen on `lo` → the
 * same frame seen going back to the caller), and each mark's round trip at the bot (sent → back,
 * which holds the playout of the audio queued before it).
 */
import fs from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket, { WebSocketServer } from 'ws';
import { encodeMulaw } from '../../../src/audio/g711.js';
import type { PacingStats } from '../../../src/telephony/rtp/pacer.js';
import { removeSippRuns, startSipp, type SippResult, type SippRun } from '../../helpers/sipp.js';
import { pcmuPackets, rtpPcap } from '../../integration/sipp/make-pcap.js';
import type { CallerSpeech } from './caller-speech.js';
import { FRAME_MS, rank, sleep } from './common.js';
import { waitForCallsEnded, type Gateway } from './gateway-process.js';
import { MeasuringWindow } from './measuring-window.js';
import { pacingIn, type Pacing, type WirePacing } from './load.js';
import type { CapturedDatagram } from './pcap-reader.js';
import { CallReceivers, type CallTrace } from './rtp-receiver.js';
import { idleRssMb, rssMb, UsageSampler, type CpuFigures } from './usage.js';
import { startWireCapture, type WireCapture } from './wire-capture.js';

const LOAD_SCENARIO = fileURLToPath(new URL('../sipp/load-call.xml', import.meta.url));

/** A frame's number: four µ-law bytes 0xF0–0xFE (quiet, and neither 0x7F nor 0xFF, which G.711 does not keep apart), base 15. */
const TAG_BYTES = 4;
const TAG_BASE = 15;
const TAG_FIRST = 0xf0;
const RTP_HEADER = 12;
/**
 * An echo later than this is not the stream's round trip but a caller frame the gateway's jitter
 * buffer kept and played seconds after its time: after an underrun, frames that arrive late in a
 * burst stay in the buffer and come out at its next gap (seen when SIPp, short of CPU, sends a
 * burst); counted apart.
 */
const STALE_ECHO_MS = 1000;

/** Percentiles of a set of values (ms). */
export interface Spread {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly count: number;
}

/** What the media stream run measured. */
export interface MediaStreamFigures {
  readonly calls: number;
  /** New calls a second while they arrived. */
  readonly rate: number;
  readonly cores: number;
  readonly callsWithAudio: number;
  readonly windowSeconds: number;
  /** Pacing on the wire with all calls up. */
  readonly wire: WirePacing;
  /** Pacing on the wire while the calls arrived (first echoed packet of any call → all calls up). */
  readonly arriving: WirePacing;
  /** The same packets (all up) as the receiving sockets saw them. */
  readonly received: Pacing;
  /** Ticks in the window on which a call sent nothing (no echoed frame queued in time), from the RTP timestamps on the wire; null without a capture. */
  readonly silentTicks: number | null;
  /** Caller frame on the wire → the same frame on its way back to the caller, in the window, echoes later than {@link STALE_ECHO_MS} left out; null without a capture. */
  readonly roundTripMs: Spread | null;
  /** Echoes in the window later than {@link STALE_ECHO_MS}: how many, and the latest (ms). */
  readonly staleEchoes: { readonly count: number; readonly maxMs: number };
  /** Gateway packets in the window that carried no frame number the caller had sent. */
  readonly unmatched: number;
  /** Mark sent by the bot → back from the gateway, marks sent in the window; `lost`: sent in the window, never back. */
  readonly markMs: Spread & { readonly lost: number };
  readonly bot: { readonly connections: number; readonly mediaIn: number; readonly mediaOut: number };
  /** Bot streams the gateway logged as failed. */
  readonly botFailures: number;
  readonly sipp: { readonly successful: number; readonly failed: number; readonly exitCode: number | null };
  /** CPU in the window, in cores; `bench` is this process (the bot and the receivers). */
  readonly cpu: CpuFigures;
  readonly receiverLoopDelayMs: { readonly p99: number; readonly max: number };
  readonly pacer: PacingStats | null;
  readonly rssMb: { readonly idle: number; readonly loaded: number; readonly after: number; readonly perCall: number };
}

function spread(values: number[]): Spread {
  const sorted = Float64Array.from(values).sort();
  return { p50: rank(sorted, 50), p99: rank(sorted, 99), max: sorted.length ? sorted[sorted.length - 1]! : Number.NaN, count: sorted.length };
}

/** The route `stream`: its only step hands the call to the bot at `url`. */
export const mediaStreamDialplan = (url: string): string => `name: calls-bench-stream
routes:
  - number: "stream"
    engines: synthetic
    language: en
    voice: jonas
    steps:
      - stream: { url: "${url}" }
`;

/** The echo bot: what it got and sent, and its marks' round trips. */
export interface EchoBot {
  readonly url: string;
  readonly counts: { connections: number; mediaIn: number; mediaOut: number };
  /** Each mark: when the bot sent it and when it came back (NaN: not yet). */
  readonly marks: Array<{ readonly sent: number; back: number }>;
  close(): Promise<void>;
}

interface BotMessage {
  readonly event?: string;
  readonly streamSid?: string;
  readonly media?: { readonly payload?: string };
  readonly mark?: { readonly name?: string };
}

/** A Twilio Media Streams bot on loopback that sends each `media` payload straight back, and a mark every `markEveryMs`. */
export async function startEchoBot(markEveryMs = 1000): Promise<EchoBot> {
  const wss = new WebSocketServer({ host: '127.0.0.1', port: 0 });
  const counts = { connections: 0, mediaIn: 0, mediaOut: 0 };
  const marks: Array<{ readonly sent: number; back: number }> = [];
  wss.on('connection', (socket: WebSocket) => {
    counts.connections += 1;
    let streamSid = '';
    let timer: NodeJS.Timeout | null = null;
    const pending = new Map<string, { readonly sent: number; back: number }>();
    let named = 0;
    const stop = (): void => {
      if (timer) clearInterval(timer);
      timer = null;
    };
    socket.on('message', (data) => {
      const message = JSON.parse(String(data)) as BotMessage;
      switch (message.event) {
        case 'media':
          counts.mediaIn += 1;
          if (socket.readyState !== WebSocket.OPEN) return;
          socket.send(JSON.stringify({ event: 'media', streamSid, media: { payload: message.media?.payload ?? '' } }));
          counts.mediaOut += 1;
          return;
        case 'start':
          streamSid = message.streamSid ?? '';
          timer = setInterval(() => {
            if (socket.readyState !== WebSocket.OPEN) return;
            const name = `m${++named}`;
            const mark = { sent: performance.now(), back: Number.NaN };
            pending.set(name, mark);
            marks.push(mark);
            socket.send(JSON.stringify({ event: 'mark', streamSid, mark: { name } }));
          }, markEveryMs);
          return;
        case 'mark': {
          const mark = pending.get(message.mark?.name ?? '');
          if (mark) mark.back = performance.now();
          return;
        }
        case 'stop':
          return stop();
      }
    });
    socket.on('close', stop);
    socket.on('error', stop);
  });
  await new Promise((resolve) => wss.once('listening', resolve));
  return {
    url: `ws://127.0.0.1:${(wss.address() as AddressInfo).port}/echo`,
    counts,
    marks,
    async close() {
      for (const client of wss.clients) client.terminate();
      await new Promise((resolve) => wss.close(resolve));
    },
  };
}

/** Writes frame number `n` into the first bytes of `payload`. */
function tagFrame(payload: Uint8Array, n: number): void {
  for (let i = 0; i < TAG_BYTES; i++, n = Math.floor(n / TAG_BASE)) payload[i] = TAG_FIRST + (n % TAG_BASE);
}

/** The frame number in an RTP packet's payload (the UDP payload, cut by the capture), or −1. */
function frameTag(rtp: Uint8Array): number {
  if (rtp.length < RTP_HEADER + TAG_BYTES || (rtp[1]! & 0x7f) !== 0) return -1;
  let n = 0;
  for (let i = TAG_BYTES - 1; i >= 0; i--) {
    const digit = rtp[RTP_HEADER + i]! - TAG_FIRST;
    if (digit < 0 || digit >= TAG_BASE) return -1;
    n = n * TAG_BASE + digit;
  }
  return n;
}

/** SIPp's capture: the recording and a second of silence, again and again, for `seconds`, each frame numbered. */
function taggedCallerCapture(speech: CallerSpeech, seconds: number): { capture: Buffer; frames: number } {
  const cycle = new Int16Array(speech.pcm.length + 8000);
  cycle.set(speech.pcm);
  const total = new Int16Array(Math.ceil((seconds * 8000) / cycle.length) * cycle.length);
  for (let at = 0; at < total.length; at += cycle.length) total.set(cycle, at);
  const packets = pcmuPackets(encodeMulaw(total), { ssrc: 0x45434830 });
  if (packets.length > TAG_BASE ** TAG_BYTES) throw new Error(`a run of ${seconds} s has more frames than the tags can number`);
  packets.forEach((packet, n) => tagFrame(packet.payload, n));
  return { capture: rtpPcap(packets), frames: packets.length };
}

/** Ticks between the packets of `traces` in the window on which nothing was sent (RTP timestamps more than a frame apart). */
function silentTicksIn(traces: readonly CallTrace[], start: number, end: number): number {
  let silent = 0;
  for (const trace of traces) {
    for (let i = 1; i < trace.count; i++) {
      if (trace.at[i - 1]! < start || trace.at[i]! > end) continue;
      const frames = Math.round((trace.at[i]! - trace.offset[i]! - (trace.at[i - 1]! - trace.offset[i - 1]!)) / FRAME_MS);
      if (frames > 1) silent += frames - 1;
    }
  }
  return silent;
}

/** Matches the callers' numbered frames to the gateway's echoes of them, on the wire. */
class EchoMatcher {
  private readonly sentAt: Map<number, Float64Array>;
  /** Each echo: when it was seen going back, and its round trip. */
  readonly echoes: Array<{ readonly at: number; readonly ms: number }> = [];
  /** Times of gateway packets that carried no frame number sent before. */
  readonly unmatched: number[] = [];

  constructor(ports: readonly number[], frames: number) {
    this.sentAt = new Map(ports.map((port) => [port, new Float64Array(frames).fill(Number.NaN)]));
  }

  readonly add = (datagram: CapturedDatagram, at: number): void => {
    const fromCaller = this.sentAt.get(datagram.sourcePort);
    const tag = frameTag(datagram.payload);
    if (fromCaller) {
      if (tag >= 0 && tag < fromCaller.length && Number.isNaN(fromCaller[tag]!)) fromCaller[tag] = at;
      return;
    }
    const toCaller = this.sentAt.get(datagram.destinationPort);
    if (!toCaller) return;
    const sent = tag >= 0 && tag < toCaller.length ? toCaller[tag]! : Number.NaN;
    if (Number.isNaN(sent)) this.unmatched.push(at);
    else this.echoes.push({ at, ms: at - sent });
  };
}

function failedSipp(result: SippResult, what: string): void {
  if (result.exitCode !== 0) console.error(`${what}: SIPp ${result.successful} calls successful, ${result.failed} failed\n${result.report}`);
}

/** Wire pacing of `traces` in a window, or why there is none. */
function wirePacing(wireTraces: { traces: CallTrace[]; dropped: number } | null, unavailable: string, start: number, end: number): WirePacing {
  if (!wireTraces) return { unavailable };
  return {
    ...pacingIn(
      wireTraces.traces.filter((trace) => trace.count > 0),
      start,
      end,
    ),
    dropped: wireTraces.dropped,
  };
}

/**
 * `calls` SIPp calls at `rate` a second on the gateway's `stream` route (whose bot is `bot`),
 * held `seconds` after the last one is up; SIPp must be there.
 */
export async function benchMediaStream(
  gateway: Gateway,
  bot: EchoBot,
  speech: CallerSpeech,
  calls: number,
  rate: number,
  seconds: number,
): Promise<MediaStreamFigures> {
  const rampMs = (calls / rate) * 1000;
  const pauseMs = seconds * 1000 + rampMs + 3000;
  let botFailures = 0;
  gateway.server.child.stdout!.on('data', (chunk: Buffer) => {
    for (const line of chunk.toString('utf8').split('\n')) if (line.includes('"msg":"bot failed"')) botFailures += 1;
  });
  const captureDir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-calls-stream-'));
  const receivers = await CallReceivers.open(calls);
  let run: SippRun | null = null;
  let wireCapture: WireCapture | { unavailable: string } | null = null;
  const usage = new UsageSampler(gateway.pid);
  const sippCalls = (count: number, callRate: number, holdMs: number, file: string) =>
    startSipp({
      scenario: LOAD_SCENARIO,
      target: `127.0.0.1:${gateway.sipPort}`,
      service: 'stream',
      calls: count,
      rate: callRate,
      mediaPort: receivers.mediaPort,
      timeoutMs: holdMs + (count / callRate) * 1000 + 60_000,
      variables: { caller_pcap: file },
      extraArgs: ['-d', String(Math.round(holdMs)), '-l', String(count)],
    });
  try {
    receivers.capacity = Math.ceil(pauseMs / FRAME_MS) + 500;
    const file = path.join(captureDir, 'caller.pcap');
    const { capture, frames } = taggedCallerCapture(speech, pauseMs / 1000 + 5);
    await fs.writeFile(file, capture);

    // Warm-up: a few calls through the bot, so that the idle figure is of a process that has taken calls.
    const warmCalls = Math.min(10, calls);
    const warm = await (await sippCalls(warmCalls, Math.min(rate, 10), 3000, file)).result;
    failedSipp(warm, 'warm-up');
    await waitForCallsEnded(gateway, warmCalls);
    const idle = await idleRssMb(gateway.pid);
    receivers.reset();
    const endedBefore = gateway.log.callsEnded;
    const marksBefore = bot.marks.length;
    const botBefore = { ...bot.counts };

    usage.start(500);
    const measuring = new MeasuringWindow(gateway, receivers, usage, seconds);
    const matcher = new EchoMatcher(receivers.ports, frames);
    wireCapture = await startWireCapture(receivers.ports, receivers.capacity, { fromPorts: true, onDatagram: matcher.add });
    run = await sippCalls(calls, rate, pauseMs, file);
    usage.sippPid = run.pid;
    const result = await run.result;
    run = null;
    await measuring.ended();
    const capturing = wireCapture;
    wireCapture = null;
    const wireTraces = 'stop' in capturing ? await capturing.stop() : null;
    usage.stop();
    failedSipp(result, 'media stream');
    await waitForCallsEnded(gateway, endedBefore + calls);
    await sleep(2000);
    const after = await rssMb(gateway.pid);

    const withAudio = receivers.traces.filter((trace) => trace.count > 0);
    if (withAudio.length === 0) throw new Error(`no RTP reached the receivers (SIPp: ${result.successful} successful, ${result.failed} failed)`);
    const firstPacketAt = Math.min(...withAudio.map((trace) => trace.firstAt));
    const { start, end } = measuring.bounds(withAudio);
    const unavailable = 'unavailable' in capturing ? capturing.unavailable : 'no capture';
    const { cpu, rssMb: loaded } = usage.window(start, end);
    const inWindow = (at: number) => at >= start && at <= end;
    const marks = bot.marks.slice(marksBefore).filter((mark) => inWindow(mark.sent));
    const echoes = matcher.echoes.filter((echo) => inWindow(echo.at)).map((echo) => echo.ms);
    const stale = echoes.filter((echoMs) => echoMs > STALE_ECHO_MS);
    return {
      calls,
      rate,
      cores: os.availableParallelism(),
      callsWithAudio: withAudio.length,
      windowSeconds: (end - start) / 1000,
      wire: wirePacing(wireTraces, unavailable, start, end),
      arriving: wirePacing(wireTraces, unavailable, firstPacketAt, start),
      received: pacingIn(withAudio, start, end),
      silentTicks: wireTraces ? silentTicksIn(wireTraces.traces, start, end) : null,
      roundTripMs: wireTraces ? spread(echoes.filter((echoMs) => echoMs <= STALE_ECHO_MS)) : null,
      staleEchoes: { count: stale.length, maxMs: stale.length ? Math.max(...stale) : Number.NaN },
      unmatched: matcher.unmatched.filter(inWindow).length,
      markMs: {
        ...spread(marks.filter((mark) => !Number.isNaN(mark.back)).map((mark) => mark.back - mark.sent)),
        lost: marks.filter((mark) => Number.isNaN(mark.back)).length,
      },
      bot: {
        connections: bot.counts.connections - botBefore.connections,
        mediaIn: bot.counts.mediaIn - botBefore.mediaIn,
        mediaOut: bot.counts.mediaOut - botBefore.mediaOut,
      },
      botFailures,
      sipp: { successful: result.successful, failed: result.failed, exitCode: result.exitCode },
      cpu,
      receiverLoopDelayMs: measuring.receiverLoopDelayMs(),
      pacer: measuring.pacer,
      rssMb: { idle, loaded, after, perCall: (loaded - idle) / calls },
    };
  } finally {
    usage.stop();
    // After a failure: no SIPp and no tcpdump outlive the run.
    if (run) await run.stop(2000);
    if (wireCapture && 'stop' in wireCapture) await wireCapture.stop().catch(() => undefined);
    await receivers.close();
    await fs.rm(captureDir, { recursive: true, force: true });
    await removeSippRuns();
  }
}

const ms = (value: number, digits = 1) => `${value.toFixed(digits)} ms`;

/** The media stream's rows of the calls table. */
export function printMediaStreamRows(figures: MediaStreamFigures): void {
  const f = figures;
  const pacing = (p: Pacing): string =>
    `p50 ${ms(p.pacingMs.p50, 2)}, p99 ${ms(p.pacingMs.p99, 2)}, max ${ms(p.pacingMs.max)}; ${p.laterThan10Ms} later than 10 ms, ${p.laterThan2Ms} later than 2 ms, ${p.lost} lost`;
  const wire = (w: WirePacing): string => ('unavailable' in w ? `not measured: ${w.unavailable}` : pacing(w));
  const packets = (w: WirePacing): string =>
    'unavailable' in w ? '' : `; ${w.packets.toLocaleString('en-US')} packets${w.dropped ? `, ${w.dropped} dropped by the capture` : ''}`;
  const setup = `media stream: ${f.calls} calls (arriving ${f.rate} a second) each bridged by \`stream\` to a Twilio Media Streams bot on loopback that echoes every frame, ${f.windowSeconds.toFixed(1)} s with all up`;
  console.log(
    `| ${setup}: pacing error of the gateway's packets on the wire (kernel timestamps, each packet against its call's schedule${packets(f.wire)} of ${f.callsWithAudio} calls) | ${wire(f.wire)} | p99 ≤ 2 ms, none later than 10 ms |`,
  );
  console.log(`| the same while the calls arrived (first echoed packet → all calls up${packets(f.arriving)}) | ${wire(f.arriving)} | — |`);
  console.log(`| the same packets (all up) at the receiving sockets | ${pacing(f.received)} | — |`);
  console.log(
    `| the same window: ticks on which a call had no echoed frame to send | ${f.silentTicks === null ? 'not measured' : `${f.silentTicks} of ${('unavailable' in f.wire ? 0 : f.wire.packets + f.silentTicks).toLocaleString('en-US')}`} | — |`,
  );
  const rt = f.roundTripMs;
  const stale = f.staleEchoes.count
    ? `; ${f.staleEchoes.count} later than ${STALE_ECHO_MS / 1000} s (up to ${(f.staleEchoes.maxMs / 1000).toFixed(1)} s), left out`
    : '';
  console.log(
    `| echo round trip on the wire: caller's frame → the same frame back to the caller (jitter buffer, bot, queue and pacer slot; ${rt ? rt.count.toLocaleString('en-US') : 0} frames, ${f.unmatched} packets not matched${stale}) | ${rt ? `p50 ${ms(rt.p50)}, p99 ${ms(rt.p99)}, max ${ms(rt.max)}` : 'not measured'} | — |`,
  );
  console.log(
    `| mark round trip at the bot: mark sent → back once the audio before it has played (${f.markMs.count} marks${f.markMs.lost ? `, ${f.markMs.lost} not back` : ''}) | p50 ${ms(f.markMs.p50)}, p99 ${ms(f.markMs.p99)}, max ${ms(f.markMs.max)} | — |`,
  );
  console.log(
    `| the gateway's CPU in the window (1.00 = one core busy) | ${f.cpu.gateway.toFixed(2)} for ${f.calls} calls: ${((100 * f.cpu.gateway) / f.calls).toFixed(2)} % of a core per call (SIPp ${f.cpu.sipp.toFixed(2)}, bot and receivers ${f.cpu.bench.toFixed(2)}); SIPp: ${f.sipp.successful} calls successful, ${f.sipp.failed} failed; bot: ${f.bot.connections} streams, ${f.bot.mediaIn.toLocaleString('en-US')} frames in, ${f.bot.mediaOut.toLocaleString('en-US')} echoed, ${f.botFailures} failed | — |`,
  );
  const p = f.pacer;
  console.log(
    `| the gateway's pacer, tick lateness against its deadlines | ${p ? `p50 ${ms(p.p50LatenessMs, 2)}, p99 ${ms(p.p99LatenessMs, 2)}, max ${ms(p.maxLatenessMs)}; ${p.skippedTicks} ticks skipped of ${p.ticks}` : 'not read'} | — |`,
  );
  console.log(
    `| event-loop delay of the measuring process (bot and receivers) | p99 ${ms(f.receiverLoopDelayMs.p99)}, max ${ms(f.receiverLoopDelayMs.max)} | — |`,
  );
  console.log(
    `| memory per call ((RSS with ${f.calls} calls − RSS idle) / ${f.calls}) | ${f.rssMb.perCall.toFixed(2)} MB (idle ${f.rssMb.idle.toFixed(0)} MB, ${f.calls} calls ${f.rssMb.loaded.toFixed(0)} MB, after ${f.rssMb.after.toFixed(0)} MB) | — |`,
  );
}
