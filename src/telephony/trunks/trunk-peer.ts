import { lookup } from 'node:dns/promises';
import net from 'node:net';
import { withServerName, withTlsCa } from '../sip/sip-target.js';
import type { SipPeer } from '../sip/sip-transport.js';
import type { HostPort, TrunkConfig } from './trunk-loader.js';

/**
 * Where requests to a trunk's host go: the address as written, or what the system resolver
 * makes of the name in the family our sockets are bound in (an IPv4 socket cannot reach ::1).
 * Over TLS the certificate must be for the host as written and chain to the trunk's
 * `tls_ca_file` (else to a public root).
 * @throws the lookup's error when the name does not resolve
 */
export async function trunkPeer(target: HostPort, trunk: Pick<TrunkConfig, 'transport' | 'tlsCa'>, boundHost: string): Promise<SipPeer> {
  const family = net.isIPv4(boundHost) ? 4 : net.isIPv6(boundHost) && boundHost !== '::' ? 6 : 0;
  const named = net.isIP(target.host) === 0;
  const address = named ? (await lookup(target.host, { family })).address : target.host;
  const peer: SipPeer = { transport: trunk.transport, address, port: target.port };
  return withTlsCa(named ? withServerName(peer, target.host) : peer, trunk.tlsCa);
}
