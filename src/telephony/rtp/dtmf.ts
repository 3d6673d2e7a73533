/**
 * DTMF as RFC 4733 telephone events: the packets that send a key press, and a receiver that
 * turns the stream of event packets (repeats, three end packets, losses) into one digit per press.
 */
import type { PacedFrame } from './paced-stream.js';
import type { RtpPacket } from './rtp-packet.js';

/** The sixteen keys in event-code order (RFC 4733 3.2: 0–9, `*` = 10, `#` = 11, A–D = 12–15). */
export const DTMF_KEYS = '0123456789*#ABCD';

/** One telephone-event payload (RFC 4733 2.3). */
export interface DtmfEventPayload {
  /** 0–255; 0–15 are the DTMF keys. */
  readonly event: number;
  /** E bit: the event has ended. */
  readonly end: boolean;
  /** Power level in −dBm0 (0–63). */
  readonly volume: number;
  /** Duration so far in timestamp units. */
  readonly duration: number;
}

/** One packet of a key press, ready for {@link PacedStream.enqueue}: every field set. */
export interface DtmfFrame extends PacedFrame {
  readonly payloadType: number;
  readonly marker: boolean;
  readonly repeatsTimestamp: boolean;
}

/** How {@link dtmfEventFrames} shapes an event. */
export interface DtmfSendOptions {
  /** The negotiated telephone-event payload type (often 101). */
  readonly payloadType: number;
  /** How long the key is held (default 100 ms; RFC 4733 2.5.1.3 segments longer events, so at most 8 s here). */
  readonly durationMs?: number;
  /** Power level in −dBm0 (default 10). */
  readonly volume?: number;
  /** Timestamp units per packet interval (default 160: 20 ms at 8000 Hz). */
  readonly samplesPerFrame?: number;
  /** Packet interval, the pacer's tick (default 20 ms). */
  readonly frameMs?: number;
}

/** The event code of a key (case-insensitive), e.g. `#` → 11; throws RangeError for anything else. */
export function dtmfEventCode(key: string): number {
  const code = key.length === 1 ? DTMF_KEYS.indexOf(key.toUpperCase()) : -1;
  if (code < 0) throw new RangeError(`not a DTMF key: ${JSON.stringify(key)}`);
  return code;
}

/** Writes a telephone-event payload. */
export function serializeDtmfEvent(event: DtmfEventPayload): Uint8Array {
  const duration = Math.min(0xffff, Math.max(0, Math.round(event.duration)));
  return Uint8Array.of(event.event & 0xff, (event.end ? 0x80 : 0) | (event.volume & 0x3f), duration >> 8, duration & 0xff);
}

/** Reads a telephone-event payload (the first event if several are packed), or `null` if it is shorter than 4 bytes. */
export function parseDtmfEvent(payload: Uint8Array): DtmfEventPayload | null {
  if (payload.length < 4) return null;
  return { event: payload[0]!, end: (payload[1]! & 0x80) !== 0, volume: payload[1]! & 0x3f, duration: (payload[2]! << 8) | payload[3]! };
}

/**
 * The frames that send one key press through a {@link PacedStream}, one per tick: progress
 * packets with growing durations, then the final duration with the end bit three times (RFC
 * 4733 2.5.1.4). The first carries the marker bit, the rest repeat its timestamp.
 */
export function dtmfEventFrames(key: string, options: DtmfSendOptions): DtmfFrame[] {
  const event = dtmfEventCode(key);
  const samplesPerFrame = options.samplesPerFrame ?? 160;
  const frameMs = options.frameMs ?? 20;
  const volume = options.volume ?? 10;
  const durationMs = Math.min(8000, Math.max(frameMs, options.durationMs ?? 100));
  const packets = Math.ceil(durationMs / frameMs);
  const total = Math.min(0xffff, packets * samplesPerFrame);
  const payloads: Uint8Array[] = [];
  for (let i = 1; i < packets; i++) payloads.push(serializeDtmfEvent({ event, end: false, volume, duration: i * samplesPerFrame }));
  const end = serializeDtmfEvent({ event, end: true, volume, duration: total });
  payloads.push(end, end, end);
  return payloads.map((payload, i) => ({ payload, payloadType: options.payloadType, marker: i === 0, repeatsTimestamp: i > 0 }));
}

/**
 * Turns incoming telephone-event packets into one key per press. A press is known by its
 * timestamp, so repeats and end packets say nothing new, a press whose first packets were lost
 * is still reported from whichever packet arrives, and stragglers of an older press are ignored.
 */
export class DtmfReceiver {
  private ssrc: number | null = null;
  private timestamp = 0;
  private event = -1;
  private ended = true;
  private duration = 0;

  /** Takes one packet of the telephone-event payload type; returns the key when it starts a new press. */
  push(packet: RtpPacket): string | null {
    const payload = parseDtmfEvent(packet.payload);
    if (!payload || payload.event >= DTMF_KEYS.length) return null;
    if (packet.ssrc !== this.ssrc) this.reset(packet.ssrc);
    if (this.event >= 0) {
      // Signed distance modulo 2^32: a timestamp wrap between two presses is still "later".
      const since = (packet.timestamp - this.timestamp) | 0;
      if (since < 0) return null;
      if (since === 0) {
        this.ended ||= payload.end;
        this.duration = Math.max(this.duration, payload.duration);
        return null;
      }
      // A key held beyond 65535 units goes on in a new segment: new timestamp, same key, no marker.
      const continues = !this.ended && !packet.marker && payload.event === this.event && since <= this.duration;
      this.remember(packet.timestamp, payload);
      if (continues) return null;
    } else this.remember(packet.timestamp, payload);
    return DTMF_KEYS[payload.event]!;
  }

  /** Forgets the presses seen so far (a new call or source). */
  reset(ssrc: number | null = null): void {
    this.ssrc = ssrc;
    this.event = -1;
    this.ended = true;
    this.duration = 0;
  }

  private remember(timestamp: number, payload: DtmfEventPayload): void {
    this.timestamp = timestamp;
    this.event = payload.event;
    this.ended = payload.end;
    this.duration = payload.duration;
  }
}
