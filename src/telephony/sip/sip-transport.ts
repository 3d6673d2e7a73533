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
  /** How a TLS connection we open to the peer checks its certificate (unset: against the address, with Node's bundled CAs). */
  readonly tls?: TlsVerification;
}

/**
 * What the certificate of a TLS peer we connect to must be. Verification is never off: without
 * a CA of its own a peer's certificate must chain to one of Node's bundled public roots.
 */
export interface TlsVerification {
  /**
   * The host name the certificate must be issued for, also sent as SNI. A peer is reached at the
   * address its name resolved to, but a carrier's certificate names the host, not the address.
   */
  readonly serverName?: string;
  /** PEM certificates of the CAs the peer's certificate must chain to, in place of the public roots (a PBX's private CA). */
  readonly ca?: string;
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
  /**
   * The TLS connections we opened for a peer with a {@link TlsVerification}, by address and
   * what was verified. A peer asking for another name or CA gets a connection of its own: one
   * verified for another name may lead to another host behind the same address (SNI), and one
   * trusted through another CA proves nothing to this peer.
   */
  private readonly verified = new Map<string, net.Socket>();
  /** Connections of ours still being made (TLS: until its handshake is done), with the sends waiting on each. */
  private readonly connecting = new WeakMap<net.Socket, Array<(error: Error) => void>>();
  /** A short number for each CA text seen, for the keys of {@link verified}. */
  private readonly caIds = new Map<string, number>();
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
    let reported = false;
    const failed = (error: Error | null | undefined): void => {
      if (!error || reported) return;
      reported = true;
      onError?.(error);
    };
    if (peer.transport === 'UDP') {
      if (this.udp) this.udp.send(data, peer.port, peer.address, failed);
      else failed(new Error('the SIP UDP socket is closed'));
      return;
    }
    const verifiedKey = this.verifiedKey(peer);
    let socket = verifiedKey === null ? this.connections.get(peerKey(peer)) : this.verified.get(verifiedKey);
    if (!socket || socket.destroyed) {
      socket = peer.transport === 'TLS' ? this.connectTls(peer) : net.connect({ host: peer.address, port: peer.port });
      const where = { transport: peer.transport, address: peer.address, port: peer.port };
      // Also under its address: responses and requests that arrive on it name only that.
      this.track(where, socket);
      if (verifiedKey !== null) this.trackVerified(verifiedKey, socket);
      this.watchConnecting(socket, peer);
    }
    this.connecting.get(socket)?.push(failed);
    socket.write(data, failed);
  }

  /**
   * Tells the sends waiting on a new connection when it cannot be made, and logs why. A
   * refused TLS handshake ends the socket without failing the writes queued on it: without
   * this, a certificate we refuse would look like a peer that never answers (Timer F, 32 s).
   */
  private watchConnecting(socket: net.Socket, peer: SipPeer): void {
    const waiting: Array<(error: Error) => void> = [];
    this.connecting.set(socket, waiting);
    const failAll = (error: Error): void => {
      if (this.connecting.get(socket) !== waiting) return;
      this.connecting.delete(socket);
      for (const fail of waiting) fail(error);
    };
    socket.once(peer.transport === 'TLS' ? 'secureConnect' : 'connect', () => this.connecting.delete(socket));
    socket.once('error', (error: Error) => {
      const where = { transport: peer.transport, address: peer.address, port: peer.port };
      this.options.logger.warn({ peer: where, serverName: peer.tls?.serverName, err: error.message }, 'SIP connection to the peer failed');
      failAll(error);
    });
    socket.once('close', () => failAll(new Error('the connection closed before it was established')));
  }

  /** The key of {@link verified} for a TLS peer with a verification of its own; null for any other. */
  private verifiedKey(peer: SipPeer): string | null {
    if (peer.transport !== 'TLS' || peer.tls === undefined) return null;
    const ca = peer.tls.ca;
    let caId = 0;
    if (ca !== undefined) {
      caId = this.caIds.get(ca) ?? this.caIds.size + 1;
      this.caIds.set(ca, caId);
    }
    return `${peerKey(peer)}|${peer.tls.serverName ?? ''}|${caId}`;
  }

  private trackVerified(key: string, socket: net.Socket): void {
    this.verified.set(key, socket);
    socket.on('close', () => {
      if (this.verified.get(key) === socket) this.verified.delete(key);
    });
  }

  /** A TLS connection to the peer, its certificate checked as the peer's {@link TlsVerification} says. */
  private connectTls(peer: SipPeer): tls.TLSSocket {
    const serverName = peer.tls?.serverName;
    return tls.connect({
      host: peer.address,
      port: peer.port,
      // SNI takes host names only (RFC 6066 section 3); an address is checked against the certificate's IP entries.
      ...(serverName !== undefined && net.isIP(serverName) === 0 ? { servername: serverName } : {}),
      ...(peer.tls?.ca !== undefined ? { ca: peer.tls.ca } : {}),
    });
  }

  /** Closes listeners and connections. */
  async close(): Promise<void> {
    for (const socket of [...this.connections.values(), ...this.verified.values()]) socket.destroy();
    this.connections.clear();
    this.verified.clear();
    await Promise.all([
      new Promise<void>((resolve) => (this.udp ? this.udp.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (this.tcp ? this.tcp.close(() => resolve()) : resolve())),
      new Promise<void>((resolve) => (this.tlsServer ? this.tlsServer.close(() => resolve()) : resolve())),
    ]);
  }
}
