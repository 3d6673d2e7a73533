/**
 * One incoming call's SIP side (the UAS dialog, RFC 3261 sections 12–15): answers the
 * INVITE (180, 183 with early media, 200 retransmitted until the ACK), takes BYE, CANCEL,
 * re-INVITE/UPDATE (hold, codec change, refresh) and INFO from the caller, sends BYE itself,
 * and transfers the caller blind (REFER, RFC 3515, its progress read from the caller's
 * NOTIFYs). Everything the call needs to know arrives as typed events.
 */
import { EventEmitter } from 'node:events';
import type { CallDialog, CallDialogEvents, DialogEndReason, ReferOptions, ReferOutcome, SessionBody } from '../call/call-dialog.js';
import { AckWait } from './ack-wait.js';
import { checkedExtraHeaders } from './extra-headers.js';
import { DEFAULT_REFER_TIMEOUT_MS, readReferNotify, ReferProgress, referredByValue, referToValue } from './refer-progress.js';
import { contactValue, dialogRequest } from './sip-dialog-request.js';
import { parseNameAddress, q850Reason, type NameAddress } from './sip-headers.js';
import { serializeMessage, type SipRequest, type SipResponse } from './sip-message.js';
import { cseqOf } from './sip-parser.js';
import { reofferReply } from './sip-reoffer.js';
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
  /** Forgets a finished dialog (by its key). */
  release(dialog: { readonly key: string }): void;
}

/**
 * The methods the gateway takes (Allow header). REFER is ours to send (a caller's is
 * declined); NOTIFY reports on the transfers we asked for.
 */
export const ALLOW = 'INVITE, ACK, CANCEL, BYE, OPTIONS, INFO, UPDATE, REFER, NOTIFY';

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
  /** The 2xx being retransmitted until its ACK. */
  private pendingAck: AckWait | null = null;
  private reofferPending = false;
  /** The blind transfer under way, if any. */
  private referral: ReferProgress | null = null;
  /** Whether we ever sent a REFER: a NOTIFY is only expected then. */
  private referred = false;

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

  /**
   * Ends the call from our side: BYE when answered (with `reason` in an RFC 3326 Reason
   * header), 480 when it was still ringing.
   */
  async hangup(reason?: string): Promise<void> {
    if (this.state === 'ended') return;
    if (this.state === 'early') {
      this.transaction.respond(buildResponse(this.invite, 480, this.source, { toTag: this.localTag, reason: 'Temporarily Unavailable' }));
      this.end('hangup');
      return;
    }
    this.end('hangup');
    const bye = this.buildRequest('BYE');
    if (reason) bye.headers.append('Reason', q850Reason(reason));
    await this.host.request(bye, this.nextHop());
  }

  /**
   * Asks the caller's side to call `target` (REFER, RFC 3515) and follows its NOTIFYs. The
   * REFER is an in-dialog request with Refer-To, Referred-By (our URI unless `referredBy`)
   * and the extra headers; one transfer at a time.
   * @throws RangeError when `target` is not a SIP URI or a header is refused; Error while
   *   another REFER of this dialog is under way
   */
  async refer(target: string, options: ReferOptions = {}, signal?: AbortSignal): Promise<ReferOutcome> {
    const referTo = referToValue(target);
    const referredBy = referredByValue(options.referredBy ?? this.to.uri);
    const extra = checkedExtraHeaders(options.headers, ['Refer-To', 'Referred-By']);
    if (this.state !== 'confirmed') return { result: 'refused', status: null };
    if (this.referral) throw new Error('a REFER of this call is already under way');
    const request = this.buildRequest('REFER');
    request.headers
      .append('Contact', contactValue(this.host.contactFor(this.source.transport), this.source.transport))
      .append('Refer-To', referTo)
      .append('Referred-By', referredBy);
    for (const [name, value] of extra) request.headers.append(name, value);
    const progress = new ReferProgress(options.timeoutMs ?? DEFAULT_REFER_TIMEOUT_MS, signal, String(cseqOf(request).seq));
    this.referral = progress;
    this.referred = true;
    void this.host.request(request, this.nextHop()).then((response) => progress.answered(response?.status ?? null));
    try {
      return await progress.outcome;
    } finally {
      this.referral = null;
      // A subscription can outlive the call (RFC 6665 section 4.5.2): the dialog stayed known
      // for its NOTIFYs until now.
      if (this.ended) this.host.release(this);
    }
  }

  /** The endpoint routes an in-dialog request here. */
  handleRequest(request: SipRequest, transaction: ServerTransaction | null): void {
    if (request.method === 'ACK') {
      const wait = this.pendingAck;
      if (wait?.matches(request, cseqOf(request).seq)) {
        this.pendingAck = null;
        wait.arrived(request);
      }
      return;
    }
    if (!transaction) return;
    // Over, but kept for a transfer's NOTIFYs: nothing else belongs here any more.
    if (this.state === 'ended' && request.method !== 'NOTIFY') {
      transaction.respond(buildResponse(request, 481, transaction.source));
      return;
    }
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
      case 'NOTIFY':
        return this.notified(request, transaction);
      case 'REFER':
        // Being transferred away by the caller is not something a gateway call does.
        transaction.respond(this.response(request, 603));
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
    this.referral?.stop();
  }

  /** A NOTIFY: progress of a transfer we asked for (RFC 3515 section 2.4.5), answered 200. */
  private notified(request: SipRequest, transaction: ServerTransaction): void {
    const notify = readReferNotify(request.headers.get('Event'), request.headers.get('Subscription-State'), request.body.toString('utf8'));
    if (!notify) {
      transaction.respond(buildResponse(request, 489, transaction.source, { reason: 'Bad Event', headers: [['Allow-Events', 'refer']] }));
      return;
    }
    // RFC 6665 section 4.1.3: a NOTIFY that matches no subscription of ours gets 481.
    if (!this.referred) {
      transaction.respond(buildResponse(request, 481, transaction.source));
      return;
    }
    transaction.respond(this.response(request, 200));
    this.referral?.notified(notify);
  }

  private reoffer(request: SipRequest, transaction: ServerTransaction): void {
    if (this.state !== 'confirmed' || this.reofferPending || this.pendingAck) {
      transaction.respond(buildResponse(request, 491, transaction.source));
      return;
    }
    this.reofferPending = true;
    const reply = reofferReply(request, transaction, {
      isOver: () => this.ended,
      ok: (answered, body) => this.response(answered, 200, body),
      awaitAck: (response, seq) => void this.awaitAck(response, transaction.source, seq).catch(() => undefined),
      settled: () => (this.reofferPending = false),
    });
    if (this.listenerCount('reoffer') === 0) reply(488);
    else this.emit('reoffer', bodyOf(request), reply);
  }

  private awaitAck(response: SipResponse, peer: SipPeer, seq = cseqOf(this.invite).seq): Promise<SipRequest> {
    const bytes = serializeMessage(response);
    const resend = peer.transport === 'UDP' ? () => this.host.sendRaw(bytes, responsePeer(this.invite, peer)) : null;
    const wait = new AckWait(seq, this.host.timers, resend, () => {
      if (this.pendingAck === wait) this.pendingAck = null;
      void this.hangupAfterMissingAck();
    });
    this.pendingAck = wait;
    return wait.acked;
  }

  private async hangupAfterMissingAck(): Promise<void> {
    if (this.state === 'ended') return;
    this.end('ack-timeout');
    await this.host.request(this.buildRequest('BYE'), this.nextHop());
  }

  private response(request: SipRequest, status: number, body?: SessionBody, headers: Array<[string, string]> = []): SipResponse {
    const extra: Array<[string, string]> = [...headers];
    if (status >= 101 && status < 300 && (request.method === 'INVITE' || request.method === 'UPDATE')) {
      extra.push(['Contact', contactValue(this.host.contactFor(this.source.transport), this.source.transport)]);
      if (request === this.invite) for (const route of this.routeSet) extra.push(['Record-Route', route]);
      extra.push(['Allow', ALLOW]);
    }
    if (body) extra.push(['Content-Type', body.contentType]);
    return buildResponse(request, status, this.transaction.source, { toTag: this.localTag, headers: extra, ...(body ? { body: body.body } : {}) });
  }

  /** An in-dialog request from us (section 12.2.1.1). */
  private buildRequest(method: string): SipRequest {
    return dialogRequest(
      {
        callId: this.callId,
        local: `${this.invite.headers.get('To')!.replace(/;\s*tag=[^;]*/i, '')};tag=${this.localTag}`,
        remote: this.invite.headers.get('From')!,
        remoteTarget: parseNameAddress(this.invite.headers.get('Contact') ?? '')?.uri ?? this.from.uri,
        routeSet: this.routeSet,
        transport: this.source.transport,
        via: this.host.contactFor(this.source.transport),
      },
      method,
      this.localSeq++,
    );
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
    this.pendingAck?.stop(new Error(`the call ended (${reason})`));
    this.pendingAck = null;
    // A transfer under way keeps the dialog known for its NOTIFYs; `refer` releases it then.
    if (!this.referral) this.host.release(this);
    this.emit('ended', reason);
  }
}

/** The body of a request with its Content-Type, or null when it has none. */
export function bodyOf(message: SipRequest | SipResponse): SessionBody | null {
  if (message.body.length === 0) return null;
  return { contentType: (message.headers.get('Content-Type') ?? 'application/octet-stream').split(';')[0]!.trim().toLowerCase(), body: message.body };
}
