/**
 * Where a request for a SIP URI goes (RFC 3263, simply): the transport its `transport=`
 * parameter names (TLS for a sips: URI, else UDP), the port it names or the transport's
 * default (5060, 5061 for TLS), and the host as written when it is an address, else what the
 * system resolver makes of it (A/AAAA records; no NAPTR or SRV lookups). Over TLS the
 * certificate is checked against the host as written (RFC 5922 section 7: the name in the URI,
 * not the address it resolved to).
 */
import { lookup } from 'node:dns/promises';
import net from 'node:net';
import type { SipUri } from './sip-headers.js';
import type { SipPeer, TransportName } from './sip-transport.js';

/**
 * The peer a URI names; a host name is looked up in address family `family` (0 for either).
 * @throws RangeError for a transport the stack does not have (SCTP, WS); the lookup's error
 *   when the host name does not resolve
 */
export async function peerForUri(uri: SipUri, family: 0 | 4 | 6 = 0): Promise<SipPeer> {
  const transport = transportOf(uri);
  const host = uri.host.replace(/^\[(.*)\]$/, '$1');
  const address = net.isIP(host) ? host : (await lookup(host, { family })).address;
  const peer: SipPeer = { transport, address, port: uri.port ?? (transport === 'TLS' ? 5061 : 5060) };
  return address === host ? peer : withServerName(peer, host);
}

/** The peer, over TLS checked against the host name `serverName` (unchanged over UDP and TCP). */
export function withServerName(peer: SipPeer, serverName: string): SipPeer {
  return peer.transport === 'TLS' ? { ...peer, tls: { ...peer.tls, serverName } } : peer;
}

/** The peer, over TLS trusting only the CAs of `ca` (PEM; unchanged over UDP and TCP, and for null). */
export function withTlsCa(peer: SipPeer, ca: string | null | undefined): SipPeer {
  return peer.transport === 'TLS' && ca ? { ...peer, tls: { ...peer.tls, ca } } : peer;
}

function transportOf(uri: SipUri): TransportName {
  // A sips: URI asks for TLS all the way (RFC 3261 section 26.2.2), whatever else it says.
  if (uri.scheme === 'sips') return 'TLS';
  const named = (uri.params.get('transport') ?? 'udp').toUpperCase();
  if (named === 'UDP' || named === 'TCP' || named === 'TLS') return named;
  throw new RangeError(`the SIP transport ${named} is not supported (UDP, TCP and TLS are)`);
}
