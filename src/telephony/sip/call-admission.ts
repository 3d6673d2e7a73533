/**
 * Who may call the gateway and how many at once: the source address must be on the allow-list
 * (CIDR, `net.BlockList`), digest authentication (RFC 3261 section 22, RFC 8760 SHA-256) is
 * asked for when credentials are configured, and calls are counted per source and overall.
 * Refusals cost nothing: no dialog, no media port, no engine.
 */
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import net from 'node:net';
import type { CallDialog } from '../call/call-dialog.js';
import { authParams, digestResponse } from './digest.js';
import type { CallRefusal } from './sip-endpoint.js';
import type { SipRequest } from './sip-message.js';
import type { SipPeer } from './sip-transport.js';

export interface CallAdmissionOptions {
  /** Sources allowed to call, as CIDR (`10.0.0.0/8`, `2001:db8::/32`) or single addresses. */
  readonly allow: readonly string[];
  /** Digest credentials; calls from allowed sources must also authenticate when set. */
  readonly digest?: { readonly realm: string; readonly user: string; readonly password: string };
  readonly maxCalls: number;
  readonly maxCallsPerSource: number;
  /** How long a nonce stays valid. */
  readonly nonceLifetimeMs?: number;
  readonly now?: () => number;
}

/**
 * Parses an allow-list entry into a block list rule.
 * @throws RangeError naming the entry when it is not an address or CIDR
 */
export function addRule(list: net.BlockList, entry: string): void {
  const [address, prefix] = entry.trim().split('/') as [string, string | undefined];
  const family = net.isIPv4(address) ? 'ipv4' : net.isIPv6(address) ? 'ipv6' : null;
  if (!family) throw new RangeError(`${JSON.stringify(entry)} is not an IP address or CIDR range`);
  if (prefix === undefined) return list.addAddress(address, family);
  const bits = Number(prefix);
  if (!/^\d{1,3}$/.test(prefix) || bits > (family === 'ipv4' ? 32 : 128)) throw new RangeError(`${JSON.stringify(entry)} has an invalid prefix length`);
  list.addSubnet(address, bits, family);
}

function countUp(counts: Map<string, number>, key: string): void {
  counts.set(key, (counts.get(key) ?? 0) + 1);
}

function countDown(counts: Map<string, number>, key: string): void {
  const left = (counts.get(key) ?? 1) - 1;
  if (left === 0) counts.delete(key);
  else counts.set(key, left);
}

/** An address without the IPv4-mapped prefix a dual-stack socket reports (`::ffff:10.0.0.1`). */
function plainAddress(address: string): string {
  return address.replace(/^::ffff:/i, '');
}

/** The admission rules of the SIP side. */
export class CallAdmission {
  private readonly allowed = new net.BlockList();
  private readonly perSource = new Map<string, number>();
  private total = 0;
  private trunkSources: Array<{ readonly name: string; readonly list: net.BlockList; readonly maxCalls: number }> = [];
  private readonly perTrunk = new Map<string, number>();
  /** Signs nonces, so no nonce needs to be remembered (stateless challenges). */
  private readonly nonceKey = randomBytes(32);
  /** Set while the instance drains: every new call is refused with it. */
  private draining: CallRefusal | null = null;

  /** @throws RangeError for an allow-list entry that is not an address or CIDR */
  constructor(private readonly options: CallAdmissionOptions) {
    for (const entry of options.allow) addRule(this.allowed, entry);
  }

  /** Whether a source address is on the allow-list or a trunk's (IPv4-mapped IPv6 counts as IPv4). */
  allows(address: string): boolean {
    const plain = plainAddress(address);
    return this.allowed.check(plain, net.isIPv4(plain) ? 'ipv4' : 'ipv6') || this.trunkFor(plain) !== null;
  }

  /**
   * The trunks' own sources (their `allow`): calls from them are let in for that trunk, without
   * the deployment's digest (a carrier does not authenticate to its customer).
   * @throws RangeError for an entry that is not an address or CIDR (the trunk loader checks them first)
   */
  setTrunkSources(trunks: ReadonlyArray<{ readonly name: string; readonly allow: readonly string[]; readonly maxCalls: number }>): void {
    this.trunkSources = trunks.map((trunk) => {
      const list = new net.BlockList();
      for (const entry of trunk.allow) addRule(list, entry);
      return { name: trunk.name, list, maxCalls: trunk.maxCalls };
    });
  }

  /** The trunk whose sources include `address` (the first in the file), or null. */
  trunkFor(address: string): string | null {
    return this.trunkSourceOf(address)?.name ?? null;
  }

  private trunkSourceOf(address: string): { readonly name: string; readonly maxCalls: number } | undefined {
    const plain = plainAddress(address);
    const family = net.isIPv4(plain) ? 'ipv4' : 'ipv6';
    return this.trunkSources.find((trunk) => trunk.list.check(plain, family));
  }

  /** Calls admitted and not yet ended. */
  get activeCalls(): number {
    return this.total;
  }

  /**
   * Refuses every new call from now on with 503 and `Retry-After` (the instance is draining):
   * a proxy or trunk sends the call to its next gateway at once. Calls in progress go on.
   */
  drain(retryAfterSeconds: number): void {
    this.draining = { status: 503, headers: [['Retry-After', String(retryAfterSeconds)]] };
  }

  /** The refusal for a new INVITE, or null to let it in. */
  check(invite: SipRequest, source: SipPeer): CallRefusal | null {
    const address = plainAddress(source.address);
    if (!this.allows(address)) return { status: 403 };
    if (this.draining) return this.draining;
    const trunk = this.trunkSourceOf(address);
    if (this.options.digest && !trunk) {
      const stale = this.verify(invite);
      if (stale !== true) return { status: 401, headers: this.challenge(stale === 'stale') };
    }
    const busy: CallRefusal = { status: 503, headers: [['Retry-After', '5']] };
    if (this.total >= this.options.maxCalls) return busy;
    if ((this.perSource.get(address) ?? 0) >= this.options.maxCallsPerSource) return busy;
    // A trunk's own limit (its max_calls): the carrier sends the call to its next route.
    if (trunk && (this.perTrunk.get(trunk.name) ?? 0) >= trunk.maxCalls) return busy;
    return null;
  }

  /** Counts an admitted call (for its source and its trunk) until its dialog ends. */
  track(dialog: CallDialog, source: SipPeer): void {
    const address = plainAddress(source.address);
    const trunk = this.trunkFor(address);
    this.total += 1;
    countUp(this.perSource, address);
    if (trunk) countUp(this.perTrunk, trunk);
    dialog.once('ended', () => {
      this.total -= 1;
      countDown(this.perSource, address);
      if (trunk) countDown(this.perTrunk, trunk);
    });
  }

  /**
   * Counts a call the gateway placed, in the process's calls and its trunk's (so that
   * `SPRACHROHR_SIP_MAX_CALLS` and `max_calls` hold for both directions), until the returned
   * function is called (once).
   */
  trackPlaced(trunk: string | null): () => void {
    this.total += 1;
    if (trunk) countUp(this.perTrunk, trunk);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= 1;
      if (trunk) countDown(this.perTrunk, trunk);
    };
  }

  /** The process's ceiling on calls at once (`SPRACHROHR_SIP_MAX_CALLS`). */
  get maxCalls(): number {
    return this.options.maxCalls;
  }

  /** Calls in progress on a trunk: from its sources, and placed through it. */
  trunkCalls(name: string): number {
    return this.perTrunk.get(name) ?? 0;
  }

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  private nonce(): string {
    const issued = this.now().toString(36);
    const signature = createHmac('sha256', this.nonceKey).update(issued).digest('base64url').slice(0, 22);
    return `${issued}.${signature}`;
  }

  /** Whether a nonce is ours: 'fresh', 'stale' (ours, expired) or 'foreign'. */
  private nonceState(nonce: string): 'fresh' | 'stale' | 'foreign' {
    const [issued, signature] = nonce.split('.');
    if (!issued || !signature) return 'foreign';
    const expected = createHmac('sha256', this.nonceKey).update(issued).digest('base64url').slice(0, 22);
    if (expected.length !== signature.length || !timingSafeEqual(Buffer.from(expected), Buffer.from(signature))) return 'foreign';
    return this.now() - parseInt(issued, 36) > (this.options.nonceLifetimeMs ?? 300_000) ? 'stale' : 'fresh';
  }

  private challenge(stale: boolean): Array<[string, string]> {
    const { realm } = this.options.digest!;
    const nonce = this.nonce();
    const staleParam = stale ? ', stale=true' : '';
    return [
      ['WWW-Authenticate', `Digest realm="${realm}", nonce="${nonce}", algorithm=SHA-256, qop="auth"${staleParam}`],
      ['WWW-Authenticate', `Digest realm="${realm}", nonce="${nonce}", algorithm=MD5, qop="auth"${staleParam}`],
    ];
  }

  /** true when the request carries valid credentials; 'stale' for a good answer to an expired nonce. */
  private verify(request: SipRequest): true | 'stale' | false {
    const { realm, user, password } = this.options.digest!;
    for (const header of request.headers.getAll('Authorization')) {
      if (!/^digest\s/i.test(header)) continue;
      const params = authParams(header.replace(/^digest\s+/i, ''));
      const get = (name: string) => params.get(name) ?? '';
      if (get('username') !== user || get('realm') !== realm) continue;
      const algorithm = (get('algorithm') || 'MD5').toUpperCase();
      if (algorithm !== 'MD5' && algorithm !== 'SHA-256') continue;
      const expected = digestResponse({
        algorithm,
        username: user,
        realm,
        password,
        method: request.method,
        uri: get('uri'),
        nonce: get('nonce'),
        qop: get('qop') === 'auth' ? 'auth' : null,
        nc: get('nc'),
        cnonce: get('cnonce'),
      });
      const given = get('response').toLowerCase();
      if (given.length !== expected.length || !timingSafeEqual(Buffer.from(given), Buffer.from(expected))) continue;
      const state = this.nonceState(get('nonce'));
      if (state === 'fresh') return true;
      if (state === 'stale') return 'stale';
    }
    return false;
  }
}
