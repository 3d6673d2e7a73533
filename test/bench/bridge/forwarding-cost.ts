/**
 * What forwarding one packet costs the media thread, without the sockets: the bridge's forwarder
 * (order check, re-stamping, conversion) and the packet written into the call's reused buffer,
 * per codec pair; time per packet (median of 7 trials) and heap bytes left per packet (heap
 * growth over a run too short for a collection, after a full one).
 */
import { runInNewContext } from 'node:vm';
import v8 from 'node:v8';
import opus from '@discordjs/opus';
import { encodeMulaw } from '../../../src/audio/g711.js';
import type { CallMedia } from '../../../src/telephony/media/media-protocol.js';
import { PacketBuffer } from '../../../src/telephony/media/packet-buffer.js';
import { RtpForwarder, type BridgeLeg } from '../../../src/telephony/media/rtp-forwarder.js';
import { parseRtp, serializeRtp, type RtpPacket } from '../../../src/telephony/rtp/rtp-packet.js';
import type { MediaCodec } from '../../../src/telephony/sdp/media-codec.js';
import { tonePcm } from '../../helpers/audio-fixtures.js';

const PCMU: MediaCodec = { name: 'PCMU', payloadType: 0, clockRate: 8000, channels: 1 };
const PCMA: MediaCodec = { name: 'PCMA', payloadType: 8, clockRate: 8000, channels: 1 };
const OPUS: MediaCodec = { name: 'opus', payloadType: 111, clockRate: 48000, channels: 2 };
const TRIALS = 7;

/** The cost of one codec pair. */
export interface ForwardingCost {
  readonly pair: string;
  readonly microsecondsPerPacket: number;
  readonly heapBytesPerPacket: number;
}

/** A call as the forwarder sees it, writing into a packet buffer as a session does; its socket never queues. */
function leg(codec: MediaCodec): BridgeLeg {
  const buffer = new PacketBuffer();
  const socket = { getSendQueueCount: () => 0 };
  const media: CallMedia = {
    codec,
    telephoneEvent: 101,
    address: '127.0.0.1',
    port: 4000,
    rtcp: { address: '127.0.0.1', port: 4001 },
    rtcpMux: false,
    direction: 'sendrecv',
    signallingAddress: '127.0.0.1',
  };
  let sequence = 0;
  return {
    media,
    streamTimestamp: 0,
    transmit(payload: Uint8Array, payloadType: number, timestamp: number, marker: boolean): void {
      sequence = (sequence + 1) & 0xffff;
      buffer.write(payloadType, sequence, timestamp, 0x1234, marker, payload);
      buffer.sent(socket);
    },
  };
}

/** Datagrams of 20 ms packets of a tone in `codec`, parsed as the session parses them (views into the datagram). */
function packets(codec: MediaCodec, count: number): RtpPacket[] {
  const step = codec.clockRate / 50;
  const encoder = new opus.OpusEncoder(48000, 1);
  const narrow = encodeMulaw(tonePcm(count * 0.02, 8000, 300));
  const wide = tonePcm(count * 0.02, 48000, 300);
  return Array.from({ length: count }, (_, n) => {
    let payload: Uint8Array;
    if (codec.name === 'opus') {
      const frame = wide.subarray(n * 960, (n + 1) * 960);
      payload = encoder.encode(Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength));
    } else payload = narrow.subarray(n * 160, (n + 1) * 160);
    return parseRtp(serializeRtp({ payloadType: codec.payloadType, sequenceNumber: n, timestamp: n * step, ssrc: 7, marker: false, payload }))!;
  });
}

/** `run` over fresh sequence numbers each round: the forwarder sees one unbroken stream. */
function renumbered(source: RtpPacket[], round: number): RtpPacket[] {
  const step = source[1]!.timestamp - source[0]!.timestamp;
  const offset = round * source.length;
  return source.map((packet, n) => ({ ...packet, sequenceNumber: (offset + n) & 0xffff, timestamp: ((offset + n) * step) >>> 0 }));
}

function measure(from: MediaCodec, to: MediaCodec, gc: () => void): ForwardingCost {
  const count = 2000;
  const forwarder = new RtpForwarder(leg(from), leg(to));
  const rounds = Array.from({ length: TRIALS + 2 }, (_, round) => renumbered(packets(from, count), round));
  // One loop for every round, warm before it is timed or its heap counted (a loop compiled while
  // it runs leaves its code on the heap).
  const run = (round: RtpPacket[]): void => {
    for (let n = 0; n < round.length; n++) forwarder.forward(round[n]!);
  };
  run(rounds[0]!);
  const trials: number[] = [];
  for (let trial = 1; trial <= TRIALS; trial++) {
    const start = process.hrtime.bigint();
    run(rounds[trial]!);
    trials.push(Number(process.hrtime.bigint() - start) / 1000 / count);
  }
  gc();
  // Reading the heap's size takes some heap itself: measured once with nothing between.
  const empty = process.memoryUsage().heapUsed;
  const before = process.memoryUsage().heapUsed;
  run(rounds[TRIALS + 1]!);
  const after = process.memoryUsage().heapUsed;
  const heapBytesPerPacket = Math.max(0, (after - before - (before - empty)) / count);
  if (forwarder.counters.forwarded !== count * (TRIALS + 2)) throw new Error(`${from.name} → ${to.name}: ${forwarder.counters.dropped} packets dropped`);
  return { pair: `${from.name} → ${to.name}`, microsecondsPerPacket: trials.sort((a, b) => a - b)[TRIALS >> 1]!, heapBytesPerPacket };
}

/** The cost of forwarding for each codec pair a bridge may join. */
export function benchForwardingCost(): ForwardingCost[] {
  v8.setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  return [
    [PCMU, PCMU],
    [PCMU, PCMA],
    [PCMU, OPUS],
    [OPUS, PCMU],
    [OPUS, OPUS],
  ].map(([from, to]) => measure(from!, to!, gc));
}
