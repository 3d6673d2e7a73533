/**
 * The addresses a call's media may come from (strict RTP): the SDP's connection address and
 * the address the call's signalling came from (a caller behind NAT sends from there, whatever
 * private address its SDP names). Written down once per offer/answer in the form a UDP socket
 * reports a sender, so that checking a packet's source is a few string comparisons without a
 * new string: the media thread does it for every packet of every call.
 */
import net from 'node:net';

/** How a dual-stack socket reports an IPv4 sender. */
const MAPPED_PREFIX = '::ffff:';

/**
 * `address` as a socket reports its sender: an IPv4-mapped address as plain IPv4, IPv6 in
 * canonical text (lower case, the longest run of zeros compressed), so an SDP writing
 * `2001:DB8:0:0:0:0:0:1` names the sender `2001:db8::1`. Anything else is returned unchanged.
 */
export function canonicalAddress(address: string): string {
  const unmapped = address.toLowerCase().startsWith(MAPPED_PREFIX) ? address.slice(MAPPED_PREFIX.length) : address;
  if (net.isIPv4(unmapped)) return unmapped;
  if (!net.isIPv6(address)) return address;
  try {
    // The URL parser writes IPv6 hosts canonically (RFC 5952), as the kernel's inet_ntop does.
    return new URL(`http://[${address}]`).hostname.slice(1, -1);
  } catch {
    // A zone index (fe80::1%eth0) is no URL host; case is the only difference left to remove.
    return address.toLowerCase();
  }
}

/** Whether `address` is `::ffff:` followed by `plain`, compared in place. */
function isMappedForm(address: string, plain: string): boolean {
  return address.length === MAPPED_PREFIX.length + plain.length && address.startsWith(MAPPED_PREFIX) && address.endsWith(plain);
}

/** The two addresses one call's RTP and RTCP are taken from. */
export class ExpectedSources {
  private sdp = '';
  private signalling = '';

  constructor(sdpAddress: string, signallingAddress: string) {
    this.set(sdpAddress, signallingAddress);
  }

  /** Takes the addresses of a new offer/answer (a re-INVITE may move the media). */
  set(sdpAddress: string, signallingAddress: string): void {
    this.sdp = canonicalAddress(sdpAddress);
    this.signalling = canonicalAddress(signallingAddress);
  }

  /** Whether a packet from `address` (as the socket reports it) may be the caller's; allocates nothing. */
  has(address: string): boolean {
    if (address === this.sdp || address === this.signalling) return true;
    return isMappedForm(address, this.sdp) || isMappedForm(address, this.signalling);
  }
}
