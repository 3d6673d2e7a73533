/**
 * The c= line (RFC 4566 §5.7) of a stream, checked for what plain unicast RTP needs: a literal
 * IPv4 or IPv6 address. Host names would need a resolver in the call path and multicast is not
 * telephony, so both are refused as not acceptable.
 */
import { isIP } from 'node:net';
import { SdpError } from './sdp-error.js';
import { excerpt, lineOfType } from './sdp-lines.js';

/** A usable connection address. */
export interface ConnectionAddress {
  readonly address: string;
  readonly family: 4 | 6;
  /** 0.0.0.0 or ::, the RFC 2543 hold: nothing can be sent there. */
  readonly zero: boolean;
}

/** The stream's connection address: its own c= line, else the session's (RFC 4566 §5.7). */
export function connectionAddress(mediaSection: readonly string[], sessionSection: readonly string[]): ConnectionAddress {
  const line = lineOfType(mediaSection, 'c') ?? lineOfType(sessionSection, 'c');
  if (!line) throw new SdpError(400, 'the audio stream has no connection address: no c= line in its media section or at session level');
  const fields = line.slice(2).split(/\s+/);
  const [netType, addrType, address] = fields;
  if (fields.length !== 3 || netType === undefined || addrType === undefined || address === undefined) {
    throw new SdpError(400, `malformed connection line ${excerpt(line)}: expected c=IN IP4|IP6 <address>`);
  }
  if (netType !== 'IN' || (addrType !== 'IP4' && addrType !== 'IP6')) {
    throw new SdpError(488, `connection ${excerpt(line)} is not an Internet (IN IP4 or IN IP6) address`);
  }
  const family = addrType === 'IP4' ? 4 : 6;
  if (isIP(address) !== family) {
    throw new SdpError(
      488,
      `connection address ${excerpt(address)} is not a literal IPv${family} address (host names, multicast TTLs and mismatched families are not supported)`,
    );
  }
  if (isMulticast(address, family)) throw new SdpError(488, `connection address ${address} is multicast; only unicast RTP is supported`);
  const zero = family === 4 ? address === '0.0.0.0' : /^[0:]+$/.test(address);
  return { address, family, zero };
}

function isMulticast(address: string, family: 4 | 6): boolean {
  if (family === 6) return /^ff/i.test(address);
  const first = Number(address.split('.')[0]);
  return first >= 224 && first <= 239;
}
