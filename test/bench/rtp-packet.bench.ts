/**
 * RTP packets on the hot path (50 a second each way per call): the hand-written codec in
 * src/telephony/rtp/rtp-packet.ts against rtp.js's RtpPacket, parsing and serialising a
 * 172-byte G.711 packet, nanoseconds per packet (median of 7 trials of 200,000).
 * Run: node --import tsx test/bench/rtp-packet.bench.ts (also in npm run bench)
 */
import { RtpPacket as ReferencePacket } from 'rtp.js/packets';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/rtp-packet.js';

const ROUNDS = 200_000;
const TRIALS = 7;

function nanosecondsPer(run: () => void): number {
  const trials: number[] = [];
  for (let trial = 0; trial < TRIALS; trial++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < ROUNDS; i++) run();
    trials.push(Number(process.hrtime.bigint() - start) / ROUNDS);
  }
  return trials.sort((a, b) => a - b)[Math.floor(TRIALS / 2)]!;
}

export interface RtpPacketFigures {
  parse: { ours: number; rtpJs: number };
  serialise: { ours: number; rtpJs: number };
}

export function benchRtpPacket(): RtpPacketFigures {
  const fields = { payloadType: 0, sequenceNumber: 4711, timestamp: 123_456, ssrc: 0x1234_5678, marker: false, payload: new Uint8Array(160).fill(0xff) };
  const datagram = serializeRtp(fields);
  let sink = 0;
  const parseOurs = nanosecondsPer(() => (sink += parseRtp(datagram)!.sequenceNumber));
  const parseRtpJs = nanosecondsPer(
    () => (sink += new ReferencePacket(new DataView(datagram.buffer, datagram.byteOffset, datagram.byteLength)).getSequenceNumber()),
  );
  const serialiseOurs = nanosecondsPer(() => (sink += serializeRtp(fields).length));
  const payloadView = new DataView(fields.payload.buffer);
  const serialiseRtpJs = nanosecondsPer(() => {
    const packet = new ReferencePacket();
    packet.setPayloadType(fields.payloadType);
    packet.setSequenceNumber(fields.sequenceNumber);
    packet.setTimestamp(fields.timestamp);
    packet.setSsrc(fields.ssrc);
    packet.setPayload(payloadView);
    sink += packet.getView().byteLength;
  });
  if (sink === 42) console.log(''); // keeps the work from being optimised away
  return { parse: { ours: parseOurs, rtpJs: parseRtpJs }, serialise: { ours: serialiseOurs, rtpJs: serialiseRtpJs } };
}

export function printRtpPacketFigures(f: RtpPacketFigures): void {
  console.log('\nRTP packet codec, 172-byte G.711 packet, ns per packet (median of 7 × 200,000):');
  console.log('| operation | ours | rtp.js |');
  console.log('|---|---|---|');
  console.log(`| parse | ${f.parse.ours.toFixed(0)} | ${f.parse.rtpJs.toFixed(0)} |`);
  console.log(`| serialise | ${f.serialise.ours.toFixed(0)} | ${f.serialise.rtpJs.toFixed(0)} |`);
}

if (import.meta.url === `file://${process.argv[1]}`) printRtpPacketFigures(benchRtpPacket());
