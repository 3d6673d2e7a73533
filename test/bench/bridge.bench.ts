/**
 * Bridged calls in the media thread (MediaChannel.bridge), over loopback:
 *
 * - Delay: BRIDGE_BENCH_CALLS bridged calls (two legs each) in one media thread, as the
 *   telephony service runs it; every leg's far end sends 20 ms PCMU packets at real pace (50 a
 *   second) to the gateway and receives the other leg's packets as the gateway forwards them.
 *   The far ends are a forked process of their own (bridge/far-ends.ts), so this process's event
 *   loop (the gateway's main thread) and the measuring one do not wait on each other; each packet
 *   carries its send time, so its delay is taken from one clock. Beside them, in the same process
 *   and at the same time, BRIDGE_BENCH_DIRECT pairs of sockets send to each other directly: the
 *   same path without the gateway, whose delay is the measuring process's own share.
 * - Pacing: BRIDGE_BENCH_PROMPT_CALLS other calls play prompts meanwhile. The media thread's
 *   pacer (tick lateness, MediaThread.pacingStats) and the prompt packets at their receiving
 *   sockets (each against its call's schedule) are measured first with the prompt calls alone,
 *   then with the bridges running.
 * - Cost: what forwarding one packet costs the media thread without the socket, per codec pair
 *   (bridge/forwarding-cost.ts), and the libopus settings for G.711 → Opus compared on speech
 *   (bridge/opus-settings.ts).
 *
 * Sizes (environment): BRIDGE_BENCH_CALLS (100), BRIDGE_BENCH_PROMPT_CALLS (100),
 * BRIDGE_BENCH_SECONDS (20 s measured, after 2 s of warm-up, for each of the two windows),
 * BRIDGE_BENCH_DIRECT (20 direct pairs).
 * Run: npm run bench (or: node --single-threaded-gc --import tsx test/bench/bridge.bench.ts)
 */
import { fork, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import type { PacingStats } from '../../src/telephony/rtp/pacer.js';
import { benchForwardingCost, type ForwardingCost } from './bridge/forwarding-cost.js';
import type { FarEndCommand, FarEndEvent, Spread, WindowFigures } from './bridge/far-ends.js';
import { GatewayCalls } from './bridge/gateway-calls.js';
import { benchOpusSettings, type OpusSetting } from './bridge/opus-settings.js';

/** The sizes of a run. */
export interface BridgeBenchSettings {
  readonly calls: number;
  readonly promptCalls: number;
  readonly seconds: number;
  readonly directPairs: number;
}

/** One measuring window: what the far ends saw, the pacer's figures, the gateway's CPU (in cores). */
export interface BridgeWindow {
  readonly far: WindowFigures;
  readonly pacer: PacingStats;
  readonly gatewayCpu: number;
}

export interface BridgeFigures {
  readonly settings: BridgeBenchSettings;
  /** The prompt calls alone. */
  readonly promptsOnly: BridgeWindow;
  /** The prompt calls with the bridges running. */
  readonly bridged: BridgeWindow;
  readonly cost: ForwardingCost[];
  readonly opus: OpusSetting[];
}

const WARMUP_SECONDS = 2;

/** A size from the environment: a number ≥ 0, or `fallback` when unset or empty. */
function size(name: string, fallback: number): number {
  const value = Number(process.env[name]?.trim() || fallback);
  if (!(value >= 0 && Number.isFinite(value))) throw new Error(`${name} must be a number ≥ 0, got ${JSON.stringify(process.env[name])}`);
  return value;
}

/** The sizes from the environment (the issue's by default). */
export function bridgeBenchSettings(): BridgeBenchSettings {
  return {
    calls: Math.round(size('BRIDGE_BENCH_CALLS', 100)),
    promptCalls: Math.round(size('BRIDGE_BENCH_PROMPT_CALLS', 100)),
    seconds: size('BRIDGE_BENCH_SECONDS', 20),
    directPairs: Math.round(size('BRIDGE_BENCH_DIRECT', 20)),
  };
}

/** The far-ends process, one command and its answer at a time. */
class FarEnds {
  private readonly child: ChildProcess;
  private onWindow: () => void = () => undefined;
  private waiting: ((event: FarEndEvent) => void) | null = null;

  constructor() {
    this.child = fork(new URL('./bridge/far-ends.ts', import.meta.url), [], { execArgv: ['--single-threaded-gc', '--import', 'tsx'] });
    this.child.on('message', (event: FarEndEvent) => {
      if (event.ev === 'window') return this.onWindow();
      const waiting = this.waiting;
      this.waiting = null;
      waiting?.(event);
    });
  }

  ask<E extends FarEndEvent['ev']>(command: FarEndCommand, answer: E, onWindow: () => void = () => undefined): Promise<Extract<FarEndEvent, { ev: E }>> {
    this.onWindow = onWindow;
    return new Promise((resolve, reject) => {
      this.child.once('exit', (code) => reject(new Error(`the far ends exited with code ${code}`)));
      this.waiting = (event) =>
        event.ev === answer ? resolve(event as Extract<FarEndEvent, { ev: E }>) : reject(new Error(`expected ${answer}, got ${event.ev}`));
      this.child.send(command);
    });
  }

  close(): Promise<void> {
    return new Promise((resolve) => {
      this.child.once('exit', () => resolve());
      this.child.send({ op: 'close' } satisfies FarEndCommand);
    });
  }
}

/** A window measured: the far ends' figures, and the gateway's pacer and CPU over the same time. */
async function window(far: FarEnds, gateway: GatewayCalls, targets: number[] | null, seconds: number): Promise<BridgeWindow> {
  let cpuAt = process.cpuUsage();
  let at = 0;
  let resetting: Promise<unknown> = Promise.resolve();
  const { figures } = await far.ask({ op: 'measure', targets, warmupSeconds: WARMUP_SECONDS, seconds }, 'figures', () => {
    resetting = gateway.thread.pacingStats(true);
    cpuAt = process.cpuUsage();
    at = performance.now();
  });
  await resetting;
  const cpu = process.cpuUsage(cpuAt);
  const elapsed = performance.now() - at;
  return { far: figures, pacer: await gateway.thread.pacingStats(), gatewayCpu: (cpu.user + cpu.system) / 1000 / elapsed };
}

export async function benchBridge(settings = bridgeBenchSettings()): Promise<BridgeFigures> {
  const cost = benchForwardingCost();
  const opus = await benchOpusSettings();
  const far = new FarEnds();
  let gateway: GatewayCalls | null = null;
  try {
    const { legPorts, promptPorts } = await far.ask(
      { op: 'bind', legs: settings.calls * 2, prompts: settings.promptCalls, directPairs: settings.directPairs },
      'bound',
    );
    gateway = await GatewayCalls.open(legPorts, promptPorts);
    gateway.startPrompts();
    const promptsOnly = await window(far, gateway, null, settings.seconds);
    gateway.bridge();
    const bridged = await window(far, gateway, gateway.legTargets, settings.seconds);
    return { settings, promptsOnly, bridged, cost, opus };
  } finally {
    await gateway?.close();
    await far.close();
  }
}

// A figure of an empty set is NaN, which crosses from the far ends' process as null.
const ms = (value: number | null, digits = 2): string => (value === null || Number.isNaN(value) ? '—' : `${value.toFixed(digits)} ms`);
const spread = (s: Spread): string => `p50 ${ms(s.p50)}, p99 ${ms(s.p99)}, max ${ms(s.max, 1)}`;
const pacer = (p: PacingStats): string =>
  `p50 ${ms(p.p50LatenessMs)}, p99 ${ms(p.p99LatenessMs)}, max ${ms(p.maxLatenessMs, 1)} (${p.ticks} wake-ups, ${p.skippedTicks} skipped)`;

/** Prints the figures as docs/performance.md shows them. */
export function printBridgeFigures(f: BridgeFigures): void {
  const { calls, promptCalls, seconds, directPairs } = f.settings;
  const b = f.bridged.far;
  const alone = f.promptsOnly;
  console.log(
    `\nBridged calls over loopback (one media thread; ${os.availableParallelism()} cores shared with the far ends' process), ${seconds} s windows after ${WARMUP_SECONDS} s of warm-up:`,
  );
  console.log('| measure | figure | target |');
  console.log('|---|---|---|');
  console.log(
    `| ${calls} bridged calls (${calls * 2} legs, 20 ms PCMU at 50 a second each way): delay far end → gateway → other far end (${b.bridged.count.toLocaleString('en-US')} packets; ${b.bridgedLost} of ${b.bridgedSent.toLocaleString('en-US')} lost, ${b.sequenceBreaks} sequence breaks, at most ${b.streamsPerLeg} SSRC per leg) | ${spread(b.bridged)} | — |`,
  );
  console.log(`| the same path without the gateway (${directPairs} socket pairs in the far ends' process, meanwhile) | ${spread(b.direct)} | — |`);
  console.log(
    `| added by the gateway (bridged − direct, percentile by percentile) | p50 ${ms(b.bridged.p50 - b.direct.p50)}, p99 ${ms(b.bridged.p99 - b.direct.p99)} | p99 ≤ 2 ms |`,
  );
  console.log(`| ${promptCalls} prompt calls meanwhile: the pacer's tick lateness (alone: ${pacer(alone.pacer)}) | ${pacer(f.bridged.pacer)} | — |`);
  console.log(
    `| the prompt packets at their receiving sockets against their schedule (alone: ${spread(alone.far.promptPacing)}) | ${spread(b.promptPacing)} | — |`,
  );
  console.log(
    `| CPU of the gateway process (main and media threads; alone: ${alone.gatewayCpu.toFixed(2)}) and of the far ends' process (its event-loop delay p99 ${ms(b.loopDelay.p99)}, max ${ms(b.loopDelay.max, 1)}), in cores | ${f.bridged.gatewayCpu.toFixed(2)} and ${b.cpu.toFixed(2)} | — |`,
  );
  console.log('\nForwarding one packet in the media thread, without the socket (median of 7 × 2,000 packets):');
  console.log('| codec pair | µs per packet | heap bytes left per packet |');
  console.log('|---|---|---|');
  for (const c of f.cost) console.log(`| ${c.pair} | ${c.microsecondsPerPacket.toFixed(2)} | ${Math.round(c.heapBytesPerPacket)} |`);
  console.log('\nG.711 → Opus at 8 kHz, complexity 4, on speech (goforward.raw): waveform kept and cost per 20 ms frame (encode and decode):');
  console.log('| mode | bitrate | SNR | µs per frame |');
  console.log('|---|---|---|---|');
  for (const o of f.opus)
    console.log(
      `| ${o.mode} | ${o.bitrate === null ? 'default' : `${o.bitrate / 1000} kbps`} (${o.kbps.toFixed(1)} kbps) | ${o.snrDb.toFixed(1)} dB | ${o.microsecondsPerFrame.toFixed(0)} |`,
    );
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const settings = bridgeBenchSettings();
  console.log(`Machine: ${os.availableParallelism()} cores (${os.cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}; ${JSON.stringify(settings)}`);
  printBridgeFigures(await benchBridge(settings));
}
