/**
 * The embedded SIP endpoint: transports, transactions and dialogs of a gateway that answers
 * calls (a UAS). It answers OPTIONS, checks every INVITE against the admission policy (who may
 * call, how many calls) before any work, hands admitted calls to the application as
 * {@link SipDialog}s, and routes CANCEL, ACK and in-dialog requests to them. Malformed
 * requests get 400 when they can be answered at all and are dropped otherwise.
 */
import type { Logger } from 'pino';
import { newTag, parseSipUri, parseVia, sipHost } from './sip-headers.js';
import { serializeMessage, type SipRequest, type SipResponse } from './sip-message.js';
import type { ParseResult } from './sip-parser.js';
import { ALLOW, SipDialog, type DialogHost } from './sip-dialog.js';
import { buildResponse, ClientTransaction, DEFAULT_TIMERS, responsePeer, serverTransactionKey, ServerTransaction, type SipTimers } from './sip-transactions.js';
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
}

/** Server transactions kept at once by default: far above what 200 calls need. */
export const DEFAULT_MAX_SERVER_TRANSACTIONS = 10_000;

/** A SIP user agent server for incoming calls. */
export class SipEndpoint implements DialogHost {
  readonly timers: SipTimers;
  private readonly transport: SipTransport;
  private readonly serverTransactions = new Map<string, ServerTransaction>();
  private readonly clientTransactions = new Map<string, ClientTransaction>();
  private readonly dialogs = new Map<string, SipDialog>();
  private callHandler: (dialog: SipDialog) => void = (dialog) => dialog.reject(480);
  /** Requests from sources outside the allow-list, refused or dropped. */
  strangersRefused = 0;

  constructor(private readonly options: SipEndpointOptions) {
    this.timers = options.timers ?? DEFAULT_TIMERS;
    this.transport = new SipTransport(options);
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

  contactFor(transport: SipPeer['transport']): { host: string; port: number } {
    const port = transport === 'UDP' ? this.transport.udpPort : transport === 'TCP' ? this.transport.tcpPort : (this.transport.tlsPort ?? this.transport.tcpPort);
    return { host: this.transport.host, port };
  }

  sendRaw(data: Buffer, peer: SipPeer): void {
    this.transport.send(data, peer);
  }

  async request(request: SipRequest, peer: SipPeer): Promise<SipResponse | null> {
    const transaction = new ClientTransaction(request, peer, this.transport, this.timers, (done) => this.clientTransactions.delete(done.branch));
    this.clientTransactions.set(transaction.branch, transaction);
    transaction.start();
    const outcome = await transaction.outcome;
    return 'response' in outcome ? outcome.response : null;
  }

  release(dialog: SipDialog): void {
    this.dialogs.delete(dialog.key);
  }

  private receive(result: ParseResult, peer: SipPeer): void {
    if (!result.ok) {
      this.options.logger.debug({ peer, reason: result.reason }, 'SIP message refused');
      // A stranger's junk is not answered at all.
      if (this.options.allowSource && !this.options.allowSource(peer.address)) return;
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
      if (branch) this.clientTransactions.get(branch)?.receive(message);
      return;
    }
    this.receiveRequest(message, peer);
  }

  /** Sends a response without keeping a transaction: it is sent once, never retransmitted. */
  private respondStatelessly(request: SipRequest, status: number, peer: SipPeer, options: Parameters<typeof buildResponse>[3] = {}): void {
    this.transport.send(serializeMessage(buildResponse(request, status, peer, options)), responsePeer(request, peer));
  }

  private receiveRequest(request: SipRequest, peer: SipPeer): void {
    if (this.options.allowSource && !this.options.allowSource(peer.address)) {
      this.strangersRefused += 1;
      if (this.options.strangers !== 'drop' && request.method !== 'ACK') this.respondStatelessly(request, 403, peer, { toTag: newTag() });
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
    const inDialog = /;\s*tag=/i.test(request.headers.get('To') ?? '');
    if (request.method === 'OPTIONS' && !inDialog) {
      // Answered without a transaction: a retransmission is simply answered again, and a
      // prober's (or a flood's) OPTIONS leave nothing behind for Timer J's 32 s.
      this.respondStatelessly(request, 200, peer, { toTag: newTag(), headers: this.capabilityHeaders() });
      return;
    }
    if (this.serverTransactions.size >= (this.options.maxServerTransactions ?? DEFAULT_MAX_SERVER_TRANSACTIONS)) {
      this.options.logger.warn({ peer, transactions: this.serverTransactions.size }, 'SIP transaction table full: request refused with 503');
      this.respondStatelessly(request, 503, peer, { toTag: newTag(), headers: [['Retry-After', '5']] });
      return;
    }
    const transaction = new ServerTransaction(key, request, peer, this.transport, this.timers, (done) => this.serverTransactions.delete(done.key));
    this.serverTransactions.set(key, transaction);
    const maxForwards = request.headers.get('Max-Forwards');
    if (maxForwards !== undefined && Number(maxForwards.trim()) === 0 && request.method !== 'OPTIONS') {
      transaction.respond(buildResponse(request, 483, peer));
      return;
    }
    if (request.method === 'CANCEL') return this.cancel(request, transaction);
    if (inDialog) {
      const dialog = this.dialogFor(request);
      if (dialog) dialog.handleRequest(request, transaction);
      else transaction.respond(buildResponse(request, 481, peer));
      return;
    }
    switch (request.method) {
      case 'INVITE':
        return this.invite(request, transaction);
      case 'BYE':
      case 'INFO':
      case 'UPDATE':
        transaction.respond(buildResponse(request, 481, peer));
        return;
      default:
        transaction.respond(buildResponse(request, 405, peer, { headers: [['Allow', ALLOW]] }));
    }
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

  private cancel(request: SipRequest, transaction: ServerTransaction): void {
    const inviteKey = serverTransactionKey({ ...request, method: 'INVITE' });
    const invite = inviteKey ? this.serverTransactions.get(inviteKey) : undefined;
    if (!invite) {
      transaction.respond(buildResponse(request, 481, transaction.source));
      return;
    }
    transaction.respond(buildResponse(request, 200, transaction.source));
    const dialog = [...this.dialogs.values()].find((candidate) => candidate.invite === invite.request);
    dialog?.cancelled();
  }

  /** The dialog a request belongs to (our tag in To, theirs in From). */
  private dialogFor(request: SipRequest): SipDialog | undefined {
    const toTag = /;\s*tag=([^;\s]+)/i.exec(request.headers.get('To') ?? '')?.[1];
    const fromTag = /;\s*tag=([^;\s]+)/i.exec(request.headers.get('From') ?? '')?.[1] ?? '';
    if (!toTag) return undefined;
    return this.dialogs.get(`${request.headers.get('Call-ID')}|${toTag}|${fromTag}`);
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

  /** Ends every dialog and transaction and closes the transports. */
  async close(): Promise<void> {
    for (const dialog of [...this.dialogs.values()]) dialog.abandon();
    for (const transaction of [...this.serverTransactions.values()]) transaction.terminate();
    for (const transaction of [...this.clientTransactions.values()]) transaction.cancel();
    await this.transport.close();
  }
}
