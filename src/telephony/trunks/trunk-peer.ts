import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type { SipPeer, TransportName } from '../sip/sip-transport.js';
import type { HostPort } from './trunk-loader.js';

/**
 * Where requests to a trunk's host go: the address as written, or what the system resolver
 * makes of the name in the family our sockets are bound in (an IPv4 socket cannot reach ::1).
 * @throws the lookup's error when the name does not resolve
 */
export async function trunkPeer(target: HostPort, transport: TransportName, boundHost: string): Promise<SipPeer> {
  const family = net.isIPv4(boundHost) ? 4 : net.isIPv6(boundHost) && boundHost !== '::' ? 6 : 0;
  const address = net.isIP(target.host) ? target.host : (await lookup(target.host, { family })).address;
  return { transport, address, port: target.port };
}
