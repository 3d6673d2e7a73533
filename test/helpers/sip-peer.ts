/**
 * A scripted SIP peer for tests: one UDP, TCP or TLS socket, requests written as text, every
 * message it receives parsed and kept, and waits for the next that matches.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import type { SipMessage } from '../../src/telephony/sip/sip-message.js';
import { parseSipMessage } from '../../src/telephony/sip/sip-parser.js';
import { SipStreamFramer } from '../../src/telephony/sip/sip-stream-framer.js';

/** A scripted SIP peer on one socket: sends text, collects every parsed message. */
export class Peer {
  readonly received: SipMessage[] = [];
  private readonly waiters: Array<() => void> = [];
  port = 0;
  private constructor(private readonly send: (text: string) => void) {}

  /** `from`: the loopback address to send from (Linux answers on all of 127/8). */
  static async udp(target: number, from = '127.0.0.1'): Promise<Peer & { close(): void }> {
    const socket = dgram.createSocket('udp4');
    await new Promise<void>((resolve) => socket.bind(0, from, resolve));
    const peer = new Peer((text) => socket.send(Buffer.from(text), target, '127.0.0.1')) as Peer & { close(): void };
    peer.port = socket.address().port;
    socket.on('message', (data) => peer.accept(data));
    peer.close = () => socket.close();
    return peer;
  }

  static async tcp(target: number, from = '127.0.0.1'): Promise<Peer & { close(): void }> {
    const socket = net.connect({ port: target, host: '127.0.0.1', localAddress: from });
    await new Promise<void>((resolve) => socket.once('connect', resolve));
    return Peer.stream(socket);
  }

  /** Over TLS, trusting any certificate (tests use a self-signed one). */
  static async tls(target: number, from = '127.0.0.1'): Promise<Peer & { close(): void }> {
    const socket = tls.connect({ socket: net.connect({ port: target, host: '127.0.0.1', localAddress: from }), rejectUnauthorized: false });
    await new Promise<void>((resolve, reject) => {
      socket.once('secureConnect', resolve);
      socket.once('error', reject);
    });
    return Peer.stream(socket);
  }

  private static stream(socket: net.Socket): Peer & { close(): void } {
    const peer = new Peer((text) => socket.write(text)) as Peer & { close(): void };
    peer.port = socket.localPort!;
    const framer = new SipStreamFramer();
    socket.on('data', (chunk) => framer.push(chunk).messages.forEach((message) => peer.accept(message)));
    peer.close = () => socket.destroy();
    return peer;
  }

  private accept(data: Buffer): void {
    const result = parseSipMessage(data);
    if (result.ok) this.received.push(result.message);
    for (const wake of this.waiters.splice(0)) wake();
  }

  write(text: string): void {
    this.send(text);
  }

  /** Waits for the first message after index `from` that matches. */
  async next(match: (message: SipMessage) => boolean, from = 0, timeoutMs = 3000): Promise<SipMessage> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.received.slice(from).find(match);
      if (found) return found;
      if (Date.now() > deadline) throw new Error(`no matching message; got ${this.received.map(describeMessage).join(', ')}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  count(match: (message: SipMessage) => boolean): number {
    return this.received.filter(match).length;
  }
}

export const describeMessage = (message: SipMessage) => (message.kind === 'request' ? message.method : `${message.status} ${message.headers.get('CSeq')}`);
export const response = (status: number, method: string) => (message: SipMessage) =>
  message.kind === 'response' && message.status === status && message.headers.get('CSeq')!.endsWith(method);
export const request = (method: string) => (message: SipMessage) => message.kind === 'request' && message.method === method;

let branchCounter = 0;
export function sipRequest(
  peer: Peer,
  method: string,
  options: { callId: string; cseq: number; toTag?: string; branch?: string; body?: string; transport?: string; extra?: string[] },
): string {
  const body = options.body ?? '';
  return [
    `${method} sip:100@127.0.0.1 SIP/2.0`,
    `Via: SIP/2.0/${options.transport ?? 'UDP'} 127.0.0.1:${peer.port};branch=${options.branch ?? `z9hG4bK-t${++branchCounter}`};rport`,
    'Max-Forwards: 70',
    `From: <sip:caller@127.0.0.1:${peer.port}>;tag=caller-${options.callId}`,
    `To: <sip:100@127.0.0.1>${options.toTag ? `;tag=${options.toTag}` : ''}`,
    `Call-ID: ${options.callId}`,
    `CSeq: ${options.cseq} ${method}`,
    `Contact: <sip:caller@127.0.0.1:${peer.port}>`,
    ...(body ? ['Content-Type: application/sdp'] : []),
    ...(options.extra ?? []),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}
