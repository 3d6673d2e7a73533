/**
 * Following configuration files in a folder (the dialplans, the trunk file, the lexicon): a
 * change is acted on once the folder has been quiet for a moment, one reload at a time.
 */
import { watch, type FSWatcher } from 'node:fs';
import type { Logger } from 'pino';

/** Quiet time after the last change before reloading: editors write a file in several steps. */
const SETTLE_MS = 150;

/** A folder followed for changes to some of its files. */
export class SettledWatch {
  private watcher: FSWatcher | null = null;
  private settle: NodeJS.Timeout | null = null;
  private reloading: Promise<void> = Promise.resolve();

  /**
   * @param accepts whether a change to the file of this name (null: unknown) calls for a reload
   * @param reload runs after the changes settled; never two at once
   * @param what the files, as log lines name them ("the dialplan folder")
   */
  constructor(
    private readonly directory: string,
    private readonly accepts: (name: string | null) => boolean,
    private readonly reload: () => Promise<void>,
    private readonly logger: Logger,
    private readonly what: string,
  ) {}

  /** Starts following the folder. */
  start(): void {
    if (this.watcher) return;
    this.watcher = watch(this.directory, (_event, name) => {
      if (!this.accepts(name)) return;
      if (this.settle) clearTimeout(this.settle);
      this.settle = setTimeout(() => {
        this.settle = null;
        this.reloading = this.reloading.then(() => this.reload());
      }, SETTLE_MS);
    });
    this.watcher.on('error', (error) => this.logger.error({ err: error, dir: this.directory }, `${this.what} can no longer be watched`));
  }

  /** Stops following the folder; waits for a reload under way. */
  async close(): Promise<void> {
    if (this.settle) clearTimeout(this.settle);
    this.watcher?.close();
    this.watcher = null;
    await this.reloading;
  }
}
