/**
 * The address lookup the media sockets send with. Node's default (`dns.lookup`) answers even an
 * IP literal one tick later (`process.nextTick`), so every `send` to an address waits until the
 * whole timer callback has run: a pacer slot's packets would leave only after every call of the
 * slot had pulled, decoded and analysed its incoming frame. Calls' media addresses are literals
 * (SDP `c=` lines, packet sources); answering those at once sends each packet inside its tick.
 */
import dns from 'node:dns';
import net from 'node:net';

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string, family: number) => void;

/**
 * `dgram`'s `lookup` option: IP literals at once, host names through `dns.lookup`.
 * dgram passes the family as a number (4 or 6); the typings name an options object, so both are read.
 */
export function literalAddressLookup(hostname: string, options: dns.LookupOneOptions | number, callback: LookupCallback): void {
  const family = net.isIP(hostname);
  if (family !== 0) return callback(null, hostname, family);
  dns.lookup(hostname, typeof options === 'number' ? { family: options } : options, callback);
}
