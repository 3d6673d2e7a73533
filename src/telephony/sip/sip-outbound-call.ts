/**
 * A call the gateway places (the UAC side of RFC 3261 sections 8.1 and 13.2): the INVITE with
 * our offer, from our caller ID to the target, through an INVITE client transaction; 180/183
 * reported as progress; the first 2xx made a dialog and acknowledged; a final refusal reported
 * with its status. It gives up when the ring timeout passes or the caller's signal aborts:
 * with CANCEL once a provisional response came (section 9.1 allows none before), then waiting
 * for the 487; without one, the INVITE is left to its transaction, which cancels it should a
 * provisional response still come, and hangs up a 2xx that comes too late.
 */
import net from 'node:net';
import type { SessionBody } from '../call/call-dialog.js';
import { chooseChallenge, digestAuthorization, type DigestCredentials } from './digest.js';
import { checkedExtraHeaders } from './extra-headers.js';
import { ALLOW, bodyOf, type DialogHost } from './sip-dialog.js';
import { contactValue } from './sip-dialog-request.js';
import { newBranch, newCallId, newTag, parseNameAddress, parseSipUri, sipHost } from './sip-headers.js';
import type { InviteClientTransaction, InviteClientUser } from './sip-invite-client.js';
import { cseqOf } from './sip-parser.js';
import { serializeMessage, SipHeaders, type SipRequest, type SipResponse } from './sip-message.js';
import { OutboundDialog } from './sip-outbound-dialog.js';
import { askForSessionTimer, checkedSessionInterval, raisedAfter422 } from './session-timer.js';
import { peerForUri, withTlsCa } from './sip-target.js';
import type { SipPeer } from './sip-transport.js';
import { TimerSet } from './timer-set.js';

/** A call to place. */
export interface OutboundCallRequest {
  /** The SIP URI to call, e.g. `sip:+41441234567@10.0.0.5:5060;transport=tcp`. */
  readonly target: string;
  /** Where to send the INVITE; by default the target URI's host (looked up), port and transport. */
  readonly peer?: SipPeer;
  /** Our From: a URI, or a name-addr with a display name (the caller ID the target sees). */
  readonly from: string;
  /** Extra headers (Diversion, X-…); header names the stack writes are refused. */
  readonly headers?: ReadonlyArray<readonly [string, string]>;
  /** Our offer. */
  readonly offer: SessionBody;
  /** When no final answer came by then, the call is cancelled and fails with `timeout`. */
  readonly ringTimeoutMs: number;
  /** The Call-ID to use (the caller knows the call by it before the answer); a new one unless given. */
  readonly callId?: string;
  /** Each 1xx above 100 (180 Ringing, 183 with early-media SDP). */
  readonly onProgress?: (status: number, body: SessionBody | null) => void;
  /**
   * The account to answer a 401 or 407 with (a trunk's): the INVITE is sent again once with
   * the digest answer; without it, or when the answer is challenged again, the call fails
   * with that status.
   */
  readonly credentials?: DigestCredentials & { readonly realm?: string | null };
  /**
   * Over TLS, the CAs (PEM) the first hop's certificate must chain to, in place of the public
   * roots (a trunk's `tls_ca_file`); the requests of the call's dialog go the same way.
   */
  readonly tlsCa?: string;
  /**
   * The session interval to ask for (RFC 4028), in seconds: at least 90, or 0 for no session
   * timer; 1800 unless given. The callee's answer sets the interval and who refreshes.
   */
  readonly sessionExpiresS?: number;
}

/**
 * How placing a call ended: answered, with the callee's dialog and its answer; or failed, with
 * the final status (486, 603…), `timeout` (the ring timeout passed while it rang: cancelled),
 * `cancelled` (the signal aborted, or the endpoint closed) or `unreachable` (nothing answered
 * at all, not even 100 Trying, within the ring timeout or Timer B; the host name did not
 * resolve; or the transport could not connect).
 */
export type OutboundCallResult =
  { readonly answered: OutboundDialog; readonly answer: SessionBody | null } | { readonly failed: number | 'timeout' | 'cancelled' | 'unreachable' };

/** What placing a call needs from the endpoint. */
export interface OutboundHost extends DialogHost {
  /** The Server and User-Agent product, if any. */
  readonly product: string | undefined;
  /** Sends an INVITE through a new client transaction, whose responses the endpoint routes to it. */
  startInvite(invite: SipRequest, peer: SipPeer, user: InviteClientUser): InviteClientTransaction;
  /** Makes an answered call's dialog known, so that the callee's requests reach it. */
  adopt(dialog: OutboundDialog): void;
  /** Lets `address` past the allow-list until the returned function is called. */
  expectPeer(address: string): () => void;
}

/**
 * The From value: a name-addr with our display name (quoted) and URI, without parameters (the
 * tag is ours to add).
 * @throws RangeError when it is not a SIP, SIPS or tel URI, or has a control character
 */
function fromValue(from: string): string {
  const parsed = /[\u0000-\u001f\u007f]/.test(from) ? null : parseNameAddress(from);
  if (!parsed || !/^(sips?|tel):[^\s<>"]+$/i.test(parsed.uri)) throw new RangeError(`the caller ID ${JSON.stringify(from)} is not a SIP URI`);
  const name = parsed.displayName?.replace(/\\(.)/g, '$1').replace(/["\\]/g, (char) => `\\${char}`);
  return name ? `"${name}" <${parsed.uri}>` : `<${parsed.uri}>`;
}

/**
 * Places a call: checks the request, finds the peer, sends the INVITE and settles with the
 * outcome. `tracked` receives the call in progress (the endpoint abandons it at shutdown).
 * @throws RangeError when the target is not a SIP URI, the caller ID cannot be read, a header
 *   is refused, or the session interval is not one
 */
export async function placeOutboundCall(
  host: OutboundHost,
  request: OutboundCallRequest,
  signal: AbortSignal | undefined,
  tracked: (call: OutboundCall) => void,
): Promise<OutboundCallResult> {
  const target = request.target.trim().replace(/^<(.*)>$/, '$1');
  const uri = /[\s<>"]/.test(target) ? null : parseSipUri(target);
  if (!uri) throw new RangeError(`the call target ${JSON.stringify(request.target)} is not a SIP URI`);
  const from = fromValue(request.from);
  // The session timer's headers are ours; a Supported of the application's is merged with ours.
  const headers = checkedExtraHeaders(request.headers, ['Session-Expires', 'x', 'Min-SE']);
  const sessionExpires = checkedSessionInterval(request.sessionExpiresS);
  if (signal?.aborted) return { failed: 'cancelled' };
  let peer: SipPeer;
  try {
    // A name is looked up in the family our sockets are bound in: an IPv4 socket cannot reach ::1.
    const bound = host.contactFor('UDP').host;
    peer = withTlsCa(request.peer ?? (await peerForUri(uri, net.isIPv4(bound) ? 4 : net.isIPv6(bound) && bound !== '::' ? 6 : 0)), request.tlsCa);
  } catch {
    return { failed: 'unreachable' };
  }
  if (signal?.aborted) return { failed: 'cancelled' };
  const contact = host.contactFor(peer.transport);
  const invite = new SipHeaders()
    .append('Via', `SIP/2.0/${peer.transport} ${sipHost(contact.host)}:${contact.port};branch=${newBranch()};rport`)
    .append('Max-Forwards', '70')
    .append('From', `${from};tag=${newTag()}`)
    .append('To', `<${target}>`)
    .append('Call-ID', request.callId ?? newCallId(contact.host))
    .append('CSeq', '1 INVITE')
    .append('Contact', contactValue(contact, peer.transport))
    .append('Allow', ALLOW);
  if (host.product) invite.append('User-Agent', host.product);
  for (const [name, value] of headers) invite.append(name, value);
  if (sessionExpires > 0) askForSessionTimer(invite, sessionExpires);
  invite.append('Content-Type', request.offer.contentType);
  const call = new OutboundCall(host, request, { kind: 'request', method: 'INVITE', uri: target, headers: invite, body: request.offer.body }, peer, signal);
  tracked(call);
  call.start();
  return call.result;
}

/** Challenges answered for one call: the first, and one for a nonce that had gone stale. */
const MAX_CHALLENGES = 2;

/** 422 Session Interval Too Small answered for one call, each by asking for a longer interval. */
const MAX_INTERVAL_RAISES = 2;

/** One INVITE of ours on its way to an answer (sent again when a challenge is answered). */
export class OutboundCall implements InviteClientUser {
  /** Settles once, with the outcome; never rejects. */
  readonly result: Promise<OutboundCallResult>;
  private settle!: (result: OutboundCallResult) => void;
  private settled = false;
  private transaction: InviteClientTransaction | null = null;
  /** The dialogs its 2xx made, by the callee's tag: one answered call, and forks hung up. */
  private readonly dialogs = new Map<string, OutboundDialog>();
  /** Why we stopped waiting, once we did. */
  private stopping: 'timeout' | 'cancelled' | null = null;
  private cancelSent = false;
  private readonly timers = new TimerSet();
  private readonly onAbort = (): void => this.stop('cancelled');
  private unexpect: () => void = () => {};
  /** Challenges answered so far. */
  private challenges = 0;
  /** 422s answered so far. */
  private intervalRaises = 0;

  constructor(
    private readonly host: OutboundHost,
    private readonly request: OutboundCallRequest,
    private invite: SipRequest,
    private readonly peer: SipPeer,
    private readonly signal?: AbortSignal,
  ) {
    this.result = new Promise((resolve) => (this.settle = resolve));
  }

  /** Sends the INVITE and starts the ring timeout. */
  start(): void {
    // The target was chosen by our dialplan: its requests may pass the allow-list while we call.
    this.unexpect = this.host.expectPeer(this.peer.address);
    this.timers.after(this.request.ringTimeoutMs, () => this.stop('timeout'));
    this.signal?.addEventListener('abort', this.onAbort, { once: true });
    this.send(this.invite);
  }

  /**
   * Sends `invite` in a transaction of its own; what an earlier transaction of this call still
   * reports (the end of a challenged INVITE's) is not heard any more, its 2xx aside.
   */
  private send(invite: SipRequest): void {
    this.invite = invite;
    let transaction: InviteClientTransaction | null = null;
    const current = (): boolean => this.transaction === transaction;
    transaction = this.host.startInvite(invite, this.peer, {
      provisional: (response) => current() && this.provisional(response),
      accepted: (response) => this.accepted(response),
      rejected: (response) => current() && this.rejected(response),
      unreachable: () => current() && this.unreachable(),
      terminated: () => current() && this.terminated(),
    });
    this.transaction = transaction;
  }

  /**
   * The INVITE again with the answer to a 401 or 407 (RFC 3261 section 22.2): same Call-ID,
   * From tag and To, the next CSeq, a new branch. False when it cannot be answered.
   */
  private answerChallenge(response: SipResponse): boolean {
    const credentials = this.request.credentials;
    if (!credentials || this.stopping || this.settled || ++this.challenges > MAX_CHALLENGES) return false;
    const proxy = response.status === 407;
    const challenge = chooseChallenge(response.headers.getAll(proxy ? 'Proxy-Authenticate' : 'WWW-Authenticate'));
    if (!challenge || (credentials.realm && challenge.realm !== credentials.realm)) return false;
    // A second challenge for a fresh nonce: the credentials were refused.
    if (this.challenges > 1 && !challenge.stale) return false;
    const authorization = digestAuthorization(challenge, credentials, 'INVITE', this.invite.uri);
    this.sendAgain((headers) =>
      headers
        .delete('Authorization')
        .delete('Proxy-Authorization')
        .append(proxy ? 'Proxy-Authorization' : 'Authorization', authorization),
    );
    return true;
  }

  /** The INVITE again after a 422 (RFC 4028 section 7.3), asking for the 422's Min-SE. False when it cannot be. */
  private raiseInterval(response: SipResponse): boolean {
    const raised = this.stopping || this.settled || ++this.intervalRaises > MAX_INTERVAL_RAISES ? null : raisedAfter422(this.invite, response);
    if (!raised) return false;
    this.sendAgain((headers) => raised.forEach(([name, value]) => headers.set(name, value)));
    return true;
  }

  /** The INVITE again in a transaction of its own: same Call-ID, From tag and To, the next CSeq, a new branch. */
  private sendAgain(change: (headers: SipHeaders) => void): void {
    const headers = this.invite.headers
      .clone()
      .set('Via', this.invite.headers.get('Via')!.replace(/;branch=[^;]+/, `;branch=${newBranch()}`))
      .set('CSeq', `${cseqOf(this.invite).seq + 1} INVITE`);
    change(headers);
    this.send({ ...this.invite, headers });
  }

  provisional(response: SipResponse): void {
    if (this.stopping) return this.cancel();
    if (!this.settled && response.status > 100) this.request.onProgress?.(response.status, bodyOf(response));
  }

  accepted(response: SipResponse): void {
    const tag = parseNameAddress(response.headers.get('To') ?? '')?.params.get('tag') ?? '';
    const known = this.dialogs.get(tag);
    if (known) return known.acknowledge();
    const dialog = new OutboundDialog(this.host, this.invite, response, this.peer);
    this.dialogs.set(tag, dialog);
    this.host.adopt(dialog);
    dialog.acknowledge();
    // A second fork, or an answer that crossed our CANCEL or came after we gave up: acknowledged,
    // then hung up (section 13.2.2.4); the 487 we waited for will not come.
    if (this.settled || this.stopping || this.dialogs.size > 1) {
      void dialog.hangup(this.stopping ? 'the call was given up' : 'answered elsewhere');
      if (this.stopping) this.done({ failed: this.stopping });
      return;
    }
    this.done({ answered: dialog, answer: dialog.answer });
  }

  rejected(response: SipResponse): void {
    if ((response.status === 401 || response.status === 407) && this.answerChallenge(response)) return;
    if (response.status === 422 && this.raiseInterval(response)) return;
    this.done({ failed: this.stopping && response.status === 487 ? this.stopping : response.status });
  }

  unreachable(): void {
    this.done({ failed: this.stopping ?? 'unreachable' });
  }

  terminated(): void {
    // Only a CANCEL left without a final answer, or shutdown, ends the transaction unsettled.
    this.done({ failed: this.stopping ?? 'cancelled' });
  }

  /** Gives up at shutdown: a CANCEL sent once when one may go, and the outcome `cancelled`. */
  abandon(): void {
    if (this.settled) return;
    this.stopping ??= 'cancelled';
    if (this.transaction?.proceeding && !this.cancelSent) {
      this.cancelSent = true;
      this.host.sendRaw(serializeMessage(this.transaction.cancelRequest()), this.peer);
    }
    this.done({ failed: 'cancelled' });
  }

  /** The ring timeout passed, or the signal aborted. */
  private stop(reason: 'timeout' | 'cancelled'): void {
    if (this.settled || this.stopping) return;
    this.stopping = reason;
    if (this.transaction?.proceeding) return this.cancel();
    // Nothing answered yet: no CANCEL may go (section 9.1). The transaction goes on and
    // cancels the INVITE if a provisional response still comes.
    this.done({ failed: reason === 'cancelled' ? 'cancelled' : 'unreachable' });
  }

  /** CANCEL, then the wait for the INVITE's final answer, 64 × T1 at most (section 9.1). */
  private cancel(): void {
    if (this.cancelSent || !this.transaction) return;
    this.cancelSent = true;
    const transaction = this.transaction;
    void this.host.request(transaction.cancelRequest(), this.peer);
    this.timers.after(64 * this.host.timers.t1Ms, () => transaction.terminate());
  }

  private done(result: OutboundCallResult): void {
    if (this.settled) return;
    this.settled = true;
    // From here on an answered call's dialog lets its target through; a failed call needs nothing.
    this.unexpect();
    this.timers.clear();
    this.signal?.removeEventListener('abort', this.onAbort);
    this.settle(result);
  }
}
