/**
 * RTP ports for calls from the configured range: an even port for RTP and the odd one above it
 * for RTCP (RFC 3550 section 11), both bound before the call is answered. Ports are handed
 * out round-robin, so a port just freed is not reused at once (late packets of the old call
 * would land in the new one).
 */
import dgram from 'node:dgram';
import net from 'node:net';
import { literalAddressLookup } from './literal-address-lookup.js';

/** A bound RTP/RTCP socket pair; `release` closes both and returns the port. */
export interface RtpPorts {
  readonly port: number;
  readonly rtp: dgram.Socket;
  readonly rtcp: dgram.Socket;
  release(): void;
}

/** Thrown when every port of the range is taken. */
export class RtpPortsExhausted extends Error {
  constructor(range: { min: number; max: number }) {
    super(`no free RTP port pair in ${range.min}-${range.max}`);
    this.name = 'RtpPortsExhausted';
  }
}

function bind(port: number, host: string): Promise<dgram.Socket | null> {
  const socket = dgram.createSocket({ type: net.isIPv6(host) ? 'udp6' : 'udp4', lookup: literalAddressLookup });
  return new Promise((resolve) => {
    socket.once('error', () => {
      socket.close();
      resolve(null);
    });
    socket.bind(port, host, () => {
      socket.removeAllListeners('error');
      // Socket errors after binding (ICMP port unreachable from a peer that left) are not fatal.
      socket.on('error', () => undefined);
      resolve(socket);
    });
  });
}

/** The port range of one process. */
export class RtpPortPool {
  private next: number;
  private readonly inUse = new Set<number>();

  constructor(
    private readonly host: string,
    private readonly range: { readonly min: number; readonly max: number },
  ) {
    this.next = range.min;
  }

  /** Pairs in use. */
  get used(): number {
    return this.inUse.size;
  }

  /** Binds the next free pair. @throws RtpPortsExhausted when none is free */
  async allocate(): Promise<RtpPorts> {
    const pairs = Math.floor((this.range.max - this.range.min + 1) / 2);
    for (let tried = 0; tried < pairs; tried++) {
      const port = this.next;
      this.next = port + 2 > this.range.max - 1 ? this.range.min : port + 2;
      if (this.inUse.has(port)) continue;
      this.inUse.add(port);
      const rtp = await bind(port, this.host);
      const rtcp = rtp ? await bind(port + 1, this.host) : null;
      if (rtp && rtcp) {
        let released = false;
        return {
          port,
          rtp,
          rtcp,
          release: () => {
            if (released) return;
            released = true;
            rtp.close();
            rtcp.close();
            this.inUse.delete(port);
          },
        };
      }
      // Taken by another program: skip it this round.
      rtp?.close();
      this.inUse.delete(port);
    }
    throw new RtpPortsExhausted(this.range);
  }
}
