/**
 * The trunks of the running gateway: one registration for each trunk that registers and an
 * OPTIONS keep-alive for each that pings, kept in step with the trunk file (a reload starts new
 * trunks, stops removed ones with their binding removed, and restarts changed ones), and their
 * state for `GET /v1/trunks`.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Logger } from 'pino';
import type { TrunkConfig } from './trunk-loader.js';
import { TrunkKeepAlive, type KeepAliveStatus } from './trunk-keepalive.js';
import {
  DEFAULT_REGISTRATION_TIMING,
  TrunkRegistration,
  type RegistrarClient,
  type RegistrationStatus,
  type RegistrationTiming,
} from './trunk-registration.js';

/** One trunk as the API shows it. */
export interface TrunkStatus {
  readonly name: string;
  /** `host:port` of the registrar, or null. */
  readonly registrar: string | null;
  /** `host:port` where requests to the trunk go. */
  readonly proxy: string | null;
  readonly transport: string;
  readonly maxCalls: number;
  /** Null for a trunk that does not register. */
  readonly registration: RegistrationStatus | null;
  /** The OPTIONS keep-alive's last finding; null when it is off (`options_interval_s: 0`). */
  readonly keepalive: KeepAliveStatus | null;
}

const hostPort = (target: { host: string; port: number } | null): string | null =>
  target ? `${target.host.includes(':') ? `[${target.host}]` : target.host}:${target.port}` : null;

/** The trunks and their registrations. */
export class TrunkService {
  private trunks: TrunkConfig[] = [];
  private readonly registrations = new Map<string, TrunkRegistration>();
  private readonly keepalives = new Map<string, TrunkKeepAlive>();
  private readonly stopping = new Set<Promise<void>>();
  /** The state and error last logged for each registration. */
  private readonly logged = new WeakMap<TrunkRegistration, string>();

  constructor(
    private readonly client: RegistrarClient,
    private readonly logger: Logger,
    private readonly timing: RegistrationTiming = DEFAULT_REGISTRATION_TIMING,
  ) {}

  /** Takes a (re)loaded trunk list: registrations and keep-alives start, stop or restart to match it. */
  apply(trunks: readonly TrunkConfig[]): void {
    const before = new Map(this.trunks.map((trunk) => [trunk.name, trunk]));
    this.trunks = [...trunks];
    const unchanged = (name: string): TrunkConfig | undefined => {
      const now = trunks.find((trunk) => trunk.name === name);
      return now && isDeepStrictEqual(now, before.get(name)) ? now : undefined;
    };
    /** Registrations being removed, by trunk: a changed trunk registers again only after its old binding is gone. */
    const removing = new Map<string, Promise<void>>();
    for (const [name, registration] of this.registrations) {
      if (unchanged(name)?.register) continue;
      this.registrations.delete(name);
      removing.set(name, this.stopInBackground(registration.stop()));
    }
    for (const [name, keepalive] of this.keepalives) {
      if (unchanged(name)) continue;
      this.keepalives.delete(name);
      this.stopInBackground(keepalive.stop());
    }
    for (const trunk of trunks) {
      if (trunk.register && !this.registrations.has(trunk.name)) {
        const registration = new TrunkRegistration(trunk, this.client, this.timing, () => this.report(registration));
        this.registrations.set(trunk.name, registration);
        // The old binding's removal (Expires: 0 for the same Contact) must not cross the new REGISTER.
        const previous = removing.get(trunk.name);
        if (previous) void previous.then(() => this.registrations.get(trunk.name) === registration && registration.start());
        else registration.start();
      }
      if (trunk.optionsIntervalSeconds > 0 && trunk.proxy && !this.keepalives.has(trunk.name)) {
        const keepalive = new TrunkKeepAlive(trunk, this.client, () => this.reportReachability(keepalive));
        this.keepalives.set(trunk.name, keepalive);
        keepalive.start();
      }
    }
  }

  /** The trunk called `name`, if configured. */
  find(name: string): TrunkConfig | undefined {
    return this.trunks.find((trunk) => trunk.name === name);
  }

  /** Every trunk with its registration's state, in the file's order. */
  status(): TrunkStatus[] {
    return this.trunks.map((trunk) => ({
      ...TrunkService.describe(trunk),
      registration: this.registrations.get(trunk.name)?.status() ?? null,
      keepalive: this.keepalives.get(trunk.name)?.status() ?? null,
    }));
  }

  /** What the API shows of a trunk's configuration (never its credentials). */
  static describe(trunk: TrunkConfig): Omit<TrunkStatus, 'registration' | 'keepalive'> {
    return { name: trunk.name, registrar: hostPort(trunk.registrar), proxy: hostPort(trunk.proxy), transport: trunk.transport, maxCalls: trunk.maxCalls };
  }

  /** Stops every registration, removing the bindings (each bounded by the unregister timeout), and every keep-alive. */
  async close(): Promise<void> {
    const stops = [...this.registrations.values(), ...this.keepalives.values()].map((part) => part.stop());
    this.registrations.clear();
    this.keepalives.clear();
    await Promise.all([...stops, ...this.stopping]);
  }

  /** Lets a stop run on; {@link close} waits for it. Resolves when it is done. */
  private stopInBackground(stop: Promise<void>): Promise<void> {
    const stopped = stop.finally(() => this.stopping.delete(stopped));
    this.stopping.add(stopped);
    return stopped;
  }

  private reportReachability(keepalive: TrunkKeepAlive): void {
    const status = keepalive.status();
    const fields = { trunk: keepalive.trunk.name, roundTripMs: status.roundTripMs, status: status.lastStatus };
    if (status.reachable) this.logger.info(fields, 'trunk reachable (OPTIONS answered)');
    else this.logger.warn({ ...fields, error: status.lastError }, 'trunk unreachable (OPTIONS unanswered)');
  }

  /** Logs a registration's changes of state (not each refresh). */
  private report(registration: TrunkRegistration): void {
    const status = registration.status();
    const seen = `${status.state}|${status.lastError}`;
    if (this.logged.get(registration) === seen) return;
    this.logged.set(registration, seen);
    const fields = { trunk: registration.trunk.name, state: status.state, failures: status.failures, expiresAt: status.expiresAt };
    if (status.state === 'registered' && status.lastError === null) this.logger.info(fields, 'trunk registered');
    else if (status.lastError) this.logger.warn({ ...fields, error: status.lastError, nextAttemptAt: status.nextAttemptAt }, 'trunk registration failed');
    else this.logger.info(fields, 'trunk registration changed');
  }
}
