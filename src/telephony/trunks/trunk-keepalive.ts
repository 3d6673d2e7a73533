/**
 * OPTIONS keep-alive of a trunk: every `options_interval_s` an OPTIONS goes to the trunk's
 * proxy (or registrar). Any final answer, even a refusal, shows the trunk is there; none within
 * the transaction's time (Timer F) shows it is not. The pings also keep a NAT's binding open
 * between registrations.
 */
import { newBranch, newCallId, newTag, sipHost } from '../sip/sip-headers.js';
import { contactValue } from '../sip/sip-dialog-request.js';
import { SipHeaders, type SipRequest } from '../sip/sip-message.js';
import type { TrunkConfig } from './trunk-loader.js';
import { trunkPeer } from './trunk-peer.js';
import type { RegistrarClient } from './trunk-registration.js';

/** What the last ping found. */
export interface KeepAliveStatus {
  /** null before the first answer or timeout. */
  readonly reachable: boolean | null;
  readonly lastCheckedAt: string | null;
  /** Request → final answer of the last ping that was answered. */
  readonly roundTripMs: number | null;
  /** The answer's status (any final status counts as reachable). */
  readonly lastStatus: number | null;
  readonly lastError: string | null;
}

/** Pings one trunk until stopped. */
export class TrunkKeepAlive {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;
  private stopped = false;
  private reachable: boolean | null = null;
  private lastCheckedAt: string | null = null;
  private roundTripMs: number | null = null;
  private lastStatus: number | null = null;
  private lastError: string | null = null;
  private readonly fromTag = newTag();

  constructor(
    readonly trunk: TrunkConfig,
    private readonly client: RegistrarClient,
    private readonly onChange: () => void = () => {},
  ) {}

  /** Pings now, then every interval (a ping still waiting for its answer is not doubled). */
  start(): void {
    this.ping();
    this.timer = setInterval(() => this.ping(), this.trunk.optionsIntervalSeconds * 1000);
    this.timer.unref();
  }

  /** Stops pinging; a ping still waiting for its answer is left to its transaction (its outcome is dropped). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  status(): KeepAliveStatus {
    return {
      reachable: this.reachable,
      lastCheckedAt: this.lastCheckedAt,
      roundTripMs: this.roundTripMs,
      lastStatus: this.lastStatus,
      lastError: this.lastError,
    };
  }

  private ping(): void {
    if (this.stopped || this.inFlight) return;
    this.inFlight = this.exchange().finally(() => (this.inFlight = null));
  }

  private async exchange(): Promise<void> {
    const target = this.trunk.proxy!;
    const was = this.reachable;
    try {
      const contact = this.client.contactFor(this.trunk.transport);
      const peer = await trunkPeer(target, this.trunk, contact.host);
      const started = performance.now();
      let failure: Error | null = null;
      const response = await this.client.request(this.optionsRequest(contact), peer, (error) => (failure = error));
      if (this.stopped) return;
      if (response) {
        this.reachable = true;
        this.roundTripMs = Math.round((performance.now() - started) * 10) / 10;
        this.lastStatus = response.status;
        this.lastError = null;
      } else {
        this.reachable = false;
        this.lastError = failure ? `no connection to the proxy: ${(failure as Error).message}` : 'no answer to OPTIONS';
      }
    } catch (error) {
      this.reachable = false;
      this.lastError = (error as Error).message;
    }
    this.lastCheckedAt = new Date().toISOString();
    if (this.reachable !== was) this.onChange();
  }

  private optionsRequest(contact: { host: string; port: number }): SipRequest {
    const target = this.trunk.proxy!;
    const host = sipHost(target.host);
    const transportParam = this.trunk.transport === 'UDP' ? '' : `;transport=${this.trunk.transport.toLowerCase()}`;
    const user = this.trunk.fromUser ?? 'sprachrohr';
    const headers = new SipHeaders()
      .append('Via', `SIP/2.0/${this.trunk.transport} ${sipHost(contact.host)}:${contact.port};branch=${newBranch()};rport`)
      .append('Max-Forwards', '70')
      .append('From', `<sip:${user}@${this.trunk.fromDomain ? sipHost(this.trunk.fromDomain) : host}>;tag=${this.fromTag}`)
      .append('To', `<sip:${host}:${target.port}>`)
      .append('Call-ID', newCallId(contact.host))
      .append('CSeq', '1 OPTIONS')
      .append('Contact', contactValue(contact, this.trunk.transport))
      .append('Accept', 'application/sdp');
    if (this.client.product) headers.append('User-Agent', this.client.product);
    return { kind: 'request', method: 'OPTIONS', uri: `sip:${host}:${target.port}${transportParam}`, headers, body: Buffer.alloc(0) };
  }
}
