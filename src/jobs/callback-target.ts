/**
 * Where a job's completion callback may go (spec 6.3): an https URL without credentials whose
 * name resolves only to public addresses. An operator may allow more targets with
 * `SPRACHROHR_CALLBACK_ALLOW` (a CIDR list; plain http is then allowed to those addresses
 * too); nothing else relaxes the rules. The name is resolved again for each delivery, checked
 * again, and the connection goes to the address that was checked, so a name that changes its
 * answer between the check and the connection (DNS rebinding) cannot lead it elsewhere.
 */
import { lookup as dnsLookup } from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

/** Resolves a host name to every address it has (`dns.promises.lookup` with `all`). */
export type Resolver = (hostname: string) => Promise<Array<{ address: string; family: number }>>;

/** The system resolver. */
export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Why a callback target was refused. */
export class CallbackTargetError extends Error {
  override readonly name = 'CallbackTargetError';
}

/** A checked target: the URL and the address to connect to. */
export interface CallbackTarget {
  readonly url: URL;
  readonly address: string;
  readonly family: 4 | 6;
}

/** Longest callback URL accepted. */
export const MAX_CALLBACK_URL_LENGTH = 2000;

/** The addresses an operator allows besides public ones, from `SPRACHROHR_CALLBACK_ALLOW`. */
export class CallbackAllowList {
  private readonly list = new net.BlockList();
  readonly empty: boolean;

  /** @throws Error naming an entry that is not an address or CIDR range */
  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address, bits] = entry.split('/');
      const family = net.isIPv6(address ?? '') ? 'ipv6' : net.isIPv4(address ?? '') ? 'ipv4' : null;
      if (!family || (bits !== undefined && !/^\d+$/.test(bits))) throw new Error(`"${entry}" is not an address or CIDR range`);
      if (bits === undefined) this.list.addAddress(address!, family);
      else this.list.addSubnet(address!, Number(bits), family);
    }
    this.empty = entries.length === 0;
  }

  allows(address: string): boolean {
    return !this.empty && this.list.check(address, net.isIPv6(address) ? 'ipv6' : 'ipv4');
  }
}

/** Whether an address is on the public internet: not loopback, private, link-local (cloud metadata), unique-local, multicast, reserved, or mapped to one of those. */
export function isPublicAddress(address: string): boolean {
  let parsed = ipaddr.parse(address);
  if (parsed.kind() === 'ipv6' && (parsed as ipaddr.IPv6).isIPv4MappedAddress()) parsed = (parsed as ipaddr.IPv6).toIPv4Address();
  return parsed.range() === 'unicast';
}

/**
 * Checks a callback URL (`field` names it in the reasons) as submitted and as each delivery resolves it: the address to connect to.
 * @throws CallbackTargetError with the reason, fit for an error's detail
 */
export async function checkCallbackTarget(
  raw: string,
  allow: CallbackAllowList,
  resolve: Resolver = systemResolver,
  field = 'callback_url',
): Promise<CallbackTarget> {
  if (raw.length > MAX_CALLBACK_URL_LENGTH) throw new CallbackTargetError(`${field} is longer than ${MAX_CALLBACK_URL_LENGTH} characters`);
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new CallbackTargetError(`${field} is not a URL`);
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new CallbackTargetError(`${field} must be https, not ${url.protocol.replace(':', '')}`);
  if (url.protocol === 'http:' && allow.empty) throw new CallbackTargetError(`${field} must be https`);
  if (url.username !== '' || url.password !== '')
    throw new CallbackTargetError(`${field} must not carry credentials; check the X-Speech-Webhook-Signature instead`);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: Array<{ address: string; family: number }>;
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await resolve(host);
    } catch {
      throw new CallbackTargetError(`${field}'s host ${host} does not resolve`);
    }
  }
  if (addresses.length === 0) throw new CallbackTargetError(`${field}'s host ${host} does not resolve`);
  const refused = addresses.find(({ address }) => !isPublicAddress(address) && !allow.allows(address));
  if (refused) throw new CallbackTargetError(`${field}'s host ${host} resolves to ${refused.address}, which is not a public address`);
  if (url.protocol === 'http:' && !addresses.every(({ address }) => allow.allows(address))) {
    throw new CallbackTargetError(`${field} must be https (plain http only to addresses in SPRACHROHR_CALLBACK_ALLOW)`);
  }
  const chosen = addresses[0]!;
  return { url, address: chosen.address, family: chosen.family === 6 ? 6 : 4 };
}
