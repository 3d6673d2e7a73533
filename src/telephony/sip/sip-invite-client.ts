/**
 * The INVITE client transaction (RFC 3261 section 17.1.1, with RFC 6026's Accepted state).
 * It sends the INVITE and, over UDP, sends it again after T1, 2 × T1, 4 × T1… (Timer A) until
 * a response comes; with none after 64 × T1 (Timer B) the target is unreachable. Provisional
 * responses and every 2xx (retransmissions and forks too) are passed up: acknowledging a 2xx
 * is the dialog's job. A final response of 300 or more is acknowledged here, on the INVITE's
 * own branch, passed up once, and acknowledged again whenever it is retransmitted, until
 * Timer D ends the transaction. It also makes the INVITE's CANCEL (section 9.1).
 */
import { parseVia } from './sip-headers.js';
import { serializeMessage, SipHeaders, type SipRequest, type SipResponse } from './sip-message.js';
import { cseqOf } from './sip-parser.js';
import type { SipTimers, TransactionTransport } from './sip-transactions.js';
import type { SipPeer } from './sip-transport.js';
import { TimerSet } from './timer-set.js';

/** What the transaction tells the one who placed the call. */
export interface InviteClientUser {
  /** A 1xx response. */
  provisional(response: SipResponse): void;
  /** A 2xx response: the first one, and each retransmission or fork after it. */
  accepted(response: SipResponse): void;
  /** The final response of 300 or more, once; it has been acknowledged already. */
  rejected(response: SipResponse): void;
  /** No response at all within Timer B, or the transport could not send the INVITE. */
  unreachable(): void;
  /** The transaction is over: its responses are no longer matched. */
  terminated(): void;
}

type State = 'calling' | 'proceeding' | 'accepted' | 'completed' | 'terminated';

/** One INVITE that we sent. */
export class InviteClientTransaction {
  readonly branch: string;
  private state: State = 'calling';
  private readonly timers = new TimerSet();
  private readonly bytes: Buffer;
  /** The ACK of the non-2xx final response, sent again for each of its retransmissions. */
  private ack: Buffer | null = null;

  constructor(
    readonly invite: SipRequest,
    readonly peer: SipPeer,
    private readonly transport: TransactionTransport,
    private readonly sipTimers: SipTimers,
    private readonly user: InviteClientUser,
  ) {
    this.branch = parseVia(invite.headers.get('Via') ?? '')?.branch ?? '';
    this.bytes = serializeMessage(invite);
  }

  /** Whether a provisional response came and no final one yet: the only time a CANCEL may go. */
  get proceeding(): boolean {
    return this.state === 'proceeding';
  }

  /** Sends the INVITE and starts Timers A and B. */
  start(): void {
    this.send(this.bytes);
    if (this.peer.transport === 'UDP') this.retransmit(this.sipTimers.t1Ms);
    this.timers.after(64 * this.sipTimers.t1Ms, () => this.unreachable());
  }

  /** A response with this transaction's branch and method. */
  receive(response: SipResponse): void {
    const answering = this.state === 'calling' || this.state === 'proceeding';
    if (response.status < 200) {
      if (!answering) return;
      if (this.state === 'calling') this.timers.clear();
      this.state = 'proceeding';
      this.user.provisional(response);
    } else if (response.status < 300) {
      if (answering) {
        this.timers.clear();
        this.state = 'accepted';
        // Timer M (RFC 6026): long enough for the callee's 2xx retransmissions and forks.
        this.timers.after(64 * this.sipTimers.t1Ms, () => this.terminate());
      }
      if (this.state === 'accepted') this.user.accepted(response);
    } else if (answering) {
      this.timers.clear();
      this.state = 'completed';
      this.ack = serializeMessage(this.echo('ACK', response.headers.get('To')!));
      this.send(this.ack);
      // Timer D: 32 s over UDP (64 × T1 with the default T1) for retransmitted finals; none over streams.
      this.timers.after(this.peer.transport === 'UDP' ? 64 * this.sipTimers.t1Ms : 0, () => this.terminate());
      this.user.rejected(response);
    } else if (this.state === 'completed' && this.ack) {
      this.send(this.ack);
    }
  }

  /** The INVITE's CANCEL: its Request-URI, Via (branch), Route, From, To, Call-ID and CSeq number. */
  cancelRequest(): SipRequest {
    return this.echo('CANCEL', this.invite.headers.get('To')!);
  }

  /** Ends the transaction now (a CANCEL that got no final answer, or shutdown). */
  terminate(): void {
    if (this.state === 'terminated') return;
    this.state = 'terminated';
    this.timers.clear();
    this.user.terminated();
  }

  /** A request that repeats the INVITE's addressing: the ACK of a non-2xx (17.1.1.3) or the CANCEL (9.1). */
  private echo(method: 'ACK' | 'CANCEL', to: string): SipRequest {
    const headers = new SipHeaders().append('Via', this.invite.headers.get('Via')!).append('Max-Forwards', '70');
    for (const route of this.invite.headers.getAll('Route')) headers.append('Route', route);
    headers
      .append('From', this.invite.headers.get('From')!)
      .append('To', to)
      .append('Call-ID', this.invite.headers.get('Call-ID')!)
      .append('CSeq', `${cseqOf(this.invite).seq} ${method}`);
    return { kind: 'request', method, uri: this.invite.uri, headers, body: Buffer.alloc(0) };
  }

  private unreachable(): void {
    if (this.state !== 'calling' && this.state !== 'proceeding') return;
    this.user.unreachable();
    this.terminate();
  }

  private send(bytes: Buffer): void {
    // A stream that cannot connect is as unreachable as a silent datagram, only sooner.
    this.transport.send(bytes, this.peer, () => {
      if (this.state === 'calling') this.unreachable();
    });
  }

  private retransmit(intervalMs: number): void {
    this.timers.after(intervalMs, () => {
      if (this.state !== 'calling') return;
      this.send(this.bytes);
      this.retransmit(intervalMs * 2);
    });
  }
}
