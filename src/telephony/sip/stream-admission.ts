/**
 * Who may hold a SIP stream connection (TCP or TLS), decided at accept before a byte is read
 * or a TLS handshake is spent: sources on the allow-list only, and no more than a few
 * connections from any one address, so that one source cannot take the listener's every slot.
 */
import type net from 'node:net';

/** Why a connection was closed at accept. */
export type StreamRefusal = 'outside the allow-list' | 'over the per-source limit';

/** Counts the accepted connections of every source address. */
export class StreamAdmission {
  private readonly openBySource = new Map<string, number>();

  constructor(
    private readonly maxPerSource: number,
    private readonly allowSource?: (address: string) => boolean,
  ) {}

  /**
   * Admits a just-accepted connection, counting it until it closes, or says why not (the
   * caller then destroys it).
   */
  admit(socket: net.Socket, address: string): StreamRefusal | null {
    if (this.allowSource && !this.allowSource(address)) return 'outside the allow-list';
    const open = this.openBySource.get(address) ?? 0;
    if (open >= this.maxPerSource) return 'over the per-source limit';
    this.openBySource.set(address, open + 1);
    socket.once('close', () => {
      const left = (this.openBySource.get(address) ?? 1) - 1;
      if (left === 0) this.openBySource.delete(address);
      else this.openBySource.set(address, left);
    });
    return null;
  }

  /** Connections open now from `address`. */
  openFrom(address: string): number {
    return this.openBySource.get(address) ?? 0;
  }
}
