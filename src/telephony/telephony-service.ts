/**
 * The phone side of the process: the SIP signalling (the embedded endpoint, or a
 * drachtio-server when `SPRACHROHR_DRACHTIO` is set), who may call, the media thread (every
 * call's RTP ports and the one pacer clock all calls send on), and the dialplans that say what
 * each call does. It runs beside the HTTP and WebSocket API in the same process, on the same
 * engines.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { EngineRegistry } from '../../engine/registry.js';
import type { CallMetering } from '../metering/call-meter.js';
import { DialplanLibrary } from '../dialplan/dialplan-library.js';
import type { LoadedRoute } from '../dialplan/dialplan-loader.js';
import type { CallDialog, SessionDialog } from './call/call-dialog.js';
import { CallSession, type CallServices, type CallUsage, type RecordingSink } from './call/call-session.js';
import type { CallPlacer } from './call/call-transfer.js';
import { legPlacer } from './call/outbound-leg.js';
import { DrachtioSignalling } from './drachtio/drachtio-signalling.js';
import type { MediaChannel } from './media/media-channel.js';
import { MediaThread } from './media/media-thread.js';
import { LocalLimitCounters, type LimitCounters } from '../store/limit-counters.js';
import type { CallStatusSender } from './outbound/call-status-events.js';
import { orderUrlCheck } from './outbound/order-url-check.js';
import { CallbackAllowList } from '../jobs/callback-target.js';
import { detectOnChannel } from './outbound/machine-detection.js';
import { OutboundDialer } from './outbound/outbound-dialer.js';
import { RtpPortsExhausted } from './media/rtp-port-pool.js';
import type { PacingStats } from './rtp/pacer.js';
import { CallAdmission } from './sip/call-admission.js';
import { SipEndpoint } from './sip/sip-endpoint.js';
import type { SipTimers } from './sip/sip-transactions.js';
import type { SipPeer } from './sip/sip-transport.js';
import type { TelephonyConfig } from './telephony-config.js';
import { calledNumberOf } from './trunks/called-number.js';
import { TrunkService, type TrunkStatus } from './trunks/trunk-service.js';
import type { TrunkConfig } from './trunks/trunk-loader.js';
import type { RegistrationTiming } from './trunks/trunk-registration.js';

/** Counters of the phone side, for logs, capabilities and benchmarks. */
export interface TelephonyStats {
  callsStarted: number;
  callsEnded: number;
  /** End of caller speech → first reply packet, per turn (the most recent 1,000). */
  readonly turnLatenciesMs: number[];
  readonly usage: CallUsage[];
}

/** What the phone side is started with besides its configuration. */
export interface TelephonyParts {
  /** Where voicemails go. */
  readonly recordings: RecordingSink;
  /** Signs webhook bots' requests; null: unsigned. */
  readonly webhookSecret?: string | null;
  /** SIP timers (tests shorten them). */
  readonly timers?: SipTimers;
  /** Meters calls for their dialplans' accounts and holds them to the accounts' entitlements; absent: calls are not metered. */
  readonly metering?: CallMetering;
  /** How often a running call is checked against its entitlements (tests shorten it; default a minute). */
  readonly allowanceCheckMs?: number;
  /** Pauses of trunk registrations after failures (tests shorten them). */
  readonly registrationTiming?: RegistrationTiming;
  /** Outbound calls' status events and the check of the URLs they name; absent: no status events, URLs checked as callbacks without an allow-list. */
  readonly outbound?: OutboundParts;
  /** Told of every call's end and turn (the metrics); absent: nobody is. */
  readonly observer?: CallObserver;
}

/** Who is told of calls as they go: cheap, synchronous, never in the way of a call. */
export interface CallObserver {
  /** A call ended: `outcome` is how (`bye`, `hangup`, `cancel`, `rejected`, `shutdown`, `ack-timeout`). */
  callEnded(direction: 'inbound' | 'outbound', outcome: string): void;
  /** A reply's first packet went out `latencyMs` after the caller stopped speaking. */
  turn(latencyMs: number): void;
}

/** What the calls ordered through `POST /v1/calls` need from the service around. */
export interface OutboundParts {
  readonly status: CallStatusSender | null;
  /** Checks a status or bot URL as a callback target. @throws CallOrderError (`invalid`) naming what is wrong */
  readonly checkUrl: (url: string, field: string) => Promise<void>;
  /** An account's webhook secret, which signs the requests of the bots its keys' calls run; null: the deployment's. */
  readonly accountSecret: (accountId: string) => Promise<string | null>;
  /** Where the keys' call limits are counted (the store's); absent: in this process. */
  readonly counters?: LimitCounters;
}

/** What differs between sessions: the number a call was routed by; a placed call's media, variables and codecs. */
type SessionExtras = Partial<Pick<CallServices, 'calledNumber' | 'placed' | 'variables' | 'codecs' | 'orderedBy'>>;

/** What every call is given besides the engines and the media. */
interface CallParts {
  readonly recordings: RecordingSink;
  readonly webhookSecret: string | null;
  readonly metering: CallMetering | null;
  readonly allowanceCheckMs?: number;
  readonly outbound: OutboundParts;
  readonly observer: CallObserver | null;
}

/** Who does the SIP: the embedded endpoint, or a drachtio-server. */
type Signalling =
  | { readonly kind: 'embedded'; readonly endpoint: SipEndpoint; readonly trunks: TrunkService }
  | { readonly kind: 'drachtio'; readonly drachtio: DrachtioSignalling };

/** The running phone side. */
export class TelephonyService {
  readonly stats: TelephonyStats = { callsStarted: 0, callsEnded: 0, turnLatenciesMs: [], usage: [] };
  private readonly calls = new Set<CallSession>();
  private readonly finished = new Set<Promise<void>>();
  /** The calls ordered through the API. */
  readonly dialer: OutboundDialer;

  private constructor(
    private readonly signalling: Signalling,
    private readonly admission: CallAdmission,
    private readonly media: MediaThread,
    private readonly dialplans: DialplanLibrary,
    private readonly config: TelephonyConfig,
    private readonly engines: EngineRegistry,
    private readonly callParts: CallParts,
    private readonly logger: Logger,
  ) {
    if (signalling.kind === 'embedded') signalling.endpoint.onCall((dialog) => this.take(dialog, dialog.source));
    else signalling.drachtio.onCall((dialog, source) => this.take(dialog, source));
    this.dialer = new OutboundDialer({
      endpoint: signalling.kind === 'embedded' ? signalling.endpoint : null,
      media,
      mediaAddress: this.mediaAddress,
      codecs: config.codecs,
      context: () => ({
        routes: dialplans.current.routes,
        trunks: dialplans.trunks,
        trunkStatus: (name) => this.trunkStatus().find((trunk) => trunk.name === name),
        ourHost: this.mediaAddress,
      }),
      calls: admission,
      limits: config.outbound,
      counters: callParts.outbound.counters ?? new LocalLimitCounters(),
      status: callParts.outbound.status,
      checkUrl: callParts.outbound.checkUrl,
      accountSecret: callParts.outbound.accountSecret,
      detectMachine: detectOnChannel,
      startSession: (start) => {
        const { call, done } = this.runSession(start.dialog, start.route, start.channel, {
          calledNumber: start.called,
          placed: start.placed,
          variables: start.variables,
          orderedBy: start.orderedBy,
          codecs: start.codecs,
        });
        return { done, hangup: (reason) => call.hangup(reason) };
      },
      logger: logger.child({ part: 'outbound' }),
    });
  }

  /**
   * Loads the dialplans (a bad one stops the start, with file and line) and follows their
   * changes, binds the SIP listeners (or connects to drachtio-server) and starts taking calls.
   */
  static async start(config: TelephonyConfig, engines: EngineRegistry, logger: Logger, parts: TelephonyParts): Promise<TelephonyService> {
    const { timers, recordings } = parts;
    const webhookSecret = parts.webhookSecret ?? null;
    const dialplans = await DialplanLibrary.open(config.dialplansDir, logger);
    const admission = new CallAdmission({
      allow: config.allow,
      ...(config.digest ? { digest: config.digest } : {}),
      maxCalls: config.maxCalls,
      maxCallsPerSource: config.maxCallsPerSource,
    });
    const media = new MediaThread({ host: config.host, rtpPorts: config.rtpPorts, logger });
    await media.start();
    try {
      const callParts: CallParts = {
        recordings,
        webhookSecret,
        metering: parts.metering ?? null,
        ...(parts.allowanceCheckMs !== undefined ? { allowanceCheckMs: parts.allowanceCheckMs } : {}),
        outbound: parts.outbound ?? { status: null, checkUrl: orderUrlCheck(new CallbackAllowList([])), accountSecret: async () => null },
        observer: parts.observer ?? null,
      };
      admission.setTrunkSources(dialplans.trunks);
      const service = await TelephonyService.signal(config, engines, logger, admission, media, dialplans, callParts, timers, parts.registrationTiming);
      service.followTrunks();
      dialplans.watch();
      return service;
    } catch (error) {
      await media.close();
      throw error;
    }
  }

  /** Connects to drachtio-server or binds the SIP listeners. */
  private static async signal(
    config: TelephonyConfig,
    engines: EngineRegistry,
    logger: Logger,
    admission: CallAdmission,
    media: MediaThread,
    dialplans: DialplanLibrary,
    callParts: CallParts,
    timers?: SipTimers,
    registrationTiming?: RegistrationTiming,
  ): Promise<TelephonyService> {
    const routes = dialplans.current.routes.map((route) => route.number);
    if (config.drachtio) {
      const drachtio = await DrachtioSignalling.connect({ ...config.drachtio, logger, admit: (invite, source) => admission.check(invite, source) });
      logger.info({ drachtio: drachtio.target, routes }, 'taking calls');
      return new TelephonyService({ kind: 'drachtio', drachtio }, admission, media, dialplans, config, engines, callParts, logger);
    }
    const endpoint = new SipEndpoint({
      host: config.host,
      port: config.port,
      ...(config.advertisedAddress ? { advertisedHost: config.advertisedAddress } : {}),
      logger,
      admit: (invite, source) => admission.check(invite, source),
      allowSource: (address) => admission.allows(address),
      strangers: config.refuse,
      maxConnectionsPerSource: config.maxConnectionsPerSource,
      product: 'sprachrohr',
      ...(timers ? { timers } : {}),
      ...(config.tls ? { tls: { port: config.tls.port, cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) } } : {}),
    });
    try {
      await endpoint.listen();
    } catch (error) {
      throw new Error(
        `SIP cannot listen on ${config.host}:${config.port} (SPRACHROHR_SIP_HOST, SPRACHROHR_SIP_PORT; SPRACHROHR_SIP=off turns calls off): ${(error as Error).message}`,
      );
    }
    logger.info({ sip: endpoint.ports, routes }, 'taking calls');
    const trunks = new TrunkService(endpoint, logger, registrationTiming);
    return new TelephonyService({ kind: 'embedded', endpoint, trunks }, admission, media, dialplans, config, engines, callParts, logger);
  }

  /**
   * The embedded SIP endpoint (its bound ports, for tests and logs).
   * @throws Error when calls come through a drachtio-server instead
   */
  get endpoint(): SipEndpoint {
    if (this.signalling.kind !== 'embedded') throw new Error('calls come through drachtio-server (SPRACHROHR_DRACHTIO); there is no embedded SIP endpoint');
    return this.signalling.endpoint;
  }

  /**
   * Registers the trunks of the trunk file and follows its changes: their registrations and
   * their sources on the allow-list. Behind drachtio-server, drachtio-server registers.
   */
  private followTrunks(): void {
    const apply = (trunks: readonly TrunkConfig[]): void => {
      this.admission.setTrunkSources(trunks);
      if (this.signalling.kind === 'embedded') {
        this.signalling.trunks.apply(trunks);
        this.warnTlsWithoutListener(trunks, this.signalling.endpoint);
      } else if (trunks.some((trunk) => trunk.register))
        this.logger.warn('trunk registration is done by the embedded SIP endpoint; behind drachtio-server, let drachtio-server register');
    };
    apply(this.dialplans.trunks);
    this.dialplans.onTrunks(apply);
  }

  /**
   * A TLS trunk is given our Contact with `transport=tls`; without a TLS listener of ours its
   * port is the TCP one, where nothing speaks TLS. A carrier that reuses our connection for its
   * requests is served all the same; one that opens its own (for a call, or the BYE of a call we
   * placed) cannot reach us, and nothing else would say why.
   */
  private warnTlsWithoutListener(trunks: readonly TrunkConfig[], endpoint: SipEndpoint): void {
    const tlsTrunks = trunks.filter((trunk) => trunk.transport === 'TLS').map((trunk) => trunk.name);
    if (tlsTrunks.length === 0 || endpoint.ports.tls !== null) return;
    this.logger.warn(
      { trunks: tlsTrunks },
      'TLS trunks, but no SIP TLS listener (SPRACHROHR_SIP_TLS_CERT, SPRACHROHR_SIP_TLS_KEY): requests a carrier sends on a connection of its own cannot reach the gateway',
    );
  }

  /** Who does the SIP signalling. */
  get signallingKind(): 'embedded' | 'drachtio' {
    return this.signalling.kind;
  }

  /** The trunks and their registrations (none behind drachtio-server). */
  trunkStatus(): TrunkStatus[] {
    return this.signalling.kind === 'embedded'
      ? this.signalling.trunks.status()
      : this.dialplans.trunks.map((trunk) => ({ ...TrunkService.describe(trunk), registration: null, keepalive: null }));
  }

  /** Calls in progress. */
  get activeCalls(): number {
    return this.calls.size;
  }

  /** The pacer's punctuality (tick lateness against its deadlines); `reset` starts it afresh. */
  pacingStats(reset = false): Promise<PacingStats> {
    return this.media.pacingStats(reset);
  }

  /** Our media address for SDP. */
  private get mediaAddress(): string {
    return this.config.advertisedAddress ?? this.config.host;
  }

  /** Places the second call of a bridged transfer (on the embedded endpoint only). */
  private readonly placeCall = (...args: Parameters<CallPlacer>): ReturnType<CallPlacer> =>
    legPlacer({
      endpoint: this.signalling.kind === 'embedded' ? this.signalling.endpoint : null,
      media: this.media,
      mediaAddress: this.mediaAddress,
      codecs: this.config.codecs,
      logger: this.logger,
    })(...args);

  /** Runs an admitted call's route: a media port, a call session, its counters. */
  private take(dialog: CallDialog, source: SipPeer): void {
    // A call from a trunk's sources takes the routes for that trunk before the general ones.
    const trunkName = this.admission.trunkFor(source.address);
    const trunk = trunkName === null ? undefined : this.dialplans.trunks.find((candidate) => candidate.name === trunkName);
    const calledNumber = calledNumberOf(dialog.invite, dialog.calledUser, trunk);
    const route = this.dialplans.current.route(calledNumber, trunkName);
    if (!route) {
      dialog.reject(404);
      return;
    }
    this.admission.track(dialog, source);
    void this.media
      .open()
      .then((channel) => {
        if (dialog.ended) return void channel.close();
        this.runSession(dialog, route, channel, { calledNumber });
      })
      .catch((error: unknown) => {
        if (error instanceof RtpPortsExhausted) {
          this.logger.warn({ callId: dialog.callId }, error.message);
          dialog.reject(503, [['Retry-After', '5']]);
          return;
        }
        this.logger.error({ err: error, callId: dialog.callId }, 'a call could not start');
        dialog.reject(500);
      });
  }

  /**
   * Runs a route on a call in a call session, with the process's counters; the session closes
   * the channel when it ends. `extra` says what differs for this call (the number it was routed
   * by; for a call we placed, its media and variables).
   */
  private runSession(dialog: SessionDialog, route: LoadedRoute, channel: MediaChannel, extra: SessionExtras): { call: CallSession; done: Promise<void> } {
    let call: CallSession;
    try {
      call = new CallSession(dialog, route, channel, {
        engines: this.engines,
        logger: this.logger,
        mediaAddress: this.mediaAddress,
        codecs: this.config.codecs,
        recordings: this.callParts.recordings,
        webhookSecret: this.callParts.webhookSecret,
        metering: this.callParts.metering,
        ...(this.callParts.allowanceCheckMs !== undefined ? { allowanceCheckMs: this.callParts.allowanceCheckMs } : {}),
        placeCall: this.placeCall,
        trunk: (name) => this.dialplans.trunks.find((candidate) => candidate.name === name),
        ...extra,
      });
    } catch (error) {
      void channel.close();
      throw error;
    }
    this.calls.add(call);
    this.stats.callsStarted += 1;
    const observer = this.callParts.observer;
    call.on('turn-latency', (ms) => {
      observer?.turn(ms);
      this.stats.turnLatenciesMs.push(ms);
      if (this.stats.turnLatenciesMs.length > 1000) this.stats.turnLatenciesMs.shift();
    });
    call.on('usage', (usage) => {
      this.stats.usage.push(usage);
      if (this.stats.usage.length > 1000) this.stats.usage.shift();
    });
    const done = call.run().finally(() => {
      this.calls.delete(call);
      this.stats.callsEnded += 1;
      this.finished.delete(done);
    });
    this.finished.add(done);
    if (observer) call.once('ended', (outcome) => observer.callEnded(extra.placed ? 'outbound' : 'inbound', outcome));
    return { call, done };
  }

  /**
   * Takes no new calls from now on (the instance is draining): new INVITEs, and out of a call
   * the OPTIONS a proxy probes with, get 503 with `Retry-After`, so the proxy or trunk picks
   * another gateway. Calls in progress go on until they end or {@link close}. Behind
   * drachtio-server, which answers OPTIONS itself, only INVITEs are refused.
   */
  drain(retryAfterSeconds: number): void {
    this.admission.drain(retryAfterSeconds);
    if (this.signalling.kind === 'embedded') this.signalling.endpoint.drain(retryAfterSeconds);
    this.logger.info({ retryAfterSeconds }, 'draining: new calls and OPTIONS get 503');
  }

  /** Hangs up every call, then closes the listeners (or the connection to drachtio-server). */
  async close(): Promise<void> {
    await this.dialer.close();
    await Promise.all([...this.calls].map((call) => call.hangup().catch(() => undefined)));
    await Promise.all([...this.finished]);
    await this.dialplans.close();
    if (this.signalling.kind === 'embedded') {
      // The bindings go before the endpoint does: their removal needs it.
      await this.signalling.trunks.close();
      await this.signalling.endpoint.close();
    } else await this.signalling.drachtio.close();
    await this.media.close();
  }

  /** The dialplans new calls are routed by (reloaded when the folder changes). */
  get dialplanLibrary(): DialplanLibrary {
    return this.dialplans;
  }
}
