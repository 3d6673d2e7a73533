/**
 * The embedded SIP endpoint: transports, transactions and dialogs of a gateway that answers
 * calls (a UAS) and places the second leg of a bridged transfer (a UAC). Sources outside the
 * allow-list get one stateless 403 (or nothing); the target of a call we place is let through
 * while that call lasts. It answers OPTIONS and whatever it refuses at once statelessly, so
 * that they leave no state behind, checks every INVITE against the admission policy (who may
 * call, how many calls) before any work, hands admitted calls to the application as
 * {@link SipDialog}s, and routes CANCEL, ACK and in-dialog requests to them and to the
 * {@link OutboundDialog}s of the calls it placed. Malformed requests get 400 when they can be
 * answered at all and are dropped otherwise. The transaction table is bounded; beyond it
 * requests get 503.
 */
import type { Logger } from 'pino';
import { newTag, parseSipUri, parseVia, sipHost } from './sip-headers.js';
import { serializeMessage, type SipRequest, type SipResponse } from './sip-message.js';
import { cseqOf, type ParseResult } from './sip-parser.js';
import { ALLOW, SipDialog } from './sip-dialog.js';
import { InviteClientTransaction, type InviteClientUser } from './sip-invite-client.js';
import { placeOutboundCall, type OutboundCall, type OutboundCallRequest, type OutboundCallResult, type OutboundHost } from './sip-outbound-call.js';
import type { OutboundDialog } from './sip-outbound-dialog.js';
import { buildResponse, ClientTransaction, DEFAULT_TIMERS, serverTransactionKey, ServerTransaction, type SipTimers } from './sip-transactions.js';
import { StatelessResponder, type StatelessAnswer } from './stateless-responder.js';
import { SipTransport, type SipPeer, type SipTransportOptions } from './sip-transport.js';

/** A refusal of a new call: status and extra headers (`Retry-After`, `WWW-Authenticate`). */
export interface CallRefusal {
  readonly status: number;
  readonly headers?: ReadonlyArray<readonly [string, string]>;
}

/**
 * Decides whether a new INVITE may become a call (allow-list, digest, call limits). It must
 * be cheap: it runs before anything else is spent on the request.
 */
export type AdmissionPolicy = (invite: SipRequest, source: SipPeer) => CallRefusal | null;

/** What a request from a source outside the allow-list gets: one 403, or nothing at all. */
export type StrangerPolicy = '403' | 'drop';

/** Listening options, timers and policies of a {@link SipEndpoint}. */
export interface SipEndpointOptions extends Omit<SipTransportOptions, 'logger'> {
  readonly logger: Logger;
  readonly timers?: SipTimers;
  readonly admit?: AdmissionPolicy;
  /**
   * Requests from sources that `allowSource` refuses: answered 403 once, statelessly (no
   * transaction, so no retransmission a spoofed source could turn into a flood), or dropped.
   * Default `403`.
   */
  readonly strangers?: StrangerPolicy;
  /** Most server transactions kept at once; new requests beyond get a stateless 503. */
  readonly maxServerTransactions?: number;
  /** Value of the Server and User-Agent headers. */
  readonly product?: string;
  /**
   * The address others reach us at, when it is not the one we listen on (a public address in
   * front of a private one): written in Contact and Via, and so registered with trunks.
   */
  readonly advertisedHost?: string;
}

/**
 * Server transactions kept at once by default. Each lives up to 64 × T1 (32 s) after its
 * answer, so this allows some 300 new calls or in-call requests a second, far above what 200
 * calls need, while a full table stays small (its size: docs/performance.md, "Measurements
 * behind the code's choices").
 */
export const DEFAULT_MAX_SERVER_TRANSACTIONS = 10_000;

/** Seconds a sender is asked to wait when the transaction table is full. */
const FULL_TABLE_RETRY_AFTER_S = 5;

/** A final answer sent at once and statelessly. */
interface ImmediateAnswer extends StatelessAnswer {
  readonly status: number;
}

/** A transaction of ours awaiting responses. */
interface PendingClient {
  receive(response: SipResponse): void;
  terminate(): void;
}

/** An address without the IPv4-mapped prefix a dual-stack socket reports (`::ffff:10.0.0.1`). */
const plainAddress = (address: string): string => address.replace(/^::ffff:/i, '');

/** A SIP user agent for incoming calls, and for the calls a bridged transfer places. */
export class SipEndpoint implements OutboundHost {
  readonly timers: SipTimers;
  private readonly transport: SipTransport;
  private readonly stateless: StatelessResponder;
  private readonly serverTransactions = new Map<string, ServerTransaction>();
  /** By branch and method: a CANCEL has the branch of its INVITE (RFC 3261 section 17.1.3). */
  private readonly clientTransactions = new Map<string, PendingClient>();
  private readonly dialogs = new Map<string, SipDialog>();
  /** Answered calls we placed, with the release of their target from the allow-list. */
  private readonly outbound = new Map<string, { readonly dialog: OutboundDialog; readonly unexpect: () => void }>();
  /** Calls we are placing, not answered yet. */
  private readonly placing = new Set<OutboundCall>();
  /** Addresses of the targets of our calls, let past the allow-list, each with its count of calls. */
  private readonly expected = new Map<string, number>();
  private callHandler: (dialog: SipDialog) => void = (dialog) => dialog.reject(480);
  /** Whether the last new request found the transaction table full. */
  private tableFull = false;
  /** Requests from sources outside the allow-list, refused or dropped. */
  strangersRefused = 0;
  /** While the instance drains: the Retry-After of the 503 that OPTIONS get. */
  private drainRetryAfterS: number | null = null;

  constructor(private readonly options: SipEndpointOptions) {
    this.timers = options.timers ?? DEFAULT_TIMERS;
    const allowSource = options.allowSource;
    this.transport = new SipTransport({ ...options, ...(allowSource ? { allowSource: (address: string) => this.allows(address) } : {}) });
    this.stateless = new StatelessResponder(this.transport);
    this.transport.onMessage((result, peer) => this.receive(result, peer));
  }

  /** Receives every admitted call; answer, reject or let it ring. */
  onCall(handler: (dialog: SipDialog) => void): void {
    this.callHandler = handler;
  }

  async listen(): Promise<void> {
    await this.transport.listen();
  }

  /** The bound ports. */
  get ports(): { udp: number; tcp: number; tls: number | null } {
    return { udp: this.transport.udpPort, tcp: this.transport.tcpPort, tls: this.transport.tlsPort };
  }

  /** Server transactions kept now. */
  get serverTransactionCount(): number {
    return this.serverTransactions.size;
  }

  /** Calls in progress (ringing or answered). */
  get activeDialogs(): number {
    return this.dialogs.size;
  }

  /** Calls we placed that are being placed or are answered. */
  get outboundCalls(): number {
    return this.placing.size + this.outbound.size;
  }

  /** The Server and User-Agent product. */
  get product(): string | undefined {
    return this.options.product;
  }

  /**
   * Places a call (a bridged transfer's second leg): INVITE with our offer, CANCEL when the
   * ring timeout passes or `signal` aborts. Resolves with the answered dialog or why it failed;
   * rejects only for a request that cannot be sent at all.
   * @throws RangeError when the target is not a SIP URI, the caller ID cannot be read, or a
   *   header is refused
   */
  placeCall(request: OutboundCallRequest, signal?: AbortSignal): Promise<OutboundCallResult> {
    return placeOutboundCall(this, request, signal, (call) => {
      this.placing.add(call);
      void call.result.then(() => this.placing.delete(call));
    });
  }

  startInvite(invite: SipRequest, peer: SipPeer, user: InviteClientUser): InviteClientTransaction {
    const key = `${parseVia(invite.headers.get('Via') ?? '')?.branch}|INVITE`;
    const transaction = new InviteClientTransaction(invite, peer, this.transport, this.timers, {
      provisional: (response) => user.provisional(response),
      accepted: (response) => user.accepted(response),
      rejected: (response) => user.rejected(response),
      unreachable: () => user.unreachable(),
      terminated: () => {
        this.clientTransactions.delete(key);
        user.terminated();
      },
    });
    this.clientTransactions.set(key, transaction);
    transaction.start();
    return transaction;
  }

  adopt(dialog: OutboundDialog): void {
    this.outbound.set(dialog.key, { dialog, unexpect: this.expectPeer(dialog.peer.address) });
  }

  expectPeer(address: string): () => void {
    const plain = plainAddress(address);
    this.expected.set(plain, (this.expected.get(plain) ?? 0) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.expected.get(plain) ?? 1) - 1;
      if (left === 0) this.expected.delete(plain);
      else this.expected.set(plain, left);
    };
  }

  /** Whether a source may send us requests: on the allow-list, or the target of a call we placed. */
  private allows(address: string): boolean {
    return !this.options.allowSource || this.expected.has(plainAddress(address)) || this.options.allowSource(address);
  }

  contactFor(transport: SipPeer['transport']): { host: string; port: number } {
    const port =
      transport === 'UDP' ? this.transport.udpPort : transport === 'TCP' ? this.transport.tcpPort : (this.transport.tlsPort ?? this.transport.tcpPort);
    return { host: this.options.advertisedHost ?? this.transport.host, port };
  }

  sendRaw(data: Buffer, peer: SipPeer): void {
    this.transport.send(data, peer);
  }

  /**
   * Sends a request through a new client transaction: its final response, or null when none
   * came; `onFailure` hears why, when it was the connection that could not be made (a refused
   * TLS certificate, a refused TCP connection).
   */
  async request(request: SipRequest, peer: SipPeer, onFailure?: (error: Error) => void): Promise<SipResponse | null> {
    const key = (branch: string): string => `${branch}|${request.method}`;
    const transaction = new ClientTransaction(request, peer, this.transport, this.timers, (done) => this.clientTransactions.delete(key(done.branch)));
    this.clientTransactions.set(key(transaction.branch), transaction);
    transaction.start();
    const outcome = await transaction.outcome;
    if ('response' in outcome) return outcome.response;
    if (outcome.error) onFailure?.(outcome.error);
    return null;
  }

  release(dialog: { readonly key: string }): void {
    this.dialogs.delete(dialog.key);
    this.outbound.get(dialog.key)?.unexpect();
    this.outbound.delete(dialog.key);
  }

  private receive(result: ParseResult, peer: SipPeer): void {
    if (!result.ok) {
      this.options.logger.debug({ peer, reason: result.reason }, 'SIP message refused');
      // A stranger's junk is not answered at all.
      if (!this.allows(peer.address)) return;
      // A request whose Via can be read gets its 400 (or 505, 413); anything else is dropped.
      if (result.request && result.request.method !== 'ACK' && parseVia(result.request.headers.get('Via') ?? '')) {
        const headers = result.request.headers;
        if (headers.has('From') && headers.has('To') && headers.has('Call-ID') && headers.has('CSeq')) {
          const request: SipRequest = { kind: 'request', method: result.request.method, uri: '', headers, body: Buffer.alloc(0) };
          // The Warning header (section 20.43) says what was wrong, for whoever reads the trace.
          const warning = `399 sprachrohr "${result.reason.replaceAll('"', "'").slice(0, 120)}"`;
          this.transport.send(serializeMessage(buildResponse(request, result.status, peer, { headers: [['Warning', warning]] })), peer);
        }
      }
      return;
    }
    const message = result.message;
    if (message.kind === 'response') {
      const branch = parseVia(message.headers.get('Via') ?? '')?.branch;
      if (branch) this.clientTransactions.get(`${branch}|${cseqOf(message).method}`)?.receive(message);
      return;
    }
    this.receiveRequest(message, peer);
  }

  private receiveRequest(request: SipRequest, peer: SipPeer): void {
    if (!this.allows(peer.address)) {
      this.strangersRefused += 1;
      if (this.options.strangers !== 'drop' && request.method !== 'ACK') this.stateless.respond(request, 403, peer);
      return;
    }
    const key = serverTransactionKey(request);
    if (!key) return;
    const existing = this.serverTransactions.get(key);
    if (existing) {
      existing.receive(request);
      // The ACK of a 2xx has its own branch; one that matched a transaction was for a non-2xx.
      return;
    }
    if (request.method === 'ACK') {
      this.dialogFor(request)?.handleRequest(request, null);
      return;
    }
    const dialog = this.dialogFor(request);
    const immediate = this.immediateAnswer(request, dialog);
    if (immediate) {
      this.stateless.respond(request, immediate.status, peer, immediate);
      return;
    }
    if (this.serverTransactions.size >= (this.options.maxServerTransactions ?? DEFAULT_MAX_SERVER_TRANSACTIONS)) {
      // 503 with Retry-After rather than silence: silence makes a UDP sender retransmit ten
      // times, more load just when there is too much; a 503 sends a trunk to its next gateway.
      // Logged once per overload, not once per request of a flood.
      if (!this.tableFull)
        this.options.logger.warn({ peer, transactions: this.serverTransactions.size }, 'SIP transaction table full: new requests refused with 503');
      this.tableFull = true;
      this.stateless.respond(request, 503, peer, { headers: [['Retry-After', String(FULL_TABLE_RETRY_AFTER_S)]] });
      return;
    }
    this.tableFull = false;
    const transaction = new ServerTransaction(key, request, peer, this.transport, this.timers, (done) => this.serverTransactions.delete(done.key));
    this.serverTransactions.set(key, transaction);
    if (request.method === 'CANCEL') return this.cancel(request, transaction);
    if (dialog) return dialog.handleRequest(request, transaction);
    return this.invite(request, transaction);
  }

  /**
   * The answer of a request that is final at once and changes nothing, sent without a
   * transaction; null for one that needs a transaction (INVITE, CANCEL of a pending INVITE,
   * a request inside a call).
   */
  private immediateAnswer(request: SipRequest, dialog: SipDialog | OutboundDialog | undefined): ImmediateAnswer | null {
    const maxForwards = request.headers.get('Max-Forwards');
    if (maxForwards !== undefined && Number(maxForwards.trim()) === 0 && request.method !== 'OPTIONS') return { status: 483 };
    if (request.method === 'CANCEL') {
      const inviteKey = serverTransactionKey({ ...request, method: 'INVITE' });
      return inviteKey && this.serverTransactions.has(inviteKey) ? null : { status: 481 };
    }
    if (/;\s*tag=/i.test(request.headers.get('To') ?? '')) return dialog ? null : { status: 481 };
    switch (request.method) {
      case 'INVITE':
        return null;
      case 'OPTIONS':
        // Out of a call only: a prober's (or a flood's) OPTIONS leave nothing behind for 32 s.
        // While draining, a 503 takes this gateway out of a proxy's set (Kamailio's dispatcher probes so).
        if (this.drainRetryAfterS !== null) return { status: 503, headers: [['Retry-After', String(this.drainRetryAfterS)]] };
        return { status: 200, headers: this.capabilityHeaders() };
      case 'BYE':
      case 'INFO':
      case 'UPDATE':
      case 'NOTIFY':
        return { status: 481 };
      case 'REFER':
        // We send REFER to transfer our callers; nobody transfers calls through us.
        return { status: 603 };
      default:
        return { status: 405, headers: [['Allow', ALLOW]] };
    }
  }

  /** Answers out-of-dialog OPTIONS with 503 and `Retry-After` from now on (the instance is draining). */
  drain(retryAfterSeconds: number): void {
    this.drainRetryAfterS = retryAfterSeconds;
  }

  private invite(request: SipRequest, transaction: ServerTransaction): void {
    const source = transaction.source;
    const uri = parseSipUri(request.uri);
    if (!uri) {
      transaction.respond(buildResponse(request, 416, source));
      return;
    }
    const require = request.headers.getAll('Require');
    if (require.length > 0) {
      transaction.respond(buildResponse(request, 420, source, { headers: [['Unsupported', require.join(', ')]] }));
      return;
    }
    const refusal = this.options.admit?.(request, source) ?? null;
    if (refusal) {
      transaction.respond(buildResponse(request, refusal.status, source, { toTag: newTag(), headers: refusal.headers ?? [] }));
      return;
    }
    transaction.respond(buildResponse(request, 100, source));
    const dialog = new SipDialog(request, source, transaction, this, newTag(), uri.user);
    this.dialogs.set(dialog.key, dialog);
    this.callHandler(dialog);
  }

  /** A CANCEL whose INVITE is still pending (see {@link immediateAnswer}): 200, then the call is cancelled. */
  private cancel(request: SipRequest, transaction: ServerTransaction): void {
    const invite = this.serverTransactions.get(serverTransactionKey({ ...request, method: 'INVITE' }) ?? '');
    transaction.respond(buildResponse(request, 200, transaction.source));
    const dialog = invite ? [...this.dialogs.values()].find((candidate) => candidate.invite === invite.request) : undefined;
    dialog?.cancelled();
  }

  /**
   * The dialog a request belongs to: our tag is in its To, theirs in its From, whether we
   * answered the call or placed it.
   */
  private dialogFor(request: SipRequest): SipDialog | OutboundDialog | undefined {
    const toTag = /;\s*tag=([^;\s]+)/i.exec(request.headers.get('To') ?? '')?.[1];
    const fromTag = /;\s*tag=([^;\s]+)/i.exec(request.headers.get('From') ?? '')?.[1] ?? '';
    if (!toTag) return undefined;
    const key = `${request.headers.get('Call-ID')}|${toTag}|${fromTag}`;
    return this.dialogs.get(key) ?? this.outbound.get(key)?.dialog;
  }

  private capabilityHeaders(): Array<[string, string]> {
    const contact = this.contactFor('UDP');
    return [
      ['Allow', ALLOW],
      ['Accept', 'application/sdp, application/dtmf-relay'],
      ['Contact', `<sip:${sipHost(contact.host)}:${contact.port}>`],
      ...(this.options.product ? [['Server', this.options.product] as [string, string]] : []),
    ];
  }

  /**
   * Ends every dialog and transaction and closes the transports. Calls we placed are given
   * up with one CANCEL or BYE each, sent once (there is no time left for retransmissions).
   */
  async close(): Promise<void> {
    const placed = this.placing.size + this.outbound.size;
    for (const call of [...this.placing]) call.abandon();
    for (const { dialog } of [...this.outbound.values()]) dialog.abandon();
    for (const dialog of [...this.dialogs.values()]) dialog.abandon();
    for (const transaction of [...this.serverTransactions.values()]) transaction.terminate();
    for (const transaction of [...this.clientTransactions.values()]) transaction.terminate();
    // Lets those last datagrams leave before their socket closes.
    if (placed > 0) await new Promise((resolve) => setImmediate(resolve));
    await this.transport.close();
  }
}
