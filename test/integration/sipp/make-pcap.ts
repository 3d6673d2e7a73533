import { mkdir, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encodeMulaw } from '../../../src/audio/g711.js';
import { SpeechAudio } from '../../helpers/speech-audio.js';

/**
 * RTP captures for SIPp's `play_pcap_audio`: classic pcap files (Ethernet, IPv4, UDP, RTP).
 * SIPp keeps the RTP header and payload as they are, replaces the UDP ports (source: its media
 * port, destination: the port of the peer's SDP) and paces the packets by their capture times.
 *
 *   npx tsx test/integration/sipp/make-pcap.ts [folder]   writes speech.pcap and dtmf.pcap
 */

/** One RTP packet and when it leaves, in milliseconds from the first. */
export interface RtpPacket {
  readonly atMs: number;
  readonly payloadType: number;
  readonly marker: boolean;
  readonly sequence: number;
  readonly timestamp: number;
  readonly ssrc: number;
  readonly payload: Uint8Array;
}

/** Where the stream starts: sequence number, RTP timestamp and SSRC (fixed, so the files are reproducible). */
export interface RtpStreamStart {
  readonly sequence?: number;
  readonly timestamp?: number;
  readonly ssrc?: number;
}

const DEFAULT_START = { sequence: 4711, timestamp: 160_000, ssrc: 0x53524f48 };

/** 20 ms of G.711 at 8 kHz. */
export const SAMPLES_PER_PACKET = 160;
export const PACKET_MS = 20;
/** Payload types: PCMU (static) and telephone-event as our SDP offers it. */
export const PT_PCMU = 0;
export const PT_TELEPHONE_EVENT = 101;
/** µ-law silence (the code of a zero sample). */
const MULAW_SILENCE = 0xff;

/** The RFC 4733 event code of a DTMF key: 0–9, * = 10, # = 11, A–D = 12–15. */
export function dtmfEventCode(digit: string): number {
  const at = '0123456789*#ABCD'.indexOf(digit.toUpperCase());
  if (digit.length !== 1 || at < 0) throw new Error(`not a DTMF key: ${JSON.stringify(digit)}`);
  return at;
}

/** The RTP header (12 bytes, version 2, no CSRC or extension) followed by the payload. */
export function rtpBytes(packet: RtpPacket): Buffer {
  const bytes = Buffer.alloc(12 + packet.payload.length);
  bytes[0] = 0x80;
  bytes[1] = (packet.marker ? 0x80 : 0) | (packet.payloadType & 0x7f);
  bytes.writeUInt16BE(packet.sequence & 0xffff, 2);
  bytes.writeUInt32BE(packet.timestamp >>> 0, 4);
  bytes.writeUInt32BE(packet.ssrc >>> 0, 8);
  bytes.set(packet.payload, 12);
  return bytes;
}

/** G.711 µ-law bytes as 20 ms PCMU packets (the last one padded with silence); marker on the first. */
export function pcmuPackets(mulaw: Uint8Array, start: RtpStreamStart = {}): RtpPacket[] {
  const { sequence, timestamp, ssrc } = { ...DEFAULT_START, ...start };
  const packets: RtpPacket[] = [];
  for (let at = 0, n = 0; at < mulaw.length; at += SAMPLES_PER_PACKET, n++) {
    const payload = new Uint8Array(SAMPLES_PER_PACKET).fill(MULAW_SILENCE);
    payload.set(mulaw.subarray(at, at + SAMPLES_PER_PACKET));
    packets.push({ atMs: n * PACKET_MS, payloadType: PT_PCMU, marker: n === 0, sequence: sequence + n, timestamp: timestamp + n * SAMPLES_PER_PACKET, ssrc, payload });
  }
  return packets;
}

/**
 * DTMF keys as RFC 4733 telephone-events, the way a phone sends them: `leadMs` of PCMU silence,
 * then for each key an event of `toneMs` (an update every 20 ms, marker on the first, all with the
 * event's start timestamp, the growing duration in samples) whose final packet (E bit) goes out
 * three times, then `gapMs` of silence before the next key and after the last one. One SSRC; the
 * sequence numbers grow by one a packet (the repeated final packets included).
 */
export function dtmfPackets(
  digits: string,
  options: RtpStreamStart & { toneMs?: number; gapMs?: number; leadMs?: number; volume?: number; payloadType?: number } = {},
): RtpPacket[] {
  const { sequence, timestamp, ssrc } = { ...DEFAULT_START, ...options };
  const toneMs = options.toneMs ?? 160;
  const gapMs = options.gapMs ?? 200;
  const leadMs = options.leadMs ?? 100;
  const volume = options.volume ?? 10;
  const eventPt = options.payloadType ?? PT_TELEPHONE_EVENT;
  if (toneMs % PACKET_MS || gapMs % PACKET_MS || leadMs % PACKET_MS) throw new Error('durations must be whole packets (20 ms)');
  const packets: RtpPacket[] = [];
  let nowMs = 0;
  let marker = true;
  const push = (payloadType: number, rtpTimestamp: number, payload: Uint8Array, atMs = nowMs) => {
    packets.push({ atMs, payloadType, marker, sequence: sequence + packets.length, timestamp: rtpTimestamp >>> 0, ssrc, payload });
    marker = false;
  };
  const silence = (ms: number) => {
    for (let t = 0; t < ms; t += PACKET_MS) {
      push(PT_PCMU, timestamp + nowMs * 8, new Uint8Array(SAMPLES_PER_PACKET).fill(MULAW_SILENCE));
      nowMs += PACKET_MS;
    }
  };
  silence(leadMs);
  for (const digit of digits) {
    const code = dtmfEventCode(digit);
    const eventStart = timestamp + nowMs * 8;
    const updates = toneMs / PACKET_MS;
    marker = true;
    for (let k = 1; k <= updates; k++) {
      const end = k === updates;
      const payload = eventPayload(code, end, volume, k * SAMPLES_PER_PACKET);
      push(eventPt, eventStart, payload);
      nowMs += PACKET_MS;
      if (end) {
        // The two repetitions of the final packet, at the update interval.
        push(eventPt, eventStart, payload);
        nowMs += PACKET_MS;
        push(eventPt, eventStart, payload);
        nowMs += PACKET_MS;
      }
    }
    // The repetitions took two packet times of the gap.
    silence(Math.max(0, gapMs - 2 * PACKET_MS));
  }
  return packets;
}

function eventPayload(code: number, end: boolean, volume: number, durationSamples: number): Uint8Array {
  const payload = Buffer.alloc(4);
  payload[0] = code;
  payload[1] = (end ? 0x80 : 0) | (volume & 0x3f);
  payload.writeUInt16BE(durationSamples, 2);
  return payload;
}

/** Addresses written into the capture; SIPp ignores them (it sends from its media address). */
export interface PcapEndpoints {
  readonly srcIp?: string;
  readonly dstIp?: string;
  readonly srcPort?: number;
  readonly dstPort?: number;
}

/**
 * A classic pcap file (microsecond timestamps, link type Ethernet) with one UDP/IPv4 datagram per
 * RTP packet. Every packet must go to the same destination port: SIPp shifts each packet's ports
 * by its distance from the lowest destination port in the file.
 */
export function rtpPcap(packets: readonly RtpPacket[], endpoints: PcapEndpoints = {}): Buffer {
  const srcIp = ipv4Bytes(endpoints.srcIp ?? '192.0.2.1');
  const dstIp = ipv4Bytes(endpoints.dstIp ?? '192.0.2.2');
  const srcPort = endpoints.srcPort ?? 40_000;
  const dstPort = endpoints.dstPort ?? 40_002;
  const parts: Buffer[] = [];
  const header = Buffer.alloc(24);
  header.writeUInt32LE(0xa1b2c3d4, 0);
  header.writeUInt16LE(2, 4);
  header.writeUInt16LE(4, 6);
  header.writeInt32LE(0, 8); // thiszone
  header.writeUInt32LE(0, 12); // sigfigs
  header.writeUInt32LE(65_535, 16); // snaplen
  header.writeUInt32LE(1, 20); // LINKTYPE_ETHERNET
  parts.push(header);
  const baseSeconds = 1_700_000_000;
  packets.forEach((packet, index) => {
    const rtp = rtpBytes(packet);
    const udp = Buffer.alloc(8 + rtp.length);
    udp.writeUInt16BE(srcPort, 0);
    udp.writeUInt16BE(dstPort, 2);
    udp.writeUInt16BE(udp.length, 4);
    rtp.copy(udp, 8);
    udp.writeUInt16BE(udpChecksum(srcIp, dstIp, udp), 6);
    const ip = Buffer.alloc(20);
    ip[0] = 0x45;
    ip[1] = 0xb8; // DSCP EF, as phones mark voice
    ip.writeUInt16BE(20 + udp.length, 2);
    ip.writeUInt16BE((index + 1) & 0xffff, 4);
    ip.writeUInt16BE(0x4000, 6); // don't fragment
    ip[8] = 64;
    ip[9] = 17; // UDP
    ip.set(srcIp, 12);
    ip.set(dstIp, 16);
    ip.writeUInt16BE(onesComplement(sum16(ip)), 10);
    const ethernet = Buffer.from([0x02, 0, 0, 0, 0, 0x02, 0x02, 0, 0, 0, 0, 0x01, 0x08, 0x00]);
    const frameLength = ethernet.length + ip.length + udp.length;
    const record = Buffer.alloc(16);
    const micros = Math.round(packet.atMs * 1000);
    record.writeUInt32LE(baseSeconds + Math.floor(micros / 1_000_000), 0);
    record.writeUInt32LE(micros % 1_000_000, 4);
    record.writeUInt32LE(frameLength, 8); // captured = original: SIPp refuses truncated packets
    record.writeUInt32LE(frameLength, 12);
    parts.push(record, ethernet, ip, udp);
  });
  return Buffer.concat(parts);
}

/** The RTP packets of a file written by `rtpPcap` (Ethernet, IPv4, UDP), with their UDP ports; checks the framing on the way. */
export function readRtpPcap(file: Uint8Array): Array<RtpPacket & { srcPort: number; dstPort: number }> {
  const bytes = Buffer.from(file.buffer, file.byteOffset, file.byteLength);
  if (bytes.readUInt32LE(0) !== 0xa1b2c3d4 || bytes.readUInt32LE(20) !== 1) throw new Error('not a little-endian Ethernet pcap');
  const packets: Array<RtpPacket & { srcPort: number; dstPort: number }> = [];
  let firstMicros: number | null = null;
  for (let at = 24; at < bytes.length; ) {
    const micros = bytes.readUInt32LE(at) * 1_000_000 + bytes.readUInt32LE(at + 4);
    const captured = bytes.readUInt32LE(at + 8);
    if (captured !== bytes.readUInt32LE(at + 12)) throw new Error('truncated packet');
    const frame = bytes.subarray(at + 16, at + 16 + captured);
    at += 16 + captured;
    if (frame.readUInt16BE(12) !== 0x0800) throw new Error('not IPv4');
    const ip = frame.subarray(14);
    const headerLength = (ip[0]! & 0x0f) * 4;
    if (ip[9] !== 17) throw new Error('not UDP');
    if (onesComplement(sum16(ip.subarray(0, headerLength))) !== 0) throw new Error('bad IPv4 header checksum');
    if (ip.readUInt16BE(2) !== ip.length) throw new Error('IPv4 length does not match the frame');
    const udp = ip.subarray(headerLength);
    if (udp.readUInt16BE(4) !== udp.length) throw new Error('UDP length does not match the frame');
    const pseudo = Buffer.concat([ip.subarray(12, 16), ip.subarray(16, 20), Buffer.from([0, 17, udp.length >> 8, udp.length & 0xff])]);
    if (onesComplement(sum16(udp, sum16(pseudo))) !== 0) throw new Error('bad UDP checksum');
    const rtp = udp.subarray(8);
    if (rtp[0] !== 0x80) throw new Error('not RTP version 2 without CSRC, padding or extension');
    firstMicros ??= micros;
    packets.push({
      atMs: (micros - firstMicros) / 1000,
      payloadType: rtp[1]! & 0x7f,
      marker: (rtp[1]! & 0x80) !== 0,
      sequence: rtp.readUInt16BE(2),
      timestamp: rtp.readUInt32BE(4),
      ssrc: rtp.readUInt32BE(8),
      payload: rtp.subarray(12),
      srcPort: udp.readUInt16BE(0),
      dstPort: udp.readUInt16BE(2),
    });
  }
  return packets;
}

/** A DTMF event as received: its key, the timestamp and final duration (samples), how many packets carried it and how many had the E bit. */
export interface DtmfEvent {
  readonly digit: string;
  readonly timestamp: number;
  readonly durationSamples: number;
  readonly packets: number;
  readonly endPackets: number;
  readonly marker: boolean;
}

/** Groups RFC 4733 packets (of `payloadType`) into events by their RTP timestamp, in order. */
export function dtmfEvents(packets: ReadonlyArray<Pick<RtpPacket, 'payloadType' | 'marker' | 'timestamp' | 'payload'>>, payloadType = PT_TELEPHONE_EVENT): DtmfEvent[] {
  const events: Array<{ digit: string; timestamp: number; durationSamples: number; packets: number; endPackets: number; marker: boolean }> = [];
  for (const packet of packets) {
    if (packet.payloadType !== payloadType || packet.payload.length < 4) continue;
    const last = events[events.length - 1];
    const digit = '0123456789*#ABCD'[packet.payload[0]!] ?? `event ${packet.payload[0]}`;
    const end = (packet.payload[1]! & 0x80) !== 0;
    const duration = (packet.payload[2]! << 8) | packet.payload[3]!;
    if (last && last.timestamp === packet.timestamp) {
      last.packets++;
      if (end) last.endPackets++;
      last.durationSamples = Math.max(last.durationSamples, duration);
    } else {
      events.push({ digit, timestamp: packet.timestamp, durationSamples: duration, packets: 1, endPackets: end ? 1 : 0, marker: packet.marker });
    }
  }
  return events;
}

function ipv4Bytes(address: string): Buffer {
  const octets = address.split('.').map(Number);
  if (octets.length !== 4 || octets.some((o) => !Number.isInteger(o) || o < 0 || o > 255)) throw new Error(`not an IPv4 address: ${address}`);
  return Buffer.from(octets);
}

function sum16(bytes: Uint8Array, initial = 0): number {
  let sum = initial;
  for (let i = 0; i < bytes.length; i += 2) sum += (bytes[i]! << 8) | (bytes[i + 1] ?? 0);
  return sum;
}

function onesComplement(sum: number): number {
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >>> 16);
  return ~sum & 0xffff;
}

function udpChecksum(srcIp: Buffer, dstIp: Buffer, udp: Buffer): number {
  const pseudo = Buffer.concat([srcIp, dstIp, Buffer.from([0, 17]), Buffer.from([udp.length >> 8, udp.length & 0xff])]);
  const checksum = onesComplement(sum16(udp, sum16(pseudo)));
  return checksum === 0 ? 0xffff : checksum;
}

/** The sentence of the speech capture: about three seconds at eSpeak NG's normal speed. */
export const SPEECH_TEXT = 'Hello, this is a test call to the voice gateway.';

/** `text` spoken by eSpeak NG as 8 kHz µ-law, padded to whole 20 ms packets. */
export async function speechMulaw(text = SPEECH_TEXT, speech?: SpeechAudio): Promise<Uint8Array> {
  const own = speech ? null : await SpeechAudio.start();
  try {
    const pcm = await (speech ?? own!).speak(text, 8000, 'en');
    const padded = new Int16Array(Math.ceil(pcm.length / SAMPLES_PER_PACKET) * SAMPLES_PER_PACKET);
    padded.set(pcm);
    return encodeMulaw(padded);
  } finally {
    await own?.close();
  }
}

/** The files a SIPp scenario plays, and their lengths. */
export interface SippCaptures {
  readonly speechPcap: string;
  readonly speechMs: number;
  readonly speechPackets: number;
  readonly dtmfPcap: string;
  readonly dtmfDigits: string;
  readonly dtmfMs: number;
  readonly dtmfPackets: number;
}

/** Writes `speech.pcap` (eSpeak NG speaking `SPEECH_TEXT`, PCMU) and `dtmf.pcap` (keys `1`, `2`, `#` as RFC 4733 events) into `folder`. */
export async function writeSippCaptures(folder: string, options: { speech?: SpeechAudio; text?: string; digits?: string } = {}): Promise<SippCaptures> {
  await mkdir(folder, { recursive: true });
  const speech = pcmuPackets(await speechMulaw(options.text, options.speech));
  const dtmfDigits = options.digits ?? '12#';
  const dtmf = dtmfPackets(dtmfDigits);
  const speechPcap = join(folder, 'speech.pcap');
  const dtmfPcap = join(folder, 'dtmf.pcap');
  await writeFile(speechPcap, rtpPcap(speech));
  await writeFile(dtmfPcap, rtpPcap(dtmf));
  return {
    speechPcap,
    speechMs: speech.length * PACKET_MS,
    speechPackets: speech.length,
    dtmfPcap,
    dtmfDigits,
    dtmfMs: dtmf.length * PACKET_MS,
    dtmfPackets: dtmf.length,
  };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const folder = resolve(process.argv[2] ?? '.');
  const written = await writeSippCaptures(folder);
  process.stdout.write(`${JSON.stringify(written, null, 2)}\n`);
}
