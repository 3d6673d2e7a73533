/**
 * Whether the instance should be sent new work (`GET /readyz`): it has started every part (the
 * engines are loaded and warm, the phone side takes calls, the job runner runs), its store
 * answers a read, and it is not draining. A load balancer takes an instance out on the first
 * 503 and back on the first 200, so the answer names every reason it is not ready; the reasons
 * are open to anyone who reaches the port, so a store's error (addresses, names) goes to the
 * log, not into the answer.
 */
import type { Logger } from 'pino';
import type { Drain } from './drain.js';

/** How long the store's read may take before the store counts as unreachable. */
export const STORE_PROBE_TIMEOUT_MS = 2000;

/** The answer of a readiness check. */
export interface ReadinessReport {
  readonly ready: boolean;
  /** Why not, one line each (empty when ready). */
  readonly reasons: readonly string[];
}

/** The readiness of one process. */
export class Readiness {
  private startedParts = false;

  /**
   * @param probeStore a cheap read of the store; it rejects (or outlasts
   *   {@link STORE_PROBE_TIMEOUT_MS}) when the store cannot be reached
   */
  constructor(
    private readonly drain: Drain,
    private readonly probeStore: () => Promise<unknown>,
    private readonly logger: Logger,
  ) {}

  /** Marks every part as started: the engines, the phone side, the job runner. */
  markStarted(): void {
    this.startedParts = true;
  }

  /** Checks every condition (the store's read included) and names those that fail. */
  async check(): Promise<ReadinessReport> {
    const reasons: string[] = [];
    if (!this.startedParts) reasons.push('starting: engines, calls or jobs are not running yet');
    const store = await this.storeProblem();
    if (store) {
      this.logger.warn({ problem: store }, 'readiness: the store did not answer its read');
      reasons.push('store unreachable: its read failed or took too long (the log has the error)');
    }
    const drain = this.drain.started;
    if (drain) reasons.push(`draining since ${new Date(drain.atMs).toISOString()} (${drain.reason}): the instance is about to stop`);
    return { ready: reasons.length === 0, reasons };
  }

  private async storeProblem(): Promise<string | null> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<string>((resolve) => {
      timer = setTimeout(() => resolve(`no answer within ${STORE_PROBE_TIMEOUT_MS} ms`), STORE_PROBE_TIMEOUT_MS);
    });
    try {
      return await Promise.race([this.probeStore().then(() => null), late]);
    } catch (error) {
      return error instanceof Error ? error.message : String(error);
    } finally {
      clearTimeout(timer);
    }
  }
}
