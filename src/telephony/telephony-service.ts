/**
 * The phone side of the process: the embedded SIP endpoint, who may call, the RTP ports, the
 * one pacer clock all calls send on, and the dialplans that say what each call does. It runs
 * beside the HTTP and WebSocket API in the same process, on the same engines.
 */
import { readFileSync } from 'node:fs';
import type { Logger } from 'pino';
import type { EngineRegistry } from '../../engine/registry.js';
import { loadDialplans, type Dialplans } from '../dialplan/dialplan-loader.js';
import { CallSession, type CallUsage } from './call/call-session.js';
import { RtpPortPool, RtpPortsExhausted } from './media/rtp-port-pool.js';
import { PacerClock } from './rtp/pacer.js';
import { CallAdmission } from './sip/call-admission.js';
import type { SipDialog } from './sip/sip-dialog.js';
import { SipEndpoint } from './sip/sip-endpoint.js';
import type { SipTimers } from './sip/sip-transactions.js';
import type { TelephonyConfig } from './telephony-config.js';

/** Counters of the phone side, for logs, capabilities and benchmarks. */
export interface TelephonyStats {
  callsStarted: number;
  callsEnded: number;
  /** End of caller speech → first reply packet, per turn (the most recent 1,000). */
  readonly turnLatenciesMs: number[];
  readonly usage: CallUsage[];
}

/** The running phone side. */
export class TelephonyService {
  readonly stats: TelephonyStats = { callsStarted: 0, callsEnded: 0, turnLatenciesMs: [], usage: [] };
  readonly pacer = new PacerClock();
  private readonly calls = new Set<CallSession>();
  private readonly finished = new Set<Promise<void>>();

  private constructor(
    readonly endpoint: SipEndpoint,
    private readonly admission: CallAdmission,
    private readonly ports: RtpPortPool,
    private readonly dialplans: Dialplans,
    private readonly config: TelephonyConfig,
    private readonly engines: EngineRegistry,
    private readonly logger: Logger,
  ) {
    endpoint.onCall((dialog) => this.take(dialog));
  }

  /**
   * Loads the dialplans (a bad one stops the start, with file and line), binds the SIP
   * listeners and starts taking calls.
   */
  static async start(config: TelephonyConfig, engines: EngineRegistry, logger: Logger, timers?: SipTimers): Promise<TelephonyService> {
    const dialplans = await loadDialplans(config.dialplansDir);
    const admission = new CallAdmission({ allow: config.allow, ...(config.digest ? { digest: config.digest } : {}), maxCalls: config.maxCalls, maxCallsPerSource: config.maxCallsPerSource });
    const endpoint = new SipEndpoint({
      host: config.host,
      port: config.port,
      logger,
      admit: (invite, source) => admission.check(invite, source),
      product: 'sprachrohr',
      ...(timers ? { timers } : {}),
      ...(config.tls ? { tls: { port: config.tls.port, cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) } } : {}),
    });
    try {
      await endpoint.listen();
    } catch (error) {
      throw new Error(`SIP cannot listen on ${config.host}:${config.port} (SPRACHROHR_SIP_HOST, SPRACHROHR_SIP_PORT; SPRACHROHR_SIP=off turns calls off): ${(error as Error).message}`);
    }
    const service = new TelephonyService(endpoint, admission, new RtpPortPool(config.host, config.rtpPorts), dialplans, config, engines, logger);
    logger.info({ sip: endpoint.ports, routes: dialplans.routes.map((route) => route.number) }, 'taking calls');
    return service;
  }

  /** Calls in progress. */
  get activeCalls(): number {
    return this.calls.size;
  }

  private take(dialog: SipDialog): void {
    const route = this.dialplans.route(dialog.calledUser ?? '');
    if (!route) {
      dialog.reject(404);
      return;
    }
    this.admission.track(dialog, dialog.source);
    void this.ports
      .allocate()
      .then((ports) => {
        if (dialog.ended) return ports.release();
        const call = new CallSession(dialog, route, ports, { engines: this.engines, pacer: this.pacer, logger: this.logger, mediaAddress: this.config.advertisedAddress ?? this.config.host, codecs: this.config.codecs });
        this.calls.add(call);
        this.stats.callsStarted += 1;
        call.on('turn-latency', (ms) => {
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

  /** Hangs up every call, then closes the listeners. */
  async close(): Promise<void> {
    await Promise.all([...this.calls].map((call) => call.hangup().catch(() => undefined)));
    await Promise.all([...this.finished]);
    await this.endpoint.close();
    this.pacer.close();
  }
}
