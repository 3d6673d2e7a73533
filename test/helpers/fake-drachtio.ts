/**
 * A fake drachtio-server for tests. The real one (C++, github.com/drachtio/drachtio-server)
 * is on neither npm nor Debian and cannot run on our machines, so this speaks its TCP wire
 * protocol to drachtio-srf as drachtio-server does (checked against drachtio-srf 5.0.29's
 * lib/wire-protocol.js, lib/drachtio-agent.js, lib/srf.js and lib/dialog.js, and the server's
 * src/client.cpp, src/controller.cpp and src/sip-dialog-controller.cpp):
 *
 * - framing: `<utf-8 byte length>#<message>`, each message `<msgId>|<type>|…`;
 * - `authenticate|<secret>|<tags>` → `response|<msgId>|OK|<sip hostports>|<version>|<local
 *   hostports>`, or `NO|incorrect secret` and the connection closed; `route|<verb>` and `ping`
 *   → `OK`;
 * - to the app, a request from the network: `sip|network|<bytes>|<transport>|<address>|<port>|
 *   <time>|<transactionId>|<dialogId>|` CRLF and the raw message (dialogId empty outside a
 *   dialog); a response to the app's own request has the same leader;
 * - from the app, `sip|<transactionId>|<dialogId>` CRLF and a response (to that transaction) or
 *   a request (inside that dialog), which drachtio-server completes (Via, To tag, Contact,
 *   dialog headers), sends, and confirms: `response|<msgId>|OK|application|<bytes>|<transport>|
 *   <address>|<port>|<time>|<transactionId>|<dialogId>||Msg sent:|` CRLF and the message as sent
 *   (for requests: `…|<time>|<transactionId>|Msg sent:|`).
 *
 * What drachtio-server does by itself is done here too: `100 Trying` to each INVITE, and `200`
 * to a CANCEL with `487` to its INVITE before the app hears of it. Everything that went out
 * towards callers is kept in {@link FakeDrachtio.toNetwork}; what the app wrote, in
 * {@link FakeDrachtio.fromApp}.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import net from 'node:net';
import { SipHeaders, type SipMessage, type SipRequest } from '../../src/telephony/sip/sip-message.js';
import { parseSipMessage } from '../../src/telephony/sip/sip-parser.js';

/** The address drachtio-server's SIP stack listens on, as it tells the app. */
const SIP_ADDRESS = '127.0.0.1';
const SIP_PORT = 5060;
const VERSION = 'v0.8.26';
/** Headers drachtio-server owns in what the app sends: it writes them itself. */
const DIALOG_HEADERS = new Set(['via', 'from', 'to', 'call-id', 'cseq', 'content-length', 'max-forwards']);

/** One SIP message the app sent through us. */
export interface AppSipMessage {
  readonly msgId: string;
  readonly transactionId: string;
  readonly dialogId: string;
  /** As the app wrote it. */
  readonly written: SipMessage;
  /** As it went out to the caller; null when we refused it (`NO`). */
  readonly sent: SipMessage | null;
  /** The call it belongs to. */
  readonly callId: string;
}

/** One call from the fake network. */
export interface FakeCall {
  readonly callId: string;
  /** The INVITE's transaction. */
  readonly transactionId: string;
  readonly caller: { readonly address: string; readonly port: number };
  readonly fromTag: string;
  readonly number: string;
  /** Set when the app's 200 makes the dialog. */
  dialogId: string | null;
  toTag: string | null;
  /** The caller's last CSeq. */
  cseq: number;
  /** Our (the app's) next CSeq inside the dialog. */
  localCseq: number;
}

interface NetworkTransaction {
  readonly request: SipRequest;
  readonly call: FakeCall;
  final: boolean;
  cancelled: boolean;
}

/** A drachtio-server stand-in on a TCP port of its own. */
export class FakeDrachtio {
  readonly fromApp: AppSipMessage[] = [];
  readonly toNetwork: SipMessage[] = [];
  /** Secrets the app presented, in order. */
  readonly authentications: string[] = [];
  readonly routes: string[] = [];
  readonly calls = new Map<string, FakeCall>();
  private readonly transactions = new Map<string, NetworkTransaction>();
  /** Requests the app sent to callers, awaiting a response from the test. */
  private readonly appTransactions = new Map<string, { request: SipRequest; call: FakeCall }>();
  private readonly sockets = new Set<net.Socket>();
  private app: net.Socket | null = null;
  private readonly waiters = new Set<() => void>();
  private constructor(
    private readonly server: net.Server,
    private readonly secret: string,
  ) {}

  /** Listens on a free port of 127.0.0.1. */
  static async start(options: { secret: string }): Promise<FakeDrachtio> {
    const server = net.createServer();
    const fake = new FakeDrachtio(server, options.secret);
    server.on('connection', (socket) => fake.accept(socket));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get port(): number {
    return (this.server.address() as net.AddressInfo).port;
  }

  /** Connections the app has open now. */
  get connections(): number {
    return this.sockets.size;
  }

  /** Resolves once an app has authenticated and asked for INVITEs. */
  async ready(timeoutMs = 5000): Promise<void> {
    await this.until(() => this.app !== null && this.routes.includes('invite'), timeoutMs, 'no app authenticated and routed invite');
  }

  /** Waits for the first message from the app after index `from` that matches. */
  async next(match: (message: AppSipMessage) => boolean, from = 0, timeoutMs = 5000): Promise<AppSipMessage> {
    let found: AppSipMessage | undefined;
    await this.until(
      () => (found = this.fromApp.slice(from).find(match)) !== undefined,
      timeoutMs,
      () => `no matching message from the app; got ${this.fromApp.map(summary).join(', ')}`,
    );
    return found!;
  }

  /** A new INVITE from the network, as drachtio-server hands it to the app (after its own 100). */
  invite(options: { number: string; sdp?: string; caller?: { address: string; port: number }; callId?: string; headers?: string[] }): FakeCall {
    const caller = options.caller ?? { address: '127.0.0.1', port: 5090 };
    const call: FakeCall = {
      callId: options.callId ?? `${randomUUID()}@fake`,
      transactionId: randomUUID(),
      caller,
      fromTag: hex(4),
      number: options.number,
      dialogId: null,
      toTag: null,
      cseq: 1,
      localCseq: 1,
    };
    const body = options.sdp ?? '';
    const raw = [
      `INVITE sip:${call.number}@${SIP_ADDRESS}:${SIP_PORT} SIP/2.0`,
      `Via: SIP/2.0/UDP ${caller.address}:${caller.port};branch=z9hG4bK${hex(6)};rport`,
      'Max-Forwards: 70',
      `From: <sip:caller@${caller.address}:${caller.port}>;tag=${call.fromTag}`,
      `To: <sip:${call.number}@${SIP_ADDRESS}>`,
      `Call-ID: ${call.callId}`,
      'CSeq: 1 INVITE',
      `Contact: <sip:caller@${caller.address}:${caller.port}>`,
      ...(options.headers ?? []),
      ...(body ? ['Content-Type: application/sdp'] : []),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n');
    const request = parse(raw) as SipRequest;
    this.calls.set(call.callId, call);
    this.transactions.set(call.transactionId, { request, call, final: false, cancelled: false });
    this.toNetwork.push(parse(responseText(request, 100, 'Trying')));
    this.toApp(call, call.transactionId, '', raw);
    return call;
  }

  /** The caller's ACK to the app's 200 (with the answer when the INVITE had no offer). */
  ack(call: FakeCall, sdp?: string): void {
    this.toApp(call, randomUUID(), this.dialogOf(call), this.inDialogText(call, 'ACK', call.cseq, sdp));
  }

  /**
   * The caller's CANCEL. drachtio-server answers it (200) and the INVITE (487) itself, then
   * tells the app; after a final response it only answers the CANCEL.
   */
  cancel(call: FakeCall): void {
    const transaction = this.transactions.get(call.transactionId)!;
    const cancel = parse(cancelText(transaction.request)) as SipRequest;
    this.toNetwork.push(parse(responseText(cancel, 200, 'OK')));
    if (transaction.final) return;
    transaction.final = true;
    transaction.cancelled = true;
    this.toNetwork.push(parse(responseText(transaction.request, 487, 'Request Terminated', this.toTagOf(call))));
    this.toApp(call, call.transactionId, '', cancelText(transaction.request));
  }

  /** A request inside the dialog from the caller (BYE, INFO, re-INVITE, UPDATE); returns its transaction id. */
  request(call: FakeCall, method: string, body?: { contentType: string; text: string }): string {
    const transactionId = randomUUID();
    call.cseq += 1;
    const raw = this.inDialogText(call, method, call.cseq, body?.text, body?.contentType);
    this.transactions.set(transactionId, { request: parse(raw) as SipRequest, call, final: false, cancelled: false });
    this.toApp(call, transactionId, this.dialogOf(call), raw);
    return transactionId;
  }

  /** The caller's response to a request the app sent (BYE from the gateway, say). */
  respond(sent: AppSipMessage, status: number, reason = 'OK'): void {
    const pending = this.appTransactions.get(sent.transactionId);
    if (!pending) throw new Error(`no request of the app with transaction ${sent.transactionId}`);
    this.appTransactions.delete(sent.transactionId);
    this.toApp(pending.call, sent.transactionId, this.dialogOf(pending.call), responseText(pending.request, status, reason));
  }

  /** Drops the app's connection, as a restarting drachtio-server would; the app is expected back. */
  dropApp(): void {
    this.app?.destroy();
    this.app = null;
    this.routes.length = 0;
  }

  /** Closes every connection and the listener. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket);
    let pending = Buffer.alloc(0);
    socket.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      for (;;) {
        const hash = pending.indexOf('#');
        if (hash < 0) return;
        const length = Number(pending.subarray(0, hash).toString('latin1'));
        if (!Number.isInteger(length) || length <= 0) return void socket.destroy();
        if (pending.length < hash + 1 + length) return;
        const message = pending.subarray(hash + 1, hash + 1 + length).toString('utf8');
        pending = pending.subarray(hash + 1 + length);
        this.receive(socket, message);
      }
    });
    socket.on('close', () => {
      this.sockets.delete(socket);
      if (this.app === socket) this.app = null;
      this.wake();
    });
    socket.on('error', () => undefined);
  }

  private receive(socket: net.Socket, message: string): void {
    const crlf = message.indexOf('\r\n');
    const tokens = (crlf < 0 ? message : message.slice(0, crlf)).split('|');
    const [msgId = '', type] = tokens;
    switch (type) {
      case 'authenticate': {
        this.authentications.push(tokens[2] ?? '');
        if (tokens[2] !== this.secret) {
          this.reply(socket, msgId, 'NO|incorrect secret');
          socket.end();
        } else {
          this.app = socket;
          const hostports = `udp/${SIP_ADDRESS}:${SIP_PORT},tcp/${SIP_ADDRESS}:${SIP_PORT}`;
          this.reply(socket, msgId, `OK|${hostports}|${VERSION}|udp/${SIP_ADDRESS}:${SIP_PORT}`);
        }
        break;
      }
      case 'route':
        this.routes.push(tokens[2] ?? '');
        this.reply(socket, msgId, 'OK');
        break;
      case 'ping':
        this.reply(socket, msgId, 'OK|pong');
        break;
      case 'sip':
        this.fromAppSip(socket, msgId, tokens[2] ?? '', tokens[3] ?? '', message.slice(crlf + 2));
        break;
      default:
        this.reply(socket, msgId, 'NO|Unknown message type');
    }
    this.wake();
  }

  private fromAppSip(socket: net.Socket, msgId: string, transactionId: string, dialogId: string, raw: string): void {
    const written = parseWritten(raw);
    const record = (sent: SipMessage | null, callId: string, transaction = transactionId, dialog = dialogId) => {
      this.fromApp.push({ msgId, transactionId: transaction, dialogId: dialog, written, sent, callId });
      if (sent) this.toNetwork.push(sent);
    };
    if (written.kind === 'response') {
      const transaction = this.transactions.get(transactionId);
      if (!transaction || transaction.final) {
        record(null, transaction?.call.callId ?? '');
        return this.reply(socket, msgId, `NO|${transaction?.cancelled ? 'INVITE has already been canceled' : `unknown transaction id: ${transactionId}`}`);
      }
      const { request, call } = transaction;
      const isInvite = request.method === 'INVITE' && !/;\s*tag=/i.test(request.headers.get('To') ?? '');
      const toTag = isInvite ? (written.status > 100 ? this.toTagOf(call) : undefined) : undefined;
      if (isInvite && written.status === 200) call.dialogId = `${call.callId};from-tag=${call.fromTag}`;
      if (written.status >= 200) transaction.final = true;
      const extra = written.headers.lines().filter(({ name }) => !DIALOG_HEADERS.has(name.toLowerCase()));
      if (request.method === 'INVITE' && written.status > 100 && written.status < 300 && !written.headers.has('Contact'))
        extra.push({ name: 'Contact', value: `<sip:${SIP_ADDRESS}:${SIP_PORT}>` });
      const text = responseText(request, written.status, written.reason, toTag, extra, written.body.toString('utf8'));
      const dialog = isInvite && written.status === 200 ? call.dialogId! : (call.dialogId ?? '');
      record(parse(text), call.callId, transactionId, dialog);
      return this.reply(
        socket,
        msgId,
        `OK|application|${Buffer.byteLength(text)}|udp|${SIP_ADDRESS}|${SIP_PORT}|${now()}|${transactionId}|${dialog}||Msg sent:|\r\n${text}`,
      );
    }
    const call = [...this.calls.values()].find((candidate) => candidate.dialogId !== null && candidate.dialogId === dialogId);
    if (!call) {
      record(null, '');
      return this.reply(socket, msgId, `NO|unable to find dialog for dialog id ${dialogId}`);
    }
    const ownTransaction = randomUUID();
    const extra = written.headers.lines().filter(({ name }) => !DIALOG_HEADERS.has(name.toLowerCase()));
    const text = this.requestText(call, written.method, extra, written.body.toString('utf8'));
    const sent = parse(text) as SipRequest;
    if (written.method !== 'ACK') this.appTransactions.set(ownTransaction, { request: sent, call });
    record(sent, call.callId, ownTransaction, dialogId);
    this.reply(socket, msgId, `OK|application|${Buffer.byteLength(text)}|udp|${SIP_ADDRESS}|${SIP_PORT}|${now()}|${ownTransaction}|Msg sent:|\r\n${text}`);
  }

  /** A request from the caller inside the dialog (To carries our tag). */
  private inDialogText(call: FakeCall, method: string, cseq: number, body = '', contentType = 'application/sdp'): string {
    const { address, port } = call.caller;
    return [
      `${method} sip:${call.number}@${SIP_ADDRESS}:${SIP_PORT} SIP/2.0`,
      `Via: SIP/2.0/UDP ${address}:${port};branch=z9hG4bK${hex(6)};rport`,
      'Max-Forwards: 70',
      `From: <sip:caller@${address}:${port}>;tag=${call.fromTag}`,
      `To: <sip:${call.number}@${SIP_ADDRESS}>;tag=${this.toTagOf(call)}`,
      `Call-ID: ${call.callId}`,
      `CSeq: ${cseq} ${method}`,
      `Contact: <sip:caller@${address}:${port}>`,
      ...(body ? [`Content-Type: ${contentType}`] : []),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n');
  }

  /** A request of the app's, completed from the dialog as drachtio-server does. */
  private requestText(call: FakeCall, method: string, extra: ReadonlyArray<{ name: string; value: string }>, body: string): string {
    const { address, port } = call.caller;
    const cseq = method === 'ACK' ? call.localCseq - 1 : call.localCseq++;
    return [
      `${method} sip:caller@${address}:${port} SIP/2.0`,
      `Via: SIP/2.0/UDP ${SIP_ADDRESS}:${SIP_PORT};branch=z9hG4bK${hex(6)};rport`,
      'Max-Forwards: 70',
      `From: <sip:${call.number}@${SIP_ADDRESS}>;tag=${this.toTagOf(call)}`,
      `To: <sip:caller@${address}:${port}>;tag=${call.fromTag}`,
      `Call-ID: ${call.callId}`,
      `CSeq: ${cseq} ${method}`,
      ...extra.map(({ name, value }) => `${name}: ${value}`),
      `Content-Length: ${Buffer.byteLength(body)}`,
      '',
      body,
    ].join('\r\n');
  }

  private toTagOf(call: FakeCall): string {
    call.toTag ??= hex(4);
    return call.toTag;
  }

  private dialogOf(call: FakeCall): string {
    if (!call.dialogId) throw new Error(`call ${call.callId} has no dialog yet (the app has not answered 200)`);
    return call.dialogId;
  }

  private toApp(call: FakeCall, transactionId: string, dialogId: string, raw: string): void {
    if (!this.app) throw new Error('no app is connected');
    const { address, port } = call.caller;
    this.send(this.app, `${randomUUID()}|sip|network|${Buffer.byteLength(raw)}|udp|${address}|${port}|${now()}|${transactionId}|${dialogId}|\r\n${raw}`);
  }

  private reply(socket: net.Socket, msgId: string, rest: string): void {
    this.send(socket, `${randomUUID()}|response|${msgId}|${rest}`);
  }

  private send(socket: net.Socket, message: string): void {
    socket.write(`${Buffer.byteLength(message)}#${message}`);
  }

  private wake(): void {
    for (const wake of [...this.waiters]) wake();
  }

  private async until(condition: () => boolean, timeoutMs: number, failure: string | (() => string)): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!condition()) {
      if (Date.now() > deadline) throw new Error(typeof failure === 'string' ? failure : failure());
      await new Promise<void>((resolve) => {
        const wake = () => {
          this.waiters.delete(wake);
          clearTimeout(timer);
          resolve();
        };
        const timer = setTimeout(wake, 50);
        this.waiters.add(wake);
      });
    }
  }
}

/** A response to a request, with its Via, From, To (our tag added when given), Call-ID and CSeq. */
function responseText(
  request: SipRequest,
  status: number,
  reason: string,
  toTag?: string,
  extra: ReadonlyArray<{ name: string; value: string }> = [],
  body = '',
): string {
  const to = request.headers.get('To') ?? '';
  return [
    `SIP/2.0 ${status} ${reason}`,
    ...request.headers.getAll('Via').map((via) => `Via: ${via}`),
    `From: ${request.headers.get('From')}`,
    `To: ${toTag && !/;\s*tag=/i.test(to) ? `${to};tag=${toTag}` : to}`,
    `Call-ID: ${request.headers.get('Call-ID')}`,
    `CSeq: ${request.headers.get('CSeq')}`,
    ...extra.map(({ name, value }) => `${name}: ${value}`),
    `Content-Length: ${Buffer.byteLength(body)}`,
    '',
    body,
  ].join('\r\n');
}

/** The CANCEL of an INVITE (same Via, From, To, Call-ID and CSeq number). */
function cancelText(invite: SipRequest): string {
  return [
    `CANCEL ${invite.uri} SIP/2.0`,
    `Via: ${invite.headers.get('Via')}`,
    'Max-Forwards: 70',
    `From: ${invite.headers.get('From')}`,
    `To: ${invite.headers.get('To')}`,
    `Call-ID: ${invite.headers.get('Call-ID')}`,
    `CSeq: ${invite.headers.get('CSeq')!.split(' ')[0]} CANCEL`,
    'Content-Length: 0',
    '',
    '',
  ].join('\r\n');
}

/**
 * What the app wrote: drachtio-srf leaves out what drachtio-server fills in (a response has no
 * Via, a request inside a dialog no From, To, Call-ID or CSeq), so our parser's checks of those
 * do not apply here.
 */
function parseWritten(text: string): SipMessage {
  const split = text.indexOf('\r\n\r\n');
  const [startLine = '', ...lines] = (split < 0 ? text : text.slice(0, split)).split('\r\n');
  const headers = new SipHeaders();
  for (const line of lines) {
    const colon = line.indexOf(':');
    if (colon > 0) headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
  }
  const rest = Buffer.from(split < 0 ? '' : text.slice(split + 4), 'utf8');
  const length = headers.get('Content-Length');
  const body = length === undefined ? rest : rest.subarray(0, Number(length));
  const status = /^SIP\/2\.0 (\d{3}) ?(.*)$/.exec(startLine);
  if (status) return { kind: 'response', status: Number(status[1]), reason: status[2] ?? '', headers, body };
  const request = /^([A-Za-z]+) (\S+) SIP\/2\.0$/.exec(startLine);
  if (!request) throw new Error(`fake drachtio: the app wrote no SIP start line: ${JSON.stringify(startLine)}`);
  return { kind: 'request', method: request[1]!.toUpperCase(), uri: request[2]!, headers, body };
}

function parse(text: string): SipMessage {
  const result = parseSipMessage(Buffer.from(text, 'utf8'));
  if (!result.ok) throw new Error(`fake drachtio: unparsable SIP (${result.reason}):\n${text}`);
  return result.message;
}

/** drachtio-server's time stamp: `HH:MM:SS.micro`. */
function now(): string {
  const date = new Date();
  const two = (value: number) => String(value).padStart(2, '0');
  return `${two(date.getUTCHours())}:${two(date.getUTCMinutes())}:${two(date.getUTCSeconds())}.${String(date.getUTCMilliseconds() * 1000).padStart(6, '0')}`;
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

const summary = (message: AppSipMessage) =>
  message.written.kind === 'request' ? message.written.method : `${message.written.status} ${message.written.headers.get('CSeq') ?? ''}`;
