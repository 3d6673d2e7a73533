/** A scripted caller: SIP over UDP and an RTP stream that never stops (silence between speech). */
import type dgram from 'node:dgram';
import type { SipResponse } from '../../../src/telephony/sip/sip-message.js';
import { Peer, request, response, sipRequest } from '../../helpers/sip-peer.js';
import { dtmfEventFrames, type DtmfFrame } from '../../../src/telephony/rtp/dtmf.js';
import { PT_PCMU, rtpBytes } from '../../integration/sipp/make-pcap.js';

/** The telephone-event payload type the caller offers. */
const PT_TELEPHONE_EVENT = 101;
import { bind, closeSocket, FRAME_MS, FRAME_SAMPLES, MULAW_SILENCE } from './common.js';

/** A packet from the gateway: when it arrived (performance.now()) and its marker bit. */
export interface Arrival {
  readonly at: number;
  readonly marker: boolean;
}

/** One call from this process: dials, streams µ-law (silence until told to play) and records what comes back. */
export class Caller {
  readonly received: Arrival[] = [];
  private readonly queue: Array<{ frame: Uint8Array; sent: (at: number) => void; event?: DtmfFrame }> = [];
  /** The timestamp the packets of a key press share (RFC 4733: the event's start). */
  private eventTimestamp = 0;
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
      const event = next?.event;
      if (event && !event.repeatsTimestamp) this.eventTimestamp = this.timestamp;
      const packet = rtpBytes({
        atMs: 0,
        payloadType: event?.payloadType ?? PT_PCMU,
        marker: event ? event.marker : this.sentFrames === 0,
        sequence: this.sequence++,
        timestamp: event ? this.eventTimestamp : this.timestamp,
        ssrc: 0x0bec0de5,
        payload: next?.frame ?? silence,
      });
      this.media.send(packet, this.gatewayRtpPort, '127.0.0.1');
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

  /** Presses a key as RFC 4733 events (payload type 101, 100 ms) in the stream; resolves with when its first packet went out. */
  pressKey(key: string): Promise<number> {
    const frames = dtmfEventFrames(key, { payloadType: PT_TELEPHONE_EVENT });
    return new Promise((resolve) => {
      frames.forEach((event, index) => this.queue.push({ frame: event.payload, event, sent: (at) => (index === 0 ? resolve(at) : undefined) }));
    });
  }

  /** Waits for the gateway's BYE and answers it; false when none came in time. */
  async byeFromGateway(timeoutMs: number): Promise<boolean> {
    try {
      const bye = await this.sip.next(request('BYE'), 0, timeoutMs);
      this.sip.write(
        `SIP/2.0 200 OK\r\nVia: ${bye.headers.get('Via')}\r\nFrom: ${bye.headers.get('From')}\r\nTo: ${bye.headers.get('To')}\r\nCall-ID: ${this.callId}\r\nCSeq: ${bye.headers.get('CSeq')}\r\nContent-Length: 0\r\n\r\n`,
      );
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
    await closeSocket(this.media);
  }
}
