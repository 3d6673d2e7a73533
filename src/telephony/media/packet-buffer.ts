/**
 * The buffer one RTP stream writes its packets into, kept for the stream's life: a call sends
 * 50 packets a second from its prompts, and a bridged call as many again from the other leg,
 * and a fresh buffer each would be more work for the media thread's collector, whose pauses
 * delay every call's packets (docs/performance.md, "Phone calls").
 *
 * Reuse is safe because a UDP socket's `send` normally writes the datagram before it returns;
 * when the kernel's buffer is full, libuv queues it and keeps reading our bytes later. The
 * socket's send queue says so, and then the next packet goes into a new buffer.
 */
import { RTP_HEADER_BYTES, writeRtpHeader } from '../rtp/rtp-packet.js';

/** Room for any packet a call sends (an Opus packet is at most 1275 bytes). */
const INITIAL_BYTES = 1500;

/** What the buffer asks of the socket a packet went out on. */
export interface SendQueue {
  /** Datagrams the socket has queued and not yet written (`dgram.Socket.getSendQueueCount`). */
  getSendQueueCount(): number;
}

/** One reused packet buffer. */
export class PacketBuffer {
  private buffer = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  /** The last packet's bytes: G.711 packets all have one length, so the view is made once. */
  private view = this.buffer.subarray(0, 0);

  /**
   * Writes a packet and returns its bytes, valid until the next `write`. Pass them to the
   * socket's `send`, then call {@link sent}.
   */
  write(payloadType: number, sequenceNumber: number, timestamp: number, ssrc: number, marker: boolean, payload: Uint8Array): Buffer {
    const length = RTP_HEADER_BYTES + payload.length;
    if (length > this.buffer.length) this.replace(length);
    writeRtpHeader(this.buffer, payloadType, sequenceNumber, timestamp, ssrc, marker);
    this.buffer.set(payload, RTP_HEADER_BYTES);
    if (this.view.length !== length) this.view = this.buffer.subarray(0, length);
    return this.view;
  }

  /** The packet went to `socket`: if the socket had to queue it, its bytes stay with the socket and the next packet gets a new buffer. */
  sent(socket: SendQueue): void {
    if (socket.getSendQueueCount() > 0) this.replace(this.buffer.length);
  }

  private replace(length: number): void {
    this.buffer = Buffer.allocUnsafeSlow(Math.max(INITIAL_BYTES, length));
    this.view = this.buffer.subarray(0, 0);
  }
}
