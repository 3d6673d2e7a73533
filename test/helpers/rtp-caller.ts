/**
 * The media side of a SIPp caller whose SDP names a socket of the test (`-key rtp_port`): it
 * records every RTP packet the gateway sends, with its arrival time, and once the gateway has
 * sent something (so its media address is known) plays RTP packets back to it in real time,
 * 20 ms apart — a capture's speech, keys as RFC 4733 events. {@link callWithMedia} runs such a
 * SIPp call.
 */
import dgram from 'node:dgram';
import { decodeMulaw } from '../../src/audio/g711.js';
import { parseRtp } from '../../src/telephony/rtp/rtp-packet.js';
import { PT_PCMU, rtpBytes, type RtpPacket } from '../integration/sipp/make-pcap.js';
import { runSipp, sippScenario, type SippResult } from './sipp.js';

/** A sample louder than this (about −40 dBFS) is sound: the gateway's silence is all zeros, speech peaks in the thousands. */
const VOICED_LEVEL = 300;

/** A packet the caller received. */
export interface ReceivedPacket {
  readonly atMs: number;
  readonly payloadType: number;
  readonly sequence: number;
  readonly timestamp: number;
  readonly payload: Uint8Array;
}

/** A caller's RTP socket on loopback. */
export class RtpCaller {
  readonly received: ReceivedPacket[] = [];
  private gateway: dgram.RemoteInfo | null = null;
  private readonly heard: Array<() => void> = [];
  private sender: NodeJS.Timeout | null = null;

  private constructor(private readonly socket: dgram.Socket) {
    socket.on('message', (data, from) => {
      const packet = parseRtp(data);
      if (!packet) return;
      this.gateway ??= from;
      this.received.push({
        atMs: performance.now(),
        payloadType: packet.payloadType,
        sequence: packet.sequenceNumber,
        timestamp: packet.timestamp,
        payload: Uint8Array.from(packet.payload),
      });
      for (const resolve of this.heard.splice(0)) resolve();
    });
  }

  static async open(): Promise<RtpCaller> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, '127.0.0.1', resolve));
    return new RtpCaller(socket);
  }

  get port(): number {
    return this.socket.address().port;
  }

  /** The PCMU packets received after `sinceMs` (performance.now()) that carry sound, not silence. */
  voiced(sinceMs = 0): ReceivedPacket[] {
    return this.received.filter(
      (packet) => packet.atMs > sinceMs && packet.payloadType === PT_PCMU && decodeMulaw(packet.payload).some((sample) => Math.abs(sample) > VOICED_LEVEL),
    );
  }

  /** Resolves once the gateway has sent a packet. */
  firstPacket(): Promise<void> {
    return this.gateway ? Promise.resolve() : new Promise((resolve) => this.heard.push(resolve));
  }

  /**
   * Sends `packets` one every 20 ms to where the gateway's media comes from, or to each of
   * `ports` on loopback when the test knows the gateway's few (the unused ones drop them);
   * resolves when the last went out.
   */
  play(packets: readonly RtpPacket[], ports?: readonly number[]): Promise<void> {
    const targets = ports?.map((port) => ({ port, address: '127.0.0.1' })) ?? (this.gateway ? [this.gateway] : []);
    if (targets.length === 0) throw new Error('the gateway has not sent anything yet');
    let next = 0;
    return new Promise((resolve) => {
      this.sender = setInterval(() => {
        const packet = packets[next++];
        if (!packet) {
          clearInterval(this.sender!);
          this.sender = null;
          return resolve();
        }
        for (const target of targets) this.socket.send(rtpBytes(packet), target.port, target.address);
      }, 20);
    });
  }

  close(): void {
    if (this.sender) clearInterval(this.sender);
    this.socket.close();
  }
}

/**
 * One SIPp call to `number` on the gateway at `target` (`host:port`) whose media is `caller`'s
 * socket: `scenario` is a file of test/integration/sipp/ that names the media port `-key
 * rtp_port` and offers PCMU and telephone-event (stream-call.xml and its kin); `holdMs` is its
 * `-key hold_ms`, for a scenario in which the caller hangs up.
 */
export function callWithMedia(target: string, number: string, caller: RtpCaller, scenario: string, holdMs = 8000): Promise<SippResult> {
  return runSipp({
    scenario: sippScenario(scenario),
    target,
    service: number,
    timeoutMs: 30_000,
    variables: { payloads: '0 101', rtp_port: String(caller.port), hold_ms: String(holdMs) },
  });
}
