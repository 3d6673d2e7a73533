/**
 * SIP signalling through a drachtio-server instead of the embedded endpoint, for deployments
 * that run one: drachtio-srf connects out to the server's admin port (TCP, shared secret) and
 * reconnects by itself when the connection drops; each new INVITE passes the same admission
 * as on the embedded endpoint (allow-list, digest, call limits) and becomes a
 * {@link DrachtioDialog}. drachtio-server (C++) is on neither npm nor Debian, so this is
 * tested against a fake speaking its wire protocol (`test/helpers/fake-drachtio.ts`).
 */
import type { EventEmitter } from 'node:events';
import Srf from 'drachtio-srf';
import type { Logger } from 'pino';
import { ConfigError } from '../../config-values.js';
import type { CallDialog } from '../call/call-dialog.js';
import type { AdmissionPolicy } from '../sip/sip-endpoint.js';
import { parseSipUri } from '../sip/sip-headers.js';
import { parseSipMessage } from '../sip/sip-parser.js';
import type { SipPeer, TransportName } from '../sip/sip-transport.js';
import { DrachtioDialog, type CreateUas, type DrachtioUas } from './drachtio-dialog.js';
import { drachtioHeaders } from './drachtio-message.js';

/** Where drachtio-server is, how to sign in, and who may call. */
export interface DrachtioSignallingOptions {
  readonly host: string;
  /** drachtio-server's admin port (9022 by default there). */
  readonly port: number;
  readonly secret: string;
  readonly logger: Logger;
  readonly admit: AdmissionPolicy;
  /** How long the start waits for drachtio-server to be reachable (default 30 s). */
  readonly connectTimeoutMs?: number;
}

/** Receives each admitted call with where it came from. */
export type CallHandler = (dialog: CallDialog, source: SipPeer) => void;

/**
 * The inside of drachtio-srf 5.0.29 that stopping needs: `srf.disconnect()` throws when no
 * socket is open (between reconnect attempts), and only the wire's own flag and timer end
 * its retrying.
 */
interface SrfInside {
  readonly app: EventEmitter & {
    readonly client?: { readonly wp?: { closing?: boolean; reconnectVars?: { retryTimer?: NodeJS.Timeout | null } } };
  };
}

/** Ceiling of drachtio-srf's reconnect back-off, which otherwise grows by 1.7 each time without bound. */
const RETRY_MAX_DELAY_MS = 5000;

/** The signalling side of the gateway when a drachtio-server does the SIP. */
export class DrachtioSignalling {
  private handler: CallHandler = (dialog) => dialog.reject(480);
  private stopped = false;
  private readonly createUas: CreateUas;

  private constructor(
    private readonly srf: Srf,
    private readonly options: DrachtioSignallingOptions,
  ) {
    // drachtio-srf's typings know only the promise form and a narrower dialog; see CreateUas.
    this.createUas = (invite, response, uasOptions, done) => {
      srf.createUAS(invite as unknown as Srf.SrfRequest, response as unknown as Srf.SrfResponse, uasOptions, (error, uas) =>
        done(error, uas as unknown as DrachtioUas),
      );
    };
    srf.invite((request, response) => this.invite(request, response));
  }

  /**
   * Connects and authenticates; resolves once drachtio-server sends us new INVITEs.
   * @throws ConfigError naming SPRACHROHR_DRACHTIO_SECRET when the server refuses the secret,
   *   or SPRACHROHR_DRACHTIO when it cannot be reached in time
   */
  static async connect(options: DrachtioSignallingOptions): Promise<DrachtioSignalling> {
    const signalling = new DrachtioSignalling(new Srf(), options);
    await signalling.start();
    return signalling;
  }

  /** Receives every admitted call; answer, reject or let it ring. */
  onCall(handler: CallHandler): void {
    this.handler = handler;
  }

  /** Where drachtio-server is, for logs. */
  get target(): string {
    return `${this.options.host}:${this.options.port}`;
  }

  private start(): Promise<void> {
    const { logger } = this.options;
    const target = this.target;
    // The app object reports connects in the same turn as the server's answer, while the
    // socket is still open: a refused secret can then stop the reconnecting at once.
    const app = (this.srf as unknown as SrfInside).app;
    const timeoutMs = this.options.connectTimeoutMs ?? 30_000;
    return new Promise<void>((resolve, reject) => {
      let started = false;
      const timer = setTimeout(() => {
        this.stop();
        reject(new ConfigError('SPRACHROHR_DRACHTIO', `no drachtio-server answered at ${target} within ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      app.on('connect', (error: Error | null, hostports?: string, version?: string) => {
        if (this.stopped) return this.disconnect();
        if (error) {
          logger.error({ drachtio: target }, 'drachtio-server refused our secret (SPRACHROHR_DRACHTIO_SECRET)');
          if (started) return;
          clearTimeout(timer);
          this.stop();
          reject(new ConfigError('SPRACHROHR_DRACHTIO_SECRET', `drachtio-server at ${target} did not accept the secret`));
          return;
        }
        logger.info({ drachtio: target, sip: hostports, version }, started ? 'reconnected to drachtio-server' : 'connected to drachtio-server');
        if (started) return;
        started = true;
        clearTimeout(timer);
        resolve();
      });
      // Without a listener an 'error' event would throw; the reconnecting is drachtio-srf's.
      this.srf.on('error', (error) => {
        if (!this.stopped) logger.warn({ drachtio: target, reason: error.message }, 'drachtio-server connection failed; retrying');
      });
      app.on('close', () => {
        if (!this.stopped && started) logger.warn({ drachtio: target }, 'drachtio-server connection closed; reconnecting');
      });
      this.srf.connect({
        host: this.options.host,
        port: this.options.port,
        secret: this.options.secret,
        reconnect: { retryMaxDelay: RETRY_MAX_DELAY_MS },
      } as Srf.SrfConfig);
    });
  }

  private invite(request: Srf.SrfRequest, response: Srf.SrfResponse): void {
    // Our own parser reads the INVITE exactly as the embedded endpoint would, so admission,
    // the offer and the called number are decided the same way.
    const parsed = parseSipMessage(Buffer.from(request.raw, 'utf8'));
    if (!parsed.ok || parsed.message.kind !== 'request') {
      response.send(400);
      return;
    }
    const invite = parsed.message;
    // drachtio-srf's createUAS answers even after failing on a missing Contact (RFC 3261 needs one).
    if (!invite.headers.has('Contact')) {
      response.send(400);
      return;
    }
    // A re-INVITE of a dialog drachtio-srf does not know (one from before a restart) is no new call.
    if (/;\s*tag=/i.test(invite.headers.get('To') ?? '')) {
      response.send(481);
      return;
    }
    const source: SipPeer = { transport: transportOf(request.protocol), address: request.source_address, port: Number(request.source_port) };
    const uri = parseSipUri(invite.uri);
    if (!uri) {
      response.send(416);
      return;
    }
    const require = invite.headers.getAll('Require');
    if (require.length > 0) {
      response.send(420, { headers: { Unsupported: require.join(', ') } });
      return;
    }
    const refusal = this.options.admit(invite, source);
    if (refusal) {
      response.send(refusal.status, { headers: drachtioHeaders(refusal.headers ?? []) });
      return;
    }
    this.handler(new DrachtioDialog(invite, source, uri.user, request, response, this.createUas), source);
  }

  /** Stops for good: no more reconnecting, the connection closed. */
  private stop(): void {
    this.stopped = true;
    const wire = (this.srf as unknown as SrfInside).app.client?.wp;
    if (wire) {
      wire.closing = true;
      if (wire.reconnectVars?.retryTimer) clearTimeout(wire.reconnectVars.retryTimer);
      if (wire.reconnectVars) wire.reconnectVars.retryTimer = null;
    }
    this.disconnect();
  }

  private disconnect(): void {
    try {
      this.srf.disconnect();
    } catch {
      // No socket open (between attempts): nothing to close.
    }
  }

  /** Closes the connection to drachtio-server (calls are hung up before, by their owner). */
  async close(): Promise<void> {
    this.stop();
  }
}

/** drachtio names transports in lower case; WebSocket callers count as their stream transport. */
function transportOf(protocol: string): TransportName {
  switch (protocol.toLowerCase()) {
    case 'tcp':
    case 'ws':
      return 'TCP';
    case 'tls':
    case 'wss':
      return 'TLS';
    default:
      return 'UDP';
  }
}
