/**
 * Keeps one trunk registered (RFC 3261 section 10): REGISTER to the registrar, answering its
 * digest challenge (401 or 407, MD5 or SHA-256), refreshed well before the granted time runs
 * out; after a failure it tries again with growing pauses, after a 503 when its Retry-After
 * says; it follows a 3xx to the registrar it names and takes a 423's Min-Expires; at stop it
 * removes its binding (Expires: 0).
 */
import net from 'node:net';
import { chooseChallenge, digestAuthorization } from '../sip/digest.js';
import { contactValue } from '../sip/sip-dialog-request.js';
import { newBranch, newCallId, newTag, parseNameAddress, parseSipUri, sipHost } from '../sip/sip-headers.js';
import { SipHeaders, type SipRequest, type SipResponse } from '../sip/sip-message.js';
import { peerForUri, withTlsCa } from '../sip/sip-target.js';
import type { SipPeer } from '../sip/sip-transport.js';
import type { HostPort, TrunkConfig } from './trunk-loader.js';
import { trunkPeer } from './trunk-peer.js';

/** What registering needs from the SIP endpoint. */
export interface RegistrarClient {
  /**
   * Sends a request through a new client transaction; its final response, or null on timeout.
   * `onFailure` hears why when the connection could not be made.
   */
  request(request: SipRequest, peer: SipPeer, onFailure?: (error: Error) => void): Promise<SipResponse | null>;
  /** Our address and port for a transport (the Contact we register). */
  contactFor(transport: SipPeer['transport']): { host: string; port: number };
  readonly product: string | undefined;
}

/** Where a registration stands. */
export type RegistrationState = 'registering' | 'registered' | 'failed' | 'unregistered';

/** A registration's state as `GET /v1/trunks` and `sprachrohr trunks status` show it. */
export interface RegistrationStatus {
  readonly state: RegistrationState;
  /** When the binding runs out (ISO time), while registered. */
  readonly expiresAt: string | null;
  readonly lastRegisteredAt: string | null;
  /** The last failure: the status and reason, or what went wrong on the way. */
  readonly lastError: string | null;
  /** Failures in a row. */
  readonly failures: number;
  /** When the next REGISTER goes (ISO time). */
  readonly nextAttemptAt: string | null;
}

/** Timing of a registration; tests shorten it. */
export interface RegistrationTiming {
  /** First pause after a failure; it doubles with each failure in a row. */
  readonly retryBaseMs: number;
  /** Longest pause after failures. */
  readonly retryMaxMs: number;
  /** How long the unregistration at stop may take. */
  readonly unregisterTimeoutMs: number;
}

export const DEFAULT_REGISTRATION_TIMING: RegistrationTiming = { retryBaseMs: 5_000, retryMaxMs: 300_000, unregisterTimeoutMs: 2_000 };

/** One REGISTER exchange's end: the final response (null: none), what went wrong, and when its last request left. */
interface Exchange {
  readonly response: SipResponse | null;
  readonly error: string | null;
  /** `performance.now()` when the request that got this answer was sent. */
  readonly sentAt: number;
}

/** Redirections (3xx) followed in one attempt. */
const MAX_REDIRECTS = 5;
/** Challenges answered in one attempt (the first, and answers to stale nonces). */
const MAX_CHALLENGES = 3;

/**
 * When to refresh a binding granted for `grantedSeconds`: a minute before it runs out, but
 * never later than at its half (a short binding gets its refresh in good time).
 */
export function refreshDelayMs(grantedSeconds: number): number {
  return Math.max(grantedSeconds * 500, (grantedSeconds - 60) * 1000);
}

/** One trunk's registration. */
export class TrunkRegistration {
  private state: RegistrationState = 'unregistered';
  private expiresAt: number | null = null;
  private lastRegisteredAt: number | null = null;
  private lastError: string | null = null;
  private failures = 0;
  private nextAttemptAt: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** `performance.now()` when the next (or running) attempt is due. */
  private plannedAt = 0;
  private stopped = false;
  /** stop() is over: nothing may change the state after it. */
  private stopDone = false;
  private running: Promise<void> | null = null;
  private readonly callId: string;
  private readonly fromTag = newTag();
  private cseq = 0;
  /** Seconds asked for; a 423 raises it. */
  private expiresSeconds: number;
  /** The registrar a 3xx sent us to, for the attempts after it. */
  private redirectedTo: SipPeer | null = null;

  constructor(
    readonly trunk: TrunkConfig,
    private readonly client: RegistrarClient,
    private readonly timing: RegistrationTiming = DEFAULT_REGISTRATION_TIMING,
    private readonly onChange: () => void = () => {},
  ) {
    this.expiresSeconds = trunk.expiresSeconds;
    this.callId = newCallId(client.contactFor(trunk.transport).host);
  }

  /** Registers now, and keeps the binding fresh until {@link stop}. */
  start(): void {
    this.schedule(0);
  }

  status(): RegistrationStatus {
    const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());
    // A binding whose refresh keeps failing is registered only until it runs out.
    const lapsed = this.state === 'registered' && this.expiresAt !== null && this.expiresAt <= Date.now();
    const state = lapsed ? 'failed' : this.state;
    return {
      state,
      expiresAt: state === 'registered' ? iso(this.expiresAt) : null,
      lastRegisteredAt: iso(this.lastRegisteredAt),
      lastError: this.lastError,
      failures: this.failures,
      nextAttemptAt: iso(this.nextAttemptAt),
    };
  }

  /**
   * Stops refreshing and, when registered, removes the binding. The whole stop (an attempt
   * still waiting for its answer, then the removal) takes at most the timing's unregister
   * timeout, so that a registrar that does not answer cannot hold up a shutdown.
   */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    this.nextAttemptAt = null;
    const deadline = new Promise<void>((resolve) => setTimeout(resolve, this.timing.unregisterTimeoutMs).unref());
    await Promise.race([this.running, deadline]);
    if (this.state === 'registered') {
      const removal = this.exchange(0).catch(() => null);
      await Promise.race([removal, deadline]);
    }
    this.stopDone = true;
    this.state = 'unregistered';
    this.expiresAt = null;
    this.onChange();
  }

  private schedule(delayMs: number): void {
    if (this.stopped) return;
    this.plannedAt = performance.now() + delayMs;
    this.nextAttemptAt = Date.now() + delayMs;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.attempt().finally(() => (this.running = null));
    }, delayMs);
    this.timer.unref();
  }

  private async attempt(): Promise<void> {
    const planned = this.plannedAt;
    if (this.state !== 'registered') this.state = 'registering';
    this.nextAttemptAt = null;
    let outcome: Exchange;
    try {
      outcome = await this.exchange(this.expiresSeconds);
    } catch (error) {
      outcome = { response: null, error: (error as Error).message, sentAt: performance.now() };
    }
    if (this.stopped) {
      // Registered just as we stopped: stop(), still waiting for this attempt, removes the
      // binding. An answer after stop() gave up waiting changes nothing any more.
      if (!this.stopDone && outcome.response && outcome.response.status < 300) this.registered(outcome.response);
      return;
    }
    const response = outcome.response;
    if (response && response.status >= 200 && response.status < 300) {
      this.registered(response);
      // Counted from when this REGISTER was planned to leave (the binding starts no earlier),
      // not from its answer or the timer's late firing: refreshes keep their rhythm instead of
      // drifting by a round trip and a timer's lateness each time.
      this.schedule(Math.max(0, Math.min(planned, outcome.sentAt) + refreshDelayMs(this.grantedSeconds(response)) - performance.now()));
    } else {
      this.failed(outcome.error ?? (response ? `${response.status} ${response.reason}` : 'no answer'), response);
    }
    this.onChange();
  }

  private registered(response: SipResponse): void {
    const now = Date.now();
    this.state = 'registered';
    this.failures = 0;
    this.lastError = null;
    this.lastRegisteredAt = now;
    this.expiresAt = now + this.grantedSeconds(response) * 1000;
  }

  private failed(error: string, response: SipResponse | null): void {
    this.failures += 1;
    this.lastError = error;
    // A binding still running stays until it runs out; a failed refresh is retried before that.
    if (this.state !== 'registered' || (this.expiresAt !== null && this.expiresAt <= Date.now())) {
      this.state = 'failed';
      this.expiresAt = null;
    }
    const retryAfter = Number(
      response?.headers
        .get('Retry-After')
        ?.trim()
        .split(/[\s;(]/)[0],
    );
    const backoff = Math.min(this.timing.retryMaxMs, this.timing.retryBaseMs * 2 ** (this.failures - 1));
    const wanted = response?.status === 503 && Number.isFinite(retryAfter) && retryAfter > 0 ? Math.min(retryAfter, 3600) * 1000 : backoff;
    // While a binding still runs, the next try comes before it runs out.
    const left = this.state === 'registered' && this.expiresAt !== null ? this.expiresAt - Date.now() - 1000 : Number.POSITIVE_INFINITY;
    this.schedule(Math.max(this.timing.retryBaseMs, Math.min(wanted, left)));
  }

  /** The binding's time: our Contact's expires in the answer, else its Expires header, else what we asked. */
  private grantedSeconds(response: SipResponse): number {
    const ours = contactValue(this.contact(), this.trunk.transport).slice(1, -1);
    for (const value of response.headers.getAll('Contact')) {
      for (const part of value.split(/,(?=(?:[^"]*"[^"]*")*[^"]*$)/)) {
        const contact = parseNameAddress(part.trim());
        const expires = Number(contact?.params.get('expires'));
        if (contact && sameContact(contact.uri, ours) && Number.isFinite(expires) && expires > 0) return expires;
      }
    }
    const header = Number(response.headers.get('Expires'));
    return Number.isFinite(header) && header > 0 ? header : this.expiresSeconds;
  }

  private contact(): { host: string; port: number } {
    return this.client.contactFor(this.trunk.transport);
  }

  /**
   * One REGISTER exchange: the request, the challenges answered, redirections followed, a
   * 423's Min-Expires taken; the final response (null: no answer) or why none could be sent.
   */
  private async exchange(expires: number): Promise<Exchange> {
    const registrar = this.trunk.registrar!;
    let peer = this.redirectedTo ?? (await trunkPeer(this.trunk.proxy ?? registrar, this.trunk, this.contact().host));
    let challenges = 0;
    let redirects = 0;
    let authorization: [string, string] | null = null;
    for (;;) {
      const request = this.registerRequest(registrar, peer, expires, authorization);
      const sentAt = performance.now();
      let failure: Error | null = null;
      const response = await this.client.request(request, peer, (error) => (failure = error));
      if (!response)
        return { response: null, error: failure ? `no connection to the registrar: ${(failure as Error).message}` : 'no answer from the registrar', sentAt };
      const done = (error: string | null): Exchange => ({ response, error, sentAt });
      if (response.status === 401 || response.status === 407) {
        const header = response.status === 401 ? 'WWW-Authenticate' : 'Proxy-Authenticate';
        const challenge = chooseChallenge(response.headers.getAll(header));
        if (!challenge) return done(`${response.status}: no digest challenge we can answer (MD5 or SHA-256, qop auth)`);
        if (this.trunk.realm !== null && challenge.realm !== this.trunk.realm)
          return done(`${response.status}: challenged for realm ${JSON.stringify(challenge.realm)}, the trunk's realm is ${JSON.stringify(this.trunk.realm)}`);
        // A challenge after our answer means the credentials were refused, unless only the nonce had expired.
        challenges += 1;
        if (challenges > MAX_CHALLENGES || (authorization !== null && !challenge.stale))
          return done(`${response.status}: the registrar refused the credentials`);
        const credentials = { username: this.trunk.authUsername ?? this.trunk.username!, password: this.trunk.password ?? '' };
        authorization = [
          response.status === 401 ? 'Authorization' : 'Proxy-Authorization',
          digestAuthorization(challenge, credentials, 'REGISTER', request.uri),
        ];
        continue;
      }
      if (response.status >= 300 && response.status < 400) {
        const target = parseNameAddress(response.headers.get('Contact') ?? '');
        const uri = target ? parseSipUri(target.uri) : null;
        if (!uri || ++redirects > MAX_REDIRECTS) return done(`${response.status}: a redirection that cannot be followed`);
        // The registrar it moved to is still the trunk's: the trunk's CA vouches for it.
        peer = withTlsCa(await peerForUri(uri, this.family()), this.trunk.tlsCa);
        this.redirectedTo = peer;
        continue;
      }
      if (response.status === 423) {
        const minimum = Number(response.headers.get('Min-Expires'));
        if (!Number.isFinite(minimum) || minimum <= this.expiresSeconds || expires === 0) return done(`423: interval too brief`);
        this.expiresSeconds = minimum;
        expires = minimum;
        continue;
      }
      return done(null);
    }
  }

  private registerRequest(registrar: HostPort, peer: SipPeer, expires: number, authorization: [string, string] | null): SipRequest {
    const contact = this.contact();
    const domain = `${sipHost(registrar.host)}${registrar.port === (this.trunk.transport === 'TLS' ? 5061 : 5060) ? '' : `:${registrar.port}`}`;
    const transportParam = this.trunk.transport === 'UDP' ? '' : `;transport=${this.trunk.transport.toLowerCase()}`;
    const uri = `sip:${domain}${transportParam}`;
    const aor = `<sip:${this.trunk.username}@${sipHost(registrar.host)}>`;
    this.cseq += 1;
    const headers = new SipHeaders()
      .append('Via', `SIP/2.0/${peer.transport} ${sipHost(contact.host)}:${contact.port};branch=${newBranch()};rport`)
      .append('Max-Forwards', '70')
      .append('From', `${aor};tag=${this.fromTag}`)
      .append('To', aor)
      .append('Call-ID', this.callId)
      .append('CSeq', `${this.cseq} REGISTER`)
      .append('Contact', contactValue(contact, this.trunk.transport).replace(/^<sip:/, `<sip:${this.trunk.username}@`))
      .append('Expires', String(expires));
    if (authorization) headers.append(authorization[0], authorization[1]);
    if (this.client.product) headers.append('User-Agent', this.client.product);
    return { kind: 'request', method: 'REGISTER', uri, headers, body: Buffer.alloc(0) };
  }

  /** Names are looked up in the family our sockets are bound in: an IPv4 socket cannot reach ::1. */
  private family(): 0 | 4 | 6 {
    const bound = this.contact().host;
    return net.isIPv4(bound) ? 4 : net.isIPv6(bound) && bound !== '::' ? 6 : 0;
  }
}

/** Whether a Contact URI in a REGISTER answer is ours (user, host and port; parameters aside). */
function sameContact(uri: string, ours: string): boolean {
  const a = parseSipUri(uri);
  const b = parseSipUri(ours);
  return a !== null && b !== null && a.host.toLowerCase() === b.host.toLowerCase() && (a.port ?? 5060) === (b.port ?? 5060);
}
