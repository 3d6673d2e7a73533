/**
 * The dialplans a running gateway uses, kept current: when a file of the folder is changed,
 * added or removed, the whole folder is loaded and checked again; a good folder takes effect for
 * the calls that come after (calls in progress keep the route they started with), a bad one is
 * refused with its FILE:LINE:COLUMN message in the log and the version before stays.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';
import { DialplanError, loadDialplans, type Dialplans } from './dialplan-loader.js';

/** Quiet time after the last change before reloading: editors write a file in several steps. */
const SETTLE_MS = 150;

/** The current dialplans of a folder, reloaded as the folder changes. */
export class DialplanLibrary {
  private watcher: FSWatcher | null = null;
  private settle: NodeJS.Timeout | null = null;
  private reloading: Promise<void> = Promise.resolve();
  /** Reloads done (good or refused), for logs and tests. */
  reloads = 0;

  private constructor(
    private readonly directory: string,
    private dialplans: Dialplans,
    private readonly logger: Logger,
  ) {}

  /**
   * Loads the folder; a problem stops the start.
   * @throws DialplanError naming the file, line and column of the first problem
   */
  static async open(directory: string, logger: Logger): Promise<DialplanLibrary> {
    const dialplans = await loadDialplans(directory);
    for (const warning of dialplans.warnings) logger.warn(warning.message);
    return new DialplanLibrary(directory, dialplans, logger);
  }

  /** The dialplans new calls are routed by. */
  get current(): Dialplans {
    return this.dialplans;
  }

  /** Starts following the folder's changes. */
  watch(): void {
    if (this.watcher) return;
    this.watcher = watch(this.directory, (_event, name) => {
      if (name !== null && !/\.ya?ml$/.test(name)) return;
      if (this.settle) clearTimeout(this.settle);
      this.settle = setTimeout(() => {
        this.settle = null;
        this.reloading = this.reloading.then(() => this.reload());
      }, SETTLE_MS);
    });
    this.watcher.on('error', (error) => this.logger.error({ err: error, dir: this.directory }, 'the dialplan folder can no longer be watched'));
  }

  /** Loads the folder again: a good one replaces the current dialplans, a bad one is logged and refused. */
  async reload(): Promise<void> {
    try {
      const dialplans = await loadDialplans(this.directory);
      this.dialplans = dialplans;
      for (const warning of dialplans.warnings) this.logger.warn(warning.message);
      this.logger.info({ routes: dialplans.routes.map((route) => route.number) }, 'dialplans reloaded');
    } catch (error) {
      if (!(error instanceof DialplanError)) throw error;
      this.logger.error({ problem: error.message }, `dialplan refused, the version before stays: ${error.message}`);
    } finally {
      this.reloads += 1;
    }
  }

  /** Stops following the folder. */
  async close(): Promise<void> {
    if (this.settle) clearTimeout(this.settle);
    this.watcher?.close();
    this.watcher = null;
    await this.reloading;
  }
}
