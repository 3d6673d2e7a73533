/**
 * One call the gateway placed, once answered (the UAC dialog, RFC 3261 sections 12.1.2 and
 * 13.2.2.4): it acknowledges the 2xx (again for each retransmission of it), hangs up with
 * BYE, and takes the callee's BYE, INFO, OPTIONS and re-INVITE/UPDATE. Its route set is the
 * 2xx's Record-Route in reverse, its remote target the 2xx's Contact. Like the calls we
 * answer, its requests go back along the flow the INVITE went out on, addressed to the
 * remote target with the route set as Route headers. Its session timer (RFC 4028, in
 * session-timer.ts) refreshes the session or watches the callee's refreshes, and hangs up
 * when the session expires.
 */
import { EventEmitter } from 'node:events';
import type { DialogEndReason, SessionBody } from '../call/call-dialog.js';
import { AckWait } from './ack-wait.js';
import { ALLOW, bodyOf, type DialogHost } from './sip-dialog.js';
import { SessionTimer, type RefreshHost } from './session-timer.js';
import { contactValue, dialogRequest } from './sip-dialog-request.js';
import { parseNameAddress, q850Reason } from './sip-headers.js';
import { serializeMessage, type SipRequest, type SipResponse } from './sip-message.js';
import { cseqOf } from './sip-parser.js';
import { reofferReply } from './sip-reoffer.js';
import { buildResponse, responsePeer, type ServerTransaction } from './sip-transactions.js';
import type { SipPeer } from './sip-transport.js';

/** What an answered outbound call reports. */
export interface OutboundDialogEvents {
  /**
   * A re-INVITE or UPDATE from the callee; call `reply` with an answer body, or with a status
   * to refuse. Without a listener it is answered with our last session description, which
   * keeps the call's media as it is (a session refresh, or hold as the callee sees it). An
   * UPDATE without an offer is answered at once, without one.
   */
  reoffer: [offer: SessionBody | null, reply: (answer: SessionBody | number) => void];
  /** An INFO request (DTMF relay and others); it has been answered 200. */
  info: [request: SessionBody];
  /** The call is over: `bye` (the callee hung up), `hangup` (we did), `ack-timeout` or `shutdown`. */
  ended: [reason: DialogEndReason];
}

/** The tag parameter of a From or To value ('' without one). */
function tagOf(value: string): string {
  return parseNameAddress(value)?.params.get('tag') ?? '';
}

/** An answered call that we placed. */
export class OutboundDialog extends EventEmitter<OutboundDialogEvents> {
  readonly callId: string;
  readonly localTag: string;
  readonly remoteTag: string;
  /** The callee's Contact: where our requests are addressed. */
  readonly remoteTarget: string;
  /** The callee's answer in the 2xx. */
  readonly answer: SessionBody | null;
  private readonly local: string;
  private readonly remote: string;
  private readonly routeSet: readonly string[];
  private readonly inviteSeq: number;
  private localSeq: number;
  private remoteSeq: number | null = null;
  private state: 'confirmed' | 'ended' = 'confirmed';
  private ack: Buffer | null = null;
  private pendingAck: AckWait | null = null;
  private reofferPending = false;
  /** Our session description as last sent: the offer, or what answered a re-offer since. */
  private localBody: SessionBody;
  private readonly sessionTimer: SessionTimer;

  /**
   * @param invite the INVITE we sent
   * @param answer its 2xx, from the fork this dialog is with
   * @param peer where the INVITE went: the flow our requests take
   */
  constructor(
    private readonly host: DialogHost & RefreshHost,
    invite: SipRequest,
    answer: SipResponse,
    readonly peer: SipPeer,
  ) {
    super();
    this.callId = invite.headers.get('Call-ID')!;
    this.local = invite.headers.get('From')!;
    this.remote = answer.headers.get('To')!;
    this.localTag = tagOf(this.local);
    this.remoteTag = tagOf(this.remote);
    this.remoteTarget = parseNameAddress(answer.headers.get('Contact') ?? '')?.uri ?? invite.uri;
    this.routeSet = answer.headers.getAll('Record-Route').reverse();
    this.inviteSeq = cseqOf(invite).seq;
    this.localSeq = this.inviteSeq + 1;
    this.answer = bodyOf(answer);
    this.localBody = bodyOf(invite) ?? { contentType: 'application/sdp', body: Buffer.alloc(0) };
    this.sessionTimer = new SessionTimer(host, peer, invite, answer, {
      refreshRequest: (method, headers) => {
        const refresh = this.request(method, this.localSeq++);
        for (const [name, value] of [...this.targetHeaders(), ...headers]) refresh.headers.append(name, value);
        if (method === 'UPDATE') return refresh;
        refresh.headers.append('Content-Type', this.localBody.contentType);
        return { ...refresh, body: this.localBody.body };
      },
      ackRequest: (seq) => this.request('ACK', seq),
      busy: () => this.reofferPending || this.pendingAck !== null,
      expire: (reason) => void this.hangup(reason),
    });
  }

  /** The dialog's key in the endpoint: Call-ID, our tag, the callee's tag. */
  get key(): string {
    return `${this.callId}|${this.localTag}|${this.remoteTag}`;
  }

  get ended(): boolean {
    return this.state === 'ended';
  }

  /** Sends the ACK of the 2xx; again for each retransmission of it (section 13.2.2.4). */
  acknowledge(): void {
    // The ACK of a 2xx is a transaction of its own: a new branch, the INVITE's CSeq number.
    this.ack ??= serializeMessage(this.request('ACK', this.inviteSeq));
    this.host.sendRaw(this.ack, this.peer);
  }

  /** Hangs up: BYE (with `reason` in an RFC 3326 Reason header); resolves once it is answered or timed out. */
  async hangup(reason?: string): Promise<void> {
    if (this.state === 'ended') return;
    this.end('hangup');
    const bye = this.request('BYE', this.localSeq++);
    if (reason) bye.headers.append('Reason', q850Reason(reason));
    await this.host.request(bye, this.peer);
  }

  /** Ends the call at shutdown: one BYE, not retransmitted nor awaited (the sockets close next). */
  abandon(): void {
    if (this.state === 'ended') return;
    this.end('shutdown');
    this.host.sendRaw(serializeMessage(this.request('BYE', this.localSeq++)), this.peer);
  }

  /** The endpoint routes the callee's in-dialog requests here. */
  handleRequest(request: SipRequest, transaction: ServerTransaction | null): void {
    const { seq } = cseqOf(request);
    if (request.method === 'ACK') {
      const wait = this.pendingAck;
      if (wait?.matches(request, seq)) {
        this.pendingAck = null;
        wait.arrived(request);
      }
      return;
    }
    if (!transaction) return;
    if (this.state === 'ended') return transaction.respond(buildResponse(request, 481, transaction.source));
    // The callee's CSeq numbers start wherever it likes; from then on they only grow.
    if (this.remoteSeq !== null && seq < this.remoteSeq) {
      return transaction.respond(buildResponse(request, 500, transaction.source, { reason: 'Out of order CSeq' }));
    }
    this.remoteSeq = Math.max(this.remoteSeq ?? 0, seq);
    switch (request.method) {
      case 'BYE':
        transaction.respond(buildResponse(request, 200, transaction.source));
        this.end('bye');
        return;
      case 'INFO':
        transaction.respond(buildResponse(request, 200, transaction.source));
        this.emit('info', bodyOf(request) ?? { contentType: '', body: Buffer.alloc(0) });
        return;
      case 'INVITE':
      case 'UPDATE':
        return this.reoffer(request, transaction);
      case 'OPTIONS':
        transaction.respond(buildResponse(request, 200, transaction.source, { headers: [['Allow', ALLOW]] }));
        return;
      default:
        transaction.respond(buildResponse(request, 405, transaction.source, { headers: [['Allow', ALLOW]] }));
    }
  }

  private reoffer(request: SipRequest, transaction: ServerTransaction): void {
    // An UPDATE without an offer changes no media (RFC 3311; a session refresh): its 200 has no body.
    if (request.method === 'UPDATE' && request.body.length === 0) {
      return transaction.respond(this.ok(request, { contentType: '', body: Buffer.alloc(0) }, transaction.source));
    }
    if (this.reofferPending || this.pendingAck || this.sessionTimer.reinviting) {
      return transaction.respond(buildResponse(request, 491, transaction.source));
    }
    this.reofferPending = true;
    const reply = reofferReply(request, transaction, {
      isOver: () => this.ended,
      ok: (answered, body) => {
        this.localBody = body;
        return this.ok(answered, body, transaction.source);
      },
      awaitAck: (response, seq) => this.awaitAck(response, responsePeer(request, transaction.source), seq),
      settled: () => (this.reofferPending = false),
    });
    if (this.listenerCount('reoffer') === 0) reply(this.localBody);
    else this.emit('reoffer', bodyOf(request), reply);
  }

  /** A 2xx to a re-INVITE or UPDATE, which refreshes the session: the body, our Contact (a target refresh needs it). */
  private ok(request: SipRequest, body: SessionBody, source: SipPeer): SipResponse {
    const headers = [...this.targetHeaders(), ...this.sessionTimer.refreshedByCallee(request)];
    if (body.body.length > 0) headers.push(['Content-Type', body.contentType]);
    return buildResponse(request, 200, source, { headers, body: body.body });
  }

  /** Our Contact and Allow, which target refresh requests and their 2xx carry. */
  private targetHeaders(): Array<[string, string]> {
    return [
      ['Contact', contactValue(this.host.contactFor(this.peer.transport), this.peer.transport)],
      ['Allow', ALLOW],
    ];
  }

  /** Resends a re-INVITE's 2xx to `to` until its ACK comes (over UDP, as the calls we answer do). */
  private awaitAck(response: SipResponse, to: SipPeer, seq: number): void {
    const bytes = serializeMessage(response);
    const resend = to.transport === 'UDP' ? () => this.host.sendRaw(bytes, to) : null;
    const wait = new AckWait(seq, this.host.timers, resend, () => {
      if (this.pendingAck === wait) this.pendingAck = null;
      // As with the calls we answer: a 2xx nobody acknowledges means the other side is gone.
      if (this.state === 'ended') return;
      this.end('ack-timeout');
      void this.host.request(this.request('BYE', this.localSeq++), this.peer);
    });
    wait.acked.catch(() => undefined);
    this.pendingAck = wait;
  }

  private request(method: string, seq: number): SipRequest {
    return dialogRequest(
      {
        callId: this.callId,
        local: this.local,
        remote: this.remote,
        remoteTarget: this.remoteTarget,
        routeSet: this.routeSet,
        transport: this.peer.transport,
        via: this.host.contactFor(this.peer.transport),
      },
      method,
      seq,
    );
  }

  private end(reason: DialogEndReason): void {
    if (this.state === 'ended') return;
    this.state = 'ended';
    this.sessionTimer.stop();
    this.pendingAck?.stop(new Error(`the call ended (${reason})`));
    this.pendingAck = null;
    this.host.release(this);
    this.emit('ended', reason);
  }
}
