/**
 * The far ends of the bridge benchmark, in a process of their own (forked by bridge.bench.ts)
 * so that the gateway's threads and this event loop do not wait on each other: one socket per
 * bridged leg, which sends 20 ms PCMU packets at real pace to its gateway port and receives what
 * the gateway forwards from the other leg; one socket per prompt call, which receives its
 * prompt; and pairs of sockets that send to each other directly, the same path without the
 * gateway. Each packet carries its send time (this process's clock) in its first 8 payload
 * bytes, which a same-codec bridge passes on untouched, so a packet's delay is its arrival time
 * here minus that.
 */
import type dgram from 'node:dgram';
import os from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { encodeMulaw } from '../../../src/audio/g711.js';
import { serializeRtp } from '../../../src/telephony/rtp/rtp-packet.js';
import { tonePcm } from '../../helpers/audio-fixtures.js';
import { bind, closeSocket, rank } from '../calls/common.js';

/** Parent → far ends. */
export type FarEndCommand =
  | { readonly op: 'bind'; readonly legs: number; readonly prompts: number; readonly directPairs: number }
  /** Sends on every leg (to `targets[n]`, the gateway port of leg n) and the direct pairs for `warmupSeconds + seconds`, and measures the last `seconds`. */
  | { readonly op: 'measure'; readonly targets: readonly number[] | null; readonly warmupSeconds: number; readonly seconds: number }
  | { readonly op: 'close' };

/** Median, 99th percentile and largest of a set of milliseconds, and how many. */
export interface Spread {
  readonly p50: number;
  readonly p99: number;
  readonly max: number;
  readonly count: number;
}

/** What one measuring window saw. */
export interface WindowFigures {
  /** Delay of the packets forwarded by the gateway, far end to far end. */
  readonly bridged: Spread;
  /** The same for the direct pairs. */
  readonly direct: Spread;
  /** Packets the legs sent in the window, and how many of them never reached the other leg. */
  readonly bridgedSent: number;
  readonly bridgedLost: number;
  /** Forwarded packets whose sequence number was not one more than the one before (by the gateway's numbering). */
  readonly sequenceBreaks: number;
  /** Streams (SSRCs) seen per receiving leg, at most (1: the gateway's one stream per call). */
  readonly streamsPerLeg: number;
  /** Prompt packets against their call's schedule (n × 20 ms by RTP timestamp, from the call's most punctual packet). */
  readonly promptPacing: Spread;
  /** This process's event-loop delay in the window (its own share of the delays). */
  readonly loopDelay: Spread;
  /** This process's CPU in the window, in cores. */
  readonly cpu: number;
}

/** Far ends → parent. */
export type FarEndEvent =
  | { readonly ev: 'bound'; readonly legPorts: number[]; readonly promptPorts: number[] }
  /** The measuring window starts now. */
  | { readonly ev: 'window' }
  | { readonly ev: 'figures'; readonly figures: WindowFigures };

const FRAME_MS = 20;
/** Where in the payload the send time goes. */
const STAMP_AT = 12;

/**
 * Whether a datagram is a 20 ms PCMU packet: the gateway's RTCP goes to the port above a far
 * end's, which may be another far end's socket here.
 */
const isPcmu = (data: Buffer): boolean => data.length === 172 && data[0]! >> 6 === 2 && (data[1]! & 0x7f) === 0;

function spread(values: Float64Array, count: number): Spread {
  const sorted = values.slice(0, count).sort();
  return { p50: rank(sorted, 50), p99: rank(sorted, 99), max: count ? sorted[count - 1]! : Number.NaN, count };
}

/** Delays in milliseconds, kept in one growing array. */
class Delays {
  values = new Float64Array(1 << 16);
  count = 0;

  add(ms: number): void {
    if (this.count === this.values.length) {
      const grown = new Float64Array(this.values.length * 2);
      grown.set(this.values);
      this.values = grown;
    }
    this.values[this.count++] = ms;
  }
}

/** One sending socket: its packets, numbered and stamped as they go. */
class Sender {
  private sequence = 0;
  private timestamp = 0;
  private readonly ssrc = Math.floor(Math.random() * 2 ** 32) >>> 0;
  private readonly datagram: Uint8Array;
  sent = 0;

  constructor(
    readonly socket: dgram.Socket,
    private readonly port: number,
    payload: Uint8Array,
  ) {
    this.datagram = serializeRtp({ payloadType: 0, sequenceNumber: 0, timestamp: 0, ssrc: this.ssrc, marker: false, payload });
  }

  send(): void {
    const view = new DataView(this.datagram.buffer, this.datagram.byteOffset, this.datagram.byteLength);
    this.sequence = (this.sequence + 1) & 0xffff;
    this.timestamp = (this.timestamp + 160) >>> 0;
    view.setUint16(2, this.sequence);
    view.setUint32(4, this.timestamp);
    view.setFloat64(STAMP_AT, performance.now());
    this.socket.send(this.datagram, this.port, '127.0.0.1');
    this.sent += 1;
  }
}

/** A receiving socket's view of the stream it gets: delays, sequence breaks, SSRCs. */
class Receiver {
  private lastSequence = -1;
  readonly ssrcs = new Set<number>();
  received = 0;
  breaks = 0;

  constructor(private readonly delays: Delays) {}

  /** Starts a new window's counts (the sequence is followed on). */
  reset(): void {
    this.ssrcs.clear();
    this.received = 0;
    this.breaks = 0;
  }

  take(data: Buffer, at: number, counting: boolean): void {
    if (!isPcmu(data)) return;
    const sequence = data.readUInt16BE(2);
    if (this.lastSequence >= 0 && ((sequence - this.lastSequence) & 0xffff) !== 1 && counting) this.breaks += 1;
    this.lastSequence = sequence;
    if (!counting) return;
    this.ssrcs.add(data.readUInt32BE(8));
    this.received += 1;
    this.delays.add(at - data.readDoubleBE(STAMP_AT));
  }
}

/** A prompt call's packets: arrival against the RTP timestamp's schedule. */
class PromptTrace {
  private firstTimestamp = -1;
  readonly offsets: number[] = [];

  take(data: Buffer, at: number): void {
    if (!isPcmu(data)) return;
    const timestamp = data.readUInt32BE(4);
    if (this.firstTimestamp < 0) this.firstTimestamp = timestamp;
    this.offsets.push(at - (((timestamp - this.firstTimestamp) >>> 0) / 160) * FRAME_MS);
  }
}

let legSockets: dgram.Socket[] = [];
let promptSockets: dgram.Socket[] = [];
let direct: dgram.Socket[] = [];
let counting = false;
const bridgedDelays = new Delays();
const directDelays = new Delays();
let legReceivers: Receiver[] = [];
let promptTraces: PromptTrace[] = [];

/** µ-law frames of a tone, one per sender (the first 8 bytes are overwritten by the send time). */
function payloads(count: number): Uint8Array[] {
  const tone = encodeMulaw(tonePcm(count * 0.02, 8000, 300));
  return Array.from({ length: count }, (_, n) => tone.slice(n * 160, (n + 1) * 160));
}

async function bindAll(legs: number, prompts: number, directPairs: number): Promise<FarEndEvent> {
  legSockets = await Promise.all(Array.from({ length: legs }, () => bind(0)));
  promptSockets = await Promise.all(Array.from({ length: prompts }, () => bind(0)));
  direct = await Promise.all(Array.from({ length: directPairs * 2 }, () => bind(0)));
  legReceivers = legSockets.map((socket) => {
    const receiver = new Receiver(bridgedDelays);
    socket.on('message', (data) => receiver.take(data, performance.now(), counting));
    return receiver;
  });
  promptTraces = promptSockets.map((socket) => {
    const trace = new PromptTrace();
    socket.on('message', (data) => {
      if (counting) trace.take(data, performance.now());
    });
    return trace;
  });
  for (const socket of direct) {
    const receiver = new Receiver(directDelays);
    socket.on('message', (data) => receiver.take(data, performance.now(), counting));
  }
  return { ev: 'bound', legPorts: legSockets.map((socket) => socket.address().port), promptPorts: promptSockets.map((socket) => socket.address().port) };
}

/**
 * Sends every sender's packets at 20 ms intervals, the senders spread evenly over the 20 ms,
 * each packet at its own deadline (a late wake-up sends what is due, it does not shift the rest).
 */
async function paced(senders: Sender[], seconds: number, onWindow: () => void, warmupSeconds: number): Promise<void> {
  const start = performance.now();
  const end = start + (warmupSeconds + seconds) * 1000;
  const next = senders.map((_, n) => start + (n * FRAME_MS) / Math.max(1, senders.length));
  let windowOpen = false;
  while (performance.now() < end) {
    const now = performance.now();
    if (!windowOpen && now >= start + warmupSeconds * 1000) {
      windowOpen = true;
      onWindow();
    }
    for (let n = 0; n < senders.length; n++) {
      if (next[n]! > now) continue;
      senders[n]!.send();
      next[n]! += FRAME_MS;
    }
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

async function measure(targets: readonly number[] | null, warmupSeconds: number, seconds: number): Promise<FarEndEvent> {
  const frames = payloads(50);
  const senders: Sender[] = [];
  if (targets) legSockets.forEach((socket, n) => senders.push(new Sender(socket, targets[n]!, frames[n % frames.length]!)));
  for (let n = 0; n < direct.length; n++) senders.push(new Sender(direct[n]!, direct[n ^ 1]!.address().port, frames[n % frames.length]!));
  const loop = monitorEventLoopDelay({ resolution: 1 });
  let cpuAtWindow = process.cpuUsage();
  let windowAt = 0;
  const sentAtWindow: number[] = [];
  await paced(
    senders,
    seconds,
    () => {
      counting = true;
      loop.enable();
      cpuAtWindow = process.cpuUsage();
      windowAt = performance.now();
      for (const sender of senders) sentAtWindow.push(sender.sent);
      process.send!({ ev: 'window' } satisfies FarEndEvent);
    },
    warmupSeconds,
  );
  const legsSent = targets ? legSockets.reduce((sum, _, n) => sum + senders[n]!.sent - sentAtWindow[n]!, 0) : 0;
  // The packets still on their way when sending stopped.
  await new Promise((resolve) => setTimeout(resolve, 100));
  counting = false;
  loop.disable();
  const cpu = process.cpuUsage(cpuAtWindow);
  const received = legReceivers.reduce((sum, receiver) => sum + receiver.received, 0);
  const offsets = promptTraces.flatMap((trace) => {
    const least = Math.min(...trace.offsets);
    return trace.offsets.map((offset) => offset - least);
  });
  return {
    ev: 'figures',
    figures: {
      bridged: spread(bridgedDelays.values, bridgedDelays.count),
      direct: spread(directDelays.values, directDelays.count),
      bridgedSent: legsSent,
      bridgedLost: Math.max(0, legsSent - received),
      sequenceBreaks: legReceivers.reduce((sum, receiver) => sum + receiver.breaks, 0),
      streamsPerLeg: Math.max(0, ...legReceivers.map((receiver) => receiver.ssrcs.size)),
      promptPacing: spread(Float64Array.from(offsets), offsets.length),
      loopDelay: { p50: loop.percentile(50) / 1e6, p99: loop.percentile(99) / 1e6, max: loop.max / 1e6, count: loop.count },
      cpu: (cpu.user + cpu.system) / 1000 / (performance.now() - windowAt),
    },
  };
}

/** Forgets what the last window recorded. */
function reset(): void {
  bridgedDelays.count = 0;
  directDelays.count = 0;
  for (const receiver of legReceivers) receiver.reset();
  for (const trace of promptTraces) trace.offsets.length = 0;
}

/**
 * Above ordinary processes (other work on a shared machine), below the media thread's −10: the
 * far ends' own stalls then come less from elsewhere. Without root or CAP_SYS_NICE it stays at 0.
 */
const FAR_ENDS_NICE = -5;
try {
  os.setPriority(FAR_ENDS_NICE);
} catch {
  // The ordinary priority: the direct pairs still show what that costs.
}

process.on('message', (command: FarEndCommand) => {
  void (async () => {
    if (command.op === 'bind') process.send!(await bindAll(command.legs, command.prompts, command.directPairs));
    else if (command.op === 'measure') {
      reset();
      process.send!(await measure(command.targets, command.warmupSeconds, command.seconds));
    } else {
      await Promise.all([...legSockets, ...promptSockets, ...direct].map(closeSocket));
      process.disconnect();
    }
  })();
});
