/**
 * Far ends for media-thread tests over real sockets: a UDP endpoint on a chosen address that
 * records the RTP it receives, µ-law silence sent from it, a PCMU call description, and a
 * prompt played to its end. Loopback has all of 127/8 (and ::1), so a caller and a stranger
 * can send from different addresses on one machine.
 */
import dgram from 'node:dgram';
import { encodeMulaw } from '../../src/audio/g711.js';
import type { MediaChannel } from '../../src/telephony/media/media-channel.js';
import type { CallMedia } from '../../src/telephony/media/media-protocol.js';
import { parseRtp, serializeRtp } from '../../src/telephony/rtp/rtp-packet.js';

/** A bound UDP socket and the RTP it has received. */
export interface RtpEndpoint {
  readonly socket: dgram.Socket;
  readonly port: number;
  /** Sequence numbers of the RTP packets received, in arrival order. */
  readonly received: number[];
}

/** Binds an endpoint to `address` (IPv4 or IPv6) on a free port. */
export async function rtpEndpoint(address: string): Promise<RtpEndpoint> {
  const socket = dgram.createSocket(address.includes(':') ? 'udp6' : 'udp4');
  await new Promise<void>((resolve) => socket.bind(0, address, resolve));
  const received: number[] = [];
  socket.on('message', (data) => {
    const packet = parseRtp(data);
    if (packet) received.push(packet.sequenceNumber);
  });
  return { socket, port: socket.address().port, received };
}

/** Sends `count` 20 ms µ-law packets of silence of stream `ssrc`, numbered from `first`, to `address`:`port`. */
export function sendSilence(from: RtpEndpoint, address: string, port: number, ssrc: number, count: number, first = 1): void {
  const silence = encodeMulaw(new Int16Array(160));
  for (let i = 0; i < count; i++) {
    from.socket.send(
      serializeRtp({ payloadType: 0, sequenceNumber: first + i, timestamp: (first + i) * 160, ssrc, marker: i === 0, payload: silence }),
      port,
      address,
    );
  }
}

/** A PCMU call whose SDP names `sdpAddress`:`port` and whose signalling came from `signallingAddress`. */
export function pcmuMedia(sdpAddress: string, port: number, signallingAddress: string): CallMedia {
  return {
    codec: { name: 'PCMU', payloadType: 0, clockRate: 8000, channels: 1 },
    telephoneEvent: 101,
    address: sdpAddress,
    port,
    rtcp: { address: sdpAddress, port: port + 1 },
    rtcpMux: false,
    direction: 'sendrecv',
    signallingAddress,
  };
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Plays a prompt of `seconds` (50 packets a second) and waits until it has played out and arrived. */
export async function playPrompt(channel: MediaChannel, seconds: number): Promise<void> {
  channel.startPrompt(false);
  channel.play(new Int16Array(seconds * 8000).fill(3000));
  channel.endPrompt();
  await channel.playedOut();
  await sleep(60);
}
