/**
 * SIP transactions (RFC 3261 section 17, with RFC 6026's Accepted state): server
 * transactions absorb retransmitted requests and resend their last response, retransmit a
 * non-2xx final response to an INVITE over UDP until the ACK comes (Timer G, H, I), and keep
 * a completed non-INVITE transaction long enough to answer retransmissions (Timer J). Client
 * non-INVITE transactions retransmit over UDP (Timer E) and give up after 64 × T1 (Timer F);
 * the INVITE client transaction is in sip-invite-client.ts. Retransmitting a 2xx to INVITE is
 * the dialog's job, not the transaction's (section 13.3.1.4).
 */
import { cseqOf } from './sip-parser.js';
import { BRANCH_COOKIE, newBranch, parseVia } from './sip-headers.js';
import { REASON_PHRASES, serializeMessage, SipHeaders, type SipRequest, type SipResponse } from './sip-message.js';
import type { SipPeer } from './sip-transport.js';
import { TimerSet } from './timer-set.js';

/** RFC 3261 timer values (section 17.1.1.1 and table 4). */
export interface SipTimers {
  readonly t1Ms: number;
  readonly t2Ms: number;
  readonly t4Ms: number;
}

export const DEFAULT_TIMERS: SipTimers = { t1Ms: 500, t2Ms: 4000, t4Ms: 5000 };

/** What the transaction layer needs from below. */
export interface TransactionTransport {
  /** Sends bytes; `onError` hears of a send that failed. */
  send(data: Buffer, peer: SipPeer, onError?: (error: Error) => void): void;
}

/** The key that matches a request (and its retransmissions and ACK) to its server transaction. */
export function serverTransactionKey(request: SipRequest): string | null {
  const via = parseVia(request.headers.get('Via') ?? '');
  if (!via) return null;
  const method = request.method === 'ACK' ? 'INVITE' : request.method;
  if (via.branch?.startsWith(BRANCH_COOKIE)) return `${via.branch}|${via.host}:${via.port ?? ''}|${method}`;
  // RFC 2543 peers: no unique branch; the dialog identifiers and CSeq number stand in.
  const fromTag = /;\s*tag=([^;\s]+)/i.exec(request.headers.get('From') ?? '')?.[1] ?? '';
  return `2543|${request.headers.get('Call-ID')}|${fromTag}|${cseqOf(request).seq}|${via.host}:${via.port ?? ''}|${method}`;
}

/** Where responses to a request go (section 18.2.2 and RFC 3581's rport). */
export function responsePeer(request: SipRequest, source: SipPeer): SipPeer {
  if (source.transport !== 'UDP') return source;
  const via = parseVia(request.headers.get('Via') ?? '');
  if (!via) return source;
  // Symmetric answer when rport is asked for; otherwise the port the sender wrote in its Via,
  // sent to the address the request really came from (a NAT rewrites it).
  const port = via.params.has('rport') ? source.port : (via.port ?? 5060);
  return { transport: 'UDP', address: source.address, port };
}

/**
 * Builds a response to a request (section 8.2.6): Via, From, Call-ID and CSeq copied, To with
 * `toTag` added when the request's To has none.
 */
export function buildResponse(
  request: SipRequest,
  status: number,
  source: SipPeer,
  options: { toTag?: string; reason?: string; headers?: Iterable<readonly [string, string]>; body?: Buffer } = {},
): SipResponse {
  const headers = new SipHeaders();
  request.headers.getAll('Via').forEach((via, index) => {
    // The top Via records where the request really came from (section 18.2.1, RFC 3581).
    if (index === 0 && source.transport === 'UDP') {
      let value = via;
      const parsed = parseVia(via);
      if (parsed && parsed.host !== source.address) value += `;received=${source.address}`;
      if (parsed?.params.has('rport')) value = value.replace(/;\s*rport(?==|;|$)(=\d*)?/i, `;rport=${source.port}`);
      headers.append('Via', value);
    } else headers.append('Via', via);
  });
  headers.append('From', request.headers.get('From')!);
  const to = request.headers.get('To')!;
  headers.append('To', options.toTag && !/;\s*tag=/i.test(to) ? `${to};tag=${options.toTag}` : to);
  headers.append('Call-ID', request.headers.get('Call-ID')!);
  headers.append('CSeq', request.headers.get('CSeq')!);
  for (const [name, value] of options.headers ?? []) headers.append(name, value);
  return { kind: 'response', status, reason: options.reason ?? REASON_PHRASES[status] ?? 'Unknown', headers, body: options.body ?? Buffer.alloc(0) };
}

type ServerState = 'proceeding' | 'accepted' | 'completed' | 'confirmed' | 'terminated';

/** One server transaction. */
export class ServerTransaction {
  private state: ServerState = 'proceeding';
  private lastResponse: Buffer | null = null;
  private readonly timers = new TimerSet();

  constructor(
    readonly key: string,
    readonly request: SipRequest,
    readonly source: SipPeer,
    private readonly transport: TransactionTransport,
    private readonly sipTimers: SipTimers,
    private readonly onTerminated: (transaction: ServerTransaction) => void,
  ) {}

  get isInvite(): boolean {
    return this.request.method === 'INVITE';
  }

  /** Whether a final response has been sent. */
  get answered(): boolean {
    return this.state !== 'proceeding';
  }

  /** Sends a response and moves the state machine. */
  respond(response: SipResponse): void {
    if (this.state !== 'proceeding') return;
    const bytes = serializeMessage(response);
    this.lastResponse = bytes;
    this.transport.send(bytes, responsePeer(this.request, this.source));
    if (response.status < 200) return;
    const reliable = this.source.transport !== 'UDP';
    if (this.isInvite && response.status < 300) {
      // RFC 6026: stay to absorb retransmitted INVITEs (Timer L), the dialog resends the 2xx.
      this.state = 'accepted';
      this.timers.after(64 * this.sipTimers.t1Ms, () => this.terminate());
    } else if (this.isInvite) {
      this.state = 'completed';
      if (!reliable) this.retransmit(this.sipTimers.t1Ms);
      // Timer H: an ACK that never comes ends the transaction all the same.
      this.timers.after(64 * this.sipTimers.t1Ms, () => this.terminate());
    } else {
      this.state = 'completed';
      this.timers.after(reliable ? 0 : 64 * this.sipTimers.t1Ms, () => this.terminate());
    }
  }

  /** A retransmission of the request (or, for INVITE, its ACK) arrived. */
  receive(request: SipRequest): void {
    if (request.method === 'ACK') {
      if (this.state === 'completed') {
        this.state = 'confirmed';
        this.timers.clear();
        this.timers.after(this.source.transport === 'UDP' ? this.sipTimers.t4Ms : 0, () => this.terminate());
      }
      return;
    }
    if (this.lastResponse && (this.state === 'proceeding' || this.state === 'completed'))
      this.transport.send(this.lastResponse, responsePeer(this.request, this.source));
  }

  private retransmit(intervalMs: number): void {
    this.timers.after(intervalMs, () => {
      if (this.state !== 'completed' || !this.lastResponse) return;
      this.transport.send(this.lastResponse, responsePeer(this.request, this.source));
      this.retransmit(Math.min(intervalMs * 2, this.sipTimers.t2Ms));
    });
  }

  /** Ends the transaction now (also used at shutdown). */
  terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.timers.clear();
    this.onTerminated(this);
  }
}

/** The outcome of a request we sent: its final response, or a timeout / transport failure (with the transport's error). */
export type ClientOutcome = { readonly response: SipResponse } | { readonly timeout: true; readonly error?: Error };

/** One client non-INVITE transaction (BYE, CANCEL, REFER, INFO that we send). */
export class ClientTransaction {
  readonly branch: string;
  private readonly timers = new TimerSet();
  private done = false;
  private readonly bytes: Buffer;
  readonly outcome: Promise<ClientOutcome>;
  private settle!: (outcome: ClientOutcome) => void;

  constructor(
    request: SipRequest,
    private readonly peer: SipPeer,
    private readonly transport: TransactionTransport,
    private readonly sipTimers: SipTimers,
    private readonly onTerminated: (transaction: ClientTransaction) => void,
  ) {
    this.branch = parseVia(request.headers.get('Via') ?? '')?.branch ?? newBranch();
    this.bytes = serializeMessage(request);
    this.outcome = new Promise((resolve) => (this.settle = resolve));
  }

  /** Sends the request and starts Timers E and F. */
  start(): void {
    // A connection that cannot be made fails the request at once, not after Timer F.
    this.transport.send(this.bytes, this.peer, (error) => this.finish({ timeout: true, error }));
    if (this.peer.transport === 'UDP') this.retransmit(this.sipTimers.t1Ms);
    this.timers.after(64 * this.sipTimers.t1Ms, () => this.finish({ timeout: true }));
  }

  /** A response with this transaction's branch arrived. */
  receive(response: SipResponse): void {
    if (this.done || response.status < 200) return;
    this.finish({ response });
  }

  private retransmit(intervalMs: number): void {
    this.timers.after(intervalMs, () => {
      if (this.done) return;
      this.transport.send(this.bytes, this.peer);
      this.retransmit(Math.min(intervalMs * 2, this.sipTimers.t2Ms));
    });
  }

  private finish(outcome: ClientOutcome): void {
    if (this.done) return;
    this.done = true;
    this.timers.clear();
    this.settle(outcome);
    this.onTerminated(this);
  }

  /** Stops without an answer (shutdown). */
  terminate(): void {
    this.finish({ timeout: true });
  }
}
