/**
 * The SIP transports of the embedded stack: one UDP socket, one TCP listener and, when a
 * certificate is configured, one TLS listener, all on the same address. Received bytes are
 * parsed (datagrams whole, streams cut at Content-Length) and handed up with where they came
 * from; responses to a stream request go back over its connection (RFC 3261 section 18.2.2).
 * Stream connections are admitted at accept (allow-list, per-source limit), before a byte is
 * read or a TLS handshake is spent, and must bring every message whole within a deadline.
 */
import dgram from 'node:dgram';
import net from 'node:net';
import tls from 'node:tls';
import type { Logger } from 'pino';
import { parseSipMessage, type ParseResult } from './sip-parser.js';
import { SipStreamFramer } from './sip-stream-framer.js';
import { StreamAdmission } from './stream-admission.js';

export type TransportName = 'UDP' | 'TCP' | 'TLS';

/** Where a message came from or goes to. */
export interface SipPeer {
  readonly transport: TransportName;
  readonly address: string;
  readonly port: number;
}

/** Listening options. */
export interface SipTransportOptions {
  readonly host: string;
  /** UDP and TCP port (0 picks a free one, the same for both when it can). */
  readonly port: number;
  /** TLS listener port and credentials; no TLS without them. */
  readonly tls?: { readonly port: number; readonly key: Buffer; readonly cert: Buffer };
  /** Most stream connections open at once (others are refused at accept). */
  readonly maxConnections?: number;
  /** Most stream connections open at once from one source address (others are closed at accept). */
  readonly maxConnectionsPerSource?: number;
  /** Whether a source address may connect at all; others are closed at accept, unread. */
  readonly allowSource?: (address: string) => boolean;
  /** A stream connection without any traffic for this long is closed. */
  readonly idleTimeoutMs?: number;
  /**
   * A message begun on a stream (and a new connection's first message) must be complete within
   * this, however its bytes trickle in; else the connection is closed.
   */
  readonly messageDeadlineMs?: number;
  readonly logger: Logger;
}

/** How often a free-port listen tries another port when TCP finds UDP's number taken. */
const FREE_PORT_ATTEMPTS = 5;

const peerKey = (peer: SipPeer): string => `${peer.transport}|${peer.address}|${peer.port}`;

/** Defaults of the stream limits (see {@link SipTransportOptions}). */
export const STREAM_DEFAULTS = {
  /** Node's listener cap; with the per-source limit, no one source can take them all. */
  maxConnections: 1024,
  /** A trunk or proxy reuses one or two connections; 16 leaves room for restarts and pools. */
  maxConnectionsPerSource: 16,
  /** A kept-alive connection between calls may be quiet for long; ten minutes of nothing ends it. */
  idleTimeoutMs: 10 * 60_000,
  /**
   * A SIP message is at most 64 KiB and a real peer writes it at once; ten seconds covers a
   * slow TLS handshake and a congested link, and is short enough that trickled bytes cannot
   * hoard connections.
   */
  messageDeadlineMs: 10_000,
} as const;

/** Listeners and connections of one SIP endpoint. */
export class SipTransport {
  private udp: dgram.Socket | null = null;
  private tcp: net.Server | null = null;
  /** The TLS port's listener: plain TCP, so that admission comes before the handshake. */
  private tlsServer: net.Server | null = null;
  private secureContext: tls.SecureContext | null = null;
  private readonly connections = new Map<string, net.Socket>();
  private readonly admission: StreamAdmission;
  private handler: (result: ParseResult, peer: SipPeer) => void = () => {};
  /** Bound address and ports. */
  udpPort = 0;
  tcpPort = 0;
  tlsPort: number | null = null;

  constructor(private readonly options: SipTransportOptions) {
    this.admission = new StreamAdmission(options.maxConnectionsPerSource ?? STREAM_DEFAULTS.maxConnectionsPerSource, options.allowSource);
  }

  /** Receives every parsed (or refused) message with its sender. */
  onMessage(handler: (result: ParseResult, peer: SipPeer) => void): void {
    this.handler = handler;
  }

  get host(): string {
    return this.options.host;
  }

  /**
   * Binds UDP and TCP (and TLS); rejects when an address is taken. With port 0, UDP takes a free
   * port and TCP the same number, which another program may hold over TCP alone: then both try
   * again on another free port (a few times), instead of failing on a clash nobody asked for.
   */
  async listen(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const udp = await this.bindUdp();
      const tcp = net.createServer((socket) => this.accept(socket, 'TCP'));
      try {
        this.tcpPort = await this.listenStream(tcp, udp.address().port);
      } catch (error) {
        udp.close();
        const clash = (error as NodeJS.ErrnoException).code === 'EADDRINUSE';
        if (this.options.port === 0 && clash && attempt < FREE_PORT_ATTEMPTS) continue;
        throw error;
      }
      // After binding, socket errors (ICMP unreachable on some systems) are logged, never thrown.
      udp.on('error', (error) => this.options.logger.warn({ err: error }, 'SIP UDP socket error'));
      this.udp = udp;
      this.udpPort = udp.address().port;
      this.tcp = tcp;
      break;
    }
    if (this.options.tls) {
      this.secureContext = tls.createSecureContext({ key: this.options.tls.key, cert: this.options.tls.cert });
      this.tlsServer = net.createServer((socket) => this.accept(socket, 'TLS'));
      this.tlsPort = await this.listenStream(this.tlsServer, this.options.tls.port);
    }
  }

  /** The UDP socket on the configured port (a free one for 0), reading SIP messages. */
  private async bindUdp(): Promise<dgram.Socket> {
    const family = net.isIPv6(this.options.host) ? 'udp6' : 'udp4';
    const udp = dgram.createSocket({ type: family, reuseAddr: false });
    udp.on('message', (data, remote) => this.handler(parseSipMessage(data), { transport: 'UDP', address: remote.address, port: remote.port }));
    await new Promise<void>((resolve, reject) => {
      udp.once('error', reject);
      udp.bind(this.options.port, this.options.host, () => {
        udp.off('error', reject);
        resolve();
      });
    });
    return udp;
  }

  private listenStream(server: net.Server, port: number): Promise<number> {
    server.maxConnections = this.options.maxConnections ?? STREAM_DEFAULTS.maxConnections;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.options.host, () => {
        server.off('error', reject);
        server.on('error', (error) => this.options.logger.warn({ err: error }, 'SIP stream listener error'));
        resolve((server.address() as net.AddressInfo).port);
      });
    });
  }

  /** Admits (or closes, unread) a new TCP connection; on the TLS port, then starts its handshake. */
  private accept(socket: net.Socket, transport: 'TCP' | 'TLS'): void {
    const address = socket.remoteAddress ?? '';
    const peer: SipPeer = { transport, address, port: socket.remotePort ?? 0 };
    const refusal = this.admission.admit(socket, address);
    if (refusal) {
      // Strangers are expected noise; a friend over its limit is worth a warning.
      const level = refusal === 'outside the allow-list' ? 'debug' : 'warn';
      this.options.logger[level]({ peer, open: this.admission.openFrom(address) }, `SIP stream connection ${refusal} closed`);
      socket.destroy();
      return;
    }
    if (transport === 'TCP') return this.track(peer, socket, true);
    const secure = new tls.TLSSocket(socket, { isServer: true, secureContext: this.secureContext! });
    this.track(peer, secure, true);
  }

  /**
   * Reads messages from a stream connection and remembers it for responses. An accepted
   * connection must bring its first message within the message deadline (a TLS handshake
   * included, as the clock starts at accept); on any connection a
   * message once begun must be complete within it. The idle timeout alone would restart with
   * every byte, so a peer trickling one byte at a time could hold the connection for ever.
   */
  private track(peer: SipPeer, socket: net.Socket, accepted = false): void {
    const key = peerKey(peer);
    this.connections.set(key, socket);
    const framer = new SipStreamFramer();
    const deadlineMs = this.options.messageDeadlineMs ?? STREAM_DEFAULTS.messageDeadlineMs;
    let deadline: NodeJS.Timeout | null = null;
    const armDeadline = (): void => {
      deadline ??= setTimeout(() => {
        this.options.logger.warn({ peer, pendingBytes: framer.pendingBytes }, 'SIP stream connection closed: a message did not arrive in time');
        socket.destroy();
      }, deadlineMs).unref();
    };
    const clearDeadline = (): void => {
      if (deadline) clearTimeout(deadline);
      deadline = null;
    };
    if (accepted) armDeadline();
    socket.setTimeout(this.options.idleTimeoutMs ?? STREAM_DEFAULTS.idleTimeoutMs, () => socket.destroy());
    socket.on('data', (chunk: Buffer) => {
      const { messages, fatal } = framer.push(chunk);
      if (messages.length > 0) clearDeadline();
      for (const message of messages) this.handler(parseSipMessage(message), peer);
      if (fatal) {
        this.options.logger.warn({ peer, reason: fatal }, 'SIP stream connection dropped');
        socket.destroy();
        return;
      }
      if (framer.pendingBytes > 0) armDeadline();
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      clearDeadline();
      if (this.connections.get(key) === socket) this.connections.delete(key);
    });
  }

  /**
   * Sends bytes to a peer. Over UDP one datagram; over a stream the connection it came on, or
   * a new one (TCP or TLS) when none is open. `onError` hears of a send that failed (a refused
   * connection, an unroutable address); a datagram lost on the way is not known.
   */
  send(data: Buffer, peer: SipPeer, onError?: (error: Error) => void): void {
    const failed = (error: Error | null | undefined): void => {
      if (error) onError?.(error);
    };
    if (peer.transport === 'UDP') {
      if (this.udp) this.udp.send(data, peer.port, peer.address, failed);
      else failed(new Error('the SIP UDP socket is closed'));
      return;
    }
    let socket = this.connections.get(peerKey(peer));
    if (!socket || socket.destroyed) {
      socket = peer.transport === 'TLS' ? tls.connect({ host: peer.address, port: peer.port }) : net.connect({ host: peer.address, port: peer.port });
      this.track(peer, socket);
    }
    socket.write(data, failed);
  }

  /** Closes listeners and connections. */
  async close(): Promise<void> {
    for (const socket of this.connections.values()) socket.destroy();
    this.connections.clear();
    await Promise.all([
      new Promise<void>((resolve) => (this.udp ? this.udp.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (this.tcp ? this.tcp.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (this.tlsServer ? this.tlsServer.close(() => resolve()) : resolve())),
    ]);
  }
}
