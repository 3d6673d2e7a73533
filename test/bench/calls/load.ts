/**
 * The load run: N concurrent SIPp calls on one gateway, every packet's arrival against its call's
 * schedule in the window with all calls up, the gateway's pacer and CPU, and its memory per call.
 */
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { PacingStats } from '../../../src/telephony/rtp/pacer.js';
import { removeSippRuns, startSipp, type SippResult } from '../../helpers/sipp.js';
import { callerCapture, type CallerSpeech } from './caller-speech.js';
import { FRAME_MS, rank, sleep } from './common.js';
import { waitForCallsEnded, type Gateway } from './gateway-process.js';
import { MeasuringWindow } from './measuring-window.js';
import { CallReceivers, windowErrors, type CallTrace } from './rtp-receiver.js';
import type { CallsBenchSettings } from './settings.js';
import { idleRssMb, rssMb, UsageSampler, type CpuFigures } from './usage.js';
import { startWireCapture } from './wire-capture.js';

const LOAD_SCENARIO = fileURLToPath(new URL('../sipp/load-call.xml', import.meta.url));

/** Pacing errors summed up: percentiles, and how many packets were later than 2 and 10 ms. */
export interface Pacing {
  readonly packets: number;
  readonly lost: number;
  readonly pacingMs: { readonly p50: number; readonly p99: number; readonly max: number };
  readonly laterThan2Ms: number;
  readonly laterThan10Ms: number;
}

/** The same pacing figures from the kernel's timestamps (tcpdump), or why there are none. */
export type WirePacing = (Pacing & { readonly dropped: number }) | { readonly unavailable: string };

/** What the load run measured. */
export interface LoadFigures {
  readonly calls: number;
  readonly cores: number;
  /** Calls whose RTP reached the receiver. */
  readonly callsWithAudio: number;
  /** Seconds with all calls up that were measured. */
  readonly windowSeconds: number;
  /** Pacing as the receiving sockets saw it (their event loop's delay included). */
  readonly received: Pacing;
  /** Pacing on the wire: the kernel's timestamps of the same packets. */
  readonly wire: WirePacing;
  readonly sipp: { readonly successful: number; readonly failed: number; readonly exitCode: number | null };
  /** CPU used in the window, in cores (1 = one core busy all the time). */
  readonly cpu: CpuFigures;
  /** This process's event-loop delay in the window (the receivers' timing error). */
  readonly receiverLoopDelayMs: { readonly p99: number; readonly max: number };
  /** The gateway's pacer in the window (tick lateness against its deadlines). */
  readonly pacer: PacingStats | null;
  readonly rssMb: { readonly idle: number; readonly loaded: number; readonly after: number; readonly perCall: number };
}

/** Pacing figures of the packets of `traces` in the window `start`–`end`. */
export function pacingIn(traces: readonly CallTrace[], start: number, end: number): Pacing {
  const { errors, packets, lost } = windowErrors(traces, start, end);
  let laterThan2Ms = 0;
  let laterThan10Ms = 0;
  for (const error of errors) {
    if (error > 2) laterThan2Ms++;
    if (error > 10) laterThan10Ms++;
  }
  return {
    packets,
    lost,
    pacingMs: { p50: rank(errors, 50), p99: rank(errors, 99), max: errors.length ? errors[errors.length - 1]! : Number.NaN },
    laterThan2Ms,
    laterThan10Ms,
  };
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

/** Runs the warm-up and the load on `gateway` (SIPp must be there) and measures. */
export async function loadRun(gateway: Gateway, speech: CallerSpeech, settings: CallsBenchSettings): Promise<LoadFigures> {
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
    const idle = await idleRssMb(gateway.pid);
    receivers.reset();
    const endedBefore = gateway.log.callsEnded;

    const usage = new UsageSampler(gateway.pid);
    usage.start(500);

    const measuring = new MeasuringWindow(gateway, receivers, usage, seconds);
    const wireCapture = await startWireCapture(receivers.ports, receivers.capacity);
    const run = await sippCalls(gateway, receivers, capture, calls, rate, pauseMs);
    usage.sippPid = run.pid;
    const result = await run.result;
    await measuring.ended();
    const wireTraces = 'stop' in wireCapture ? await wireCapture.stop() : null;
    usage.stop();
    failedSipp(result, 'load');
    await waitForCallsEnded(gateway, endedBefore + calls);
    await sleep(2000);
    const after = await rssMb(gateway.pid);

    const withAudio = receivers.traces.filter((trace) => trace.count > 0);
    if (withAudio.length === 0) throw new Error(`no RTP reached the receivers (SIPp: ${result.successful} successful, ${result.failed} failed)`);
    const { start, end } = measuring.bounds(withAudio);
    const received = pacingIn(withAudio, start, end);
    const wire: WirePacing = wireTraces
      ? {
          ...pacingIn(
            wireTraces.traces.filter((trace) => trace.count > 0),
            start,
            end,
          ),
          dropped: wireTraces.dropped,
        }
      : { unavailable: 'unavailable' in wireCapture ? wireCapture.unavailable : 'no capture' };
    const { cpu, rssMb: loaded } = usage.window(start, end);
    return {
      calls,
      cores: os.availableParallelism(),
      callsWithAudio: withAudio.length,
      windowSeconds: (end - start) / 1000,
      received,
      wire,
      sipp: { successful: result.successful, failed: result.failed, exitCode: result.exitCode },
      cpu,
      receiverLoopDelayMs: measuring.receiverLoopDelayMs(),
      pacer: measuring.pacer,
      rssMb: { idle, loaded, after, perCall: (loaded - idle) / calls },
    };
  } finally {
    await receivers.close();
    await fs.rm(captureDir, { recursive: true, force: true });
    await removeSippRuns();
  }
}
