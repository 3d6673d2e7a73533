/**
 * One incoming call's SIP side (the UAS dialog, RFC 3261 sections 12–15): answers the
 * INVITE (180, 183 with early media, 200 retransmitted until the ACK), takes BYE, CANCEL,
 * re-INVITE/UPDATE (hold, codec change, refresh) and INFO from the caller, and sends BYE
 * itself. Everything the call needs to know arrives as typed events.
 */
import { EventEmitter } from 'node:events';
import type { CallDialog, CallDialogEvents, DialogEndReason, SessionBody } from '../call/call-dialog.js';
import { newBranch, parseNameAddress, sipHost, type NameAddress } from './sip-headers.js';
import { serializeMessage, SipHeaders, type SipRequest, type SipResponse } from './sip-message.js';
import { cseqOf } from './sip-parser.js';
import { buildResponse, responsePeer, type ServerTransaction, type SipTimers } from './sip-transactions.js';
import type { SipPeer } from './sip-transport.js';

/** What the dialog needs from the endpoint that owns it. */
export interface DialogHost {
  readonly timers: SipTimers;
  /** Our address for Via and Contact, per transport. */
  contactFor(transport: SipPeer['transport']): { host: string; port: number };
  sendRaw(data: Buffer, peer: SipPeer): void;
  /** Sends an in-dialog request and waits for its final response (or a timeout). */
  request(request: SipRequest, peer: SipPeer): Promise<SipResponse | null>;
  /** Forgets a finished dialog. */
  release(dialog: SipDialog): void;
}

/** The methods the gateway takes (Allow header). */
export const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE';

/** The UAS side of one call. */
export class SipDialog extends EventEmitter<CallDialogEvents> implements CallDialog {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  readonly from: NameAddress;
  readonly to: NameAddress;
  /** The INVITE's Request-URI user part: the number that was called. */
  readonly calledUser: string | null;
  private state: 'early' | 'confirmed' | 'ended' = 'early';
  private localSeq = 1;
  private remoteSeq: number;
  private readonly routeSet: string[];
  /** The 2xx being retransmitted until its ACK, with the timers doing it. */
  private pendingAck: { bytes: Buffer; timers: NodeJS.Timeout[]; resolve: (ack: SipRequest) => void; reject: (error: Error) => void } | null = null;
  private reofferPending = false;
  /** The CSeq of the INVITE whose 2xx awaits its ACK. */
  private ackSeq = 0;

  constructor(
    readonly invite: SipRequest,
    readonly source: SipPeer,
    private readonly transaction: ServerTransaction,
    private readonly host: DialogHost,
    localTag: string,
    calledUser: string | null,
  ) {
    super();
    this.callId = invite.headers.get('Call-ID')!;
    this.localTag = localTag;
    this.from = parseNameAddress(invite.headers.get('From')!)!;
    this.to = parseNameAddress(invite.headers.get('To')!)!;
    this.remoteTag = this.from.params.get('tag') ?? '';
    this.calledUser = calledUser;
    this.remoteSeq = cseqOf(invite).seq;
    this.routeSet = invite.headers.getAll('Record-Route');
  }

  /** The dialog's key in the endpoint: Call-ID, our tag, their tag. */
  get key(): string {
    return `${this.callId}|${this.localTag}|${this.remoteTag}`;
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  get callerUri(): string {
    return this.from.uri;
  }

  /** The caller's offer in the INVITE, if it made one. */
  get offer(): SessionBody | null {
    return bodyOf(this.invite);
  }

  /** 180 Ringing. */
  ring(): void {
    this.provisional(180);
  }

  /** 183 Session Progress with an answer, so the caller hears early media. */
  progress(answer: SessionBody): void {
    this.provisional(183, answer);
  }

  private provisional(status: number, body?: SessionBody): void {
    if (this.state !== 'early' || this.transaction.answered) return;
    this.transaction.respond(this.response(this.invite, status, body));
  }

  /**
   * 200 OK with our answer (or our offer, when the INVITE had none). Resolves with the ACK,
   * whose body is the caller's answer in the second case; rejects when no ACK comes within
   * 64 × T1 (the caller is then sent BYE).
   */
  async accept(body: SessionBody): Promise<SessionBody | null> {
    if (this.state !== 'early' || this.transaction.answered) throw new Error('the call was already answered or is over');
    this.state = 'confirmed';
    const response = this.response(this.invite, 200, body);
    this.transaction.respond(response);
    return bodyOf(await this.awaitAck(response, this.transaction.source));
  }

  /** Refuses the call with a final status (486, 488, 603, …). */
  reject(status: number, headers: Iterable<readonly [string, string]> = []): void {
    if (this.state !== 'early' || this.transaction.answered) return;
    this.transaction.respond(buildResponse(this.invite, status, this.source, { toTag: this.localTag, headers }));
    this.end('rejected');
  }

  /** Ends the call from our side: BYE when answered, 480 when it was still ringing. */
  async hangup(): Promise<void> {
    if (this.state === 'ended') return;
    if (this.state === 'early') {
      this.transaction.respond(buildResponse(this.invite, 480, this.source, { toTag: this.localTag, reason: 'Temporarily Unavailable' }));
      this.end('hangup');
      return;
    }
    this.end('hangup');
    await this.host.request(this.buildRequest('BYE'), this.nextHop());
  }

  /** The endpoint routes an in-dialog request here. */
  handleRequest(request: SipRequest, transaction: ServerTransaction | null): void {
    if (request.method === 'ACK') {
      if (this.pendingAck && cseqOf(request).seq === this.ackSeq) this.ackArrived(request);
      return;
    }
    if (!transaction) return;
    const { seq } = cseqOf(request);
    if (seq < this.remoteSeq && request.method !== 'CANCEL') {
      transaction.respond(buildResponse(request, 500, transaction.source, { reason: 'Out of order CSeq' }));
      return;
    }
    this.remoteSeq = Math.max(this.remoteSeq, seq);
    switch (request.method) {
      case 'BYE':
        transaction.respond(this.response(request, 200));
        this.emit('bye');
        this.end('bye');
        return;
      case 'INVITE':
      case 'UPDATE':
        return this.reoffer(request, transaction);
      case 'INFO':
        transaction.respond(this.response(request, 200));
        this.emit('info', bodyOf(request) ?? { contentType: '', body: Buffer.alloc(0) });
        return;
      case 'OPTIONS':
        transaction.respond(
          this.response(request, 200, undefined, [
            ['Allow', ALLOW],
            ['Accept', 'application/sdp'],
          ]),
        );
        return;
      default:
        transaction.respond(buildResponse(request, 405, transaction.source, { headers: [['Allow', ALLOW]] }));
    }
  }

  /** The caller cancelled: 487 to the INVITE when it is still unanswered. */
  cancelled(): boolean {
    if (this.state !== 'early' || this.transaction.answered) return false;
    this.transaction.respond(buildResponse(this.invite, 487, this.source, { toTag: this.localTag }));
    this.emit('cancel');
    this.end('cancel');
    return true;
  }

  /** Ends the dialog without signalling (the endpoint is shutting down). */
  abandon(): void {
    this.end('shutdown');
  }

  private reoffer(request: SipRequest, transaction: ServerTransaction): void {
    if (this.state !== 'confirmed' || this.reofferPending || this.pendingAck) {
      transaction.respond(buildResponse(request, 491, transaction.source));
      return;
    }
    this.reofferPending = true;
    // The application may take a moment to answer; stop the caller's retransmissions now.
    if (request.method === 'INVITE') transaction.respond(buildResponse(request, 100, transaction.source));
    let replied = false;
    const reply = (answer: SessionBody | number): void => {
      if (replied || this.state === 'ended') return;
      replied = true;
      this.reofferPending = false;
      if (typeof answer === 'number') {
        transaction.respond(buildResponse(request, answer, transaction.source));
        return;
      }
      const response = this.response(request, 200, answer);
      transaction.respond(response);
      // A re-INVITE's 2xx is retransmitted until its ACK like the first one; UPDATE has none.
      if (request.method === 'INVITE') void this.awaitAck(response, transaction.source, cseqOf(request).seq).catch(() => undefined);
    };
    if (this.listenerCount('reoffer') === 0) reply(488);
    else this.emit('reoffer', bodyOf(request), reply);
  }

  private awaitAck(response: SipResponse, peer: SipPeer, seq = cseqOf(this.invite).seq): Promise<SipRequest> {
    this.ackSeq = seq;
    const bytes = serializeMessage(response);
    return new Promise((resolve, reject) => {
      const timers: NodeJS.Timeout[] = [];
      this.pendingAck = { bytes, timers, resolve, reject };
      // Section 13.3.1.4: T1, doubling up to T2, for 64 × T1 — over every transport, since
      // a proxy on the way may be stateless.
      const resend = (interval: number): void => {
        const timer = setTimeout(() => {
          this.host.sendRaw(bytes, responsePeer(this.invite, peer));
          resend(Math.min(interval * 2, this.host.timers.t2Ms));
        }, interval);
        timer.unref();
        timers.push(timer);
      };
      if (peer.transport === 'UDP') resend(this.host.timers.t1Ms);
      const giveUp = setTimeout(() => {
        this.clearPendingAck()?.reject(new Error('no ACK for the 2xx'));
        void this.hangupAfterMissingAck();
      }, 64 * this.host.timers.t1Ms);
      giveUp.unref();
      timers.push(giveUp);
    });
  }

  private async hangupAfterMissingAck(): Promise<void> {
    if (this.state === 'ended') return;
    this.end('ack-timeout');
    await this.host.request(this.buildRequest('BYE'), this.nextHop());
  }

  private ackArrived(ack: SipRequest): void {
    this.clearPendingAck()?.resolve(ack);
  }

  private clearPendingAck(): { resolve: (ack: SipRequest) => void; reject: (error: Error) => void } | null {
    const pending = this.pendingAck;
    if (!pending) return null;
    for (const timer of pending.timers) clearTimeout(timer);
    this.pendingAck = null;
    return pending;
  }

  private response(request: SipRequest, status: number, body?: SessionBody, headers: Array<[string, string]> = []): SipResponse {
    const contact = this.host.contactFor(this.source.transport);
    const extra: Array<[string, string]> = [...headers];
    if (status >= 101 && status < 300 && (request.method === 'INVITE' || request.method === 'UPDATE')) {
      extra.push([
        'Contact',
        `<sip:${sipHost(contact.host)}:${contact.port}${this.source.transport === 'UDP' ? '' : `;transport=${this.source.transport.toLowerCase()}`}>`,
      ]);
      if (request === this.invite) for (const route of this.routeSet) extra.push(['Record-Route', route]);
      extra.push(['Allow', ALLOW]);
    }
    if (body) extra.push(['Content-Type', body.contentType]);
    return buildResponse(request, status, this.transaction.source, { toTag: this.localTag, headers: extra, ...(body ? { body: body.body } : {}) });
  }

  /** An in-dialog request from us (section 12.2.1.1). */
  private buildRequest(method: string): SipRequest {
    const contact = this.host.contactFor(this.source.transport);
    const remote = parseNameAddress(this.invite.headers.get('Contact') ?? '')?.uri ?? this.from.uri;
    const headers = new SipHeaders()
      .append('Via', `SIP/2.0/${this.source.transport} ${sipHost(contact.host)}:${contact.port};branch=${newBranch()};rport`)
      .append('Max-Forwards', '70');
    for (const route of this.routeSet) headers.append('Route', route);
    headers
      .append('From', `${this.invite.headers.get('To')!.replace(/;\s*tag=[^;]*/i, '')};tag=${this.localTag}`)
      .append('To', this.invite.headers.get('From')!)
      .append('Call-ID', this.callId)
      .append('CSeq', `${this.localSeq++} ${method}`);
    return { kind: 'request', method, uri: remote, headers, body: Buffer.alloc(0) };
  }

  /**
   * Where our in-dialog requests go: back along the flow the INVITE came on. A trunk behind
   * NAT often puts a private address in its Contact; the flow is what reaches it.
   */
  private nextHop(): SipPeer {
    return responsePeer(this.invite, this.source);
  }

  private end(reason: DialogEndReason): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.clearPendingAck()?.reject(new Error(`the call ended (${reason})`));
    this.host.release(this);
    this.emit('ended', reason);
  }
}

/** The body of a request with its Content-Type, or null when it has none. */
export function bodyOf(message: SipRequest | SipResponse): SessionBody | null {
  if (message.body.length === 0) return null;
  return { contentType: (message.headers.get('Content-Type') ?? 'application/octet-stream').split(';')[0]!.trim().toLowerCase(), body: message.body };
}
