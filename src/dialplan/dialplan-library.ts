/**
 * The dialplans and the trunk file a running gateway uses, kept current: when a file of the
 * folder is changed, added or removed, the whole folder is loaded and checked again; good
 * dialplans take effect for the calls that come after (calls in progress keep the route they
 * started with), a good trunk file goes to whoever follows the trunks; a bad one is refused
 * with its FILE:LINE:COLUMN message in the log and the version before stays. The trunks'
 * `tls_ca_file`s are followed too, wherever they are, so a CA rotated on disk is taken without
 * touching trunks.yaml.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import { loadTrunks, type TrunkConfig } from '../telephony/trunks/trunk-loader.js';
import { isLexiconFile } from '../speech/lexicon-loader.js';
import { DialplanError, loadDialplans, type Dialplans } from './dialplan-loader.js';
import { SettledWatch } from './settled-watch.js';

/**
 * Logs each route and transfer that names a trunk the trunk file does not have: no call would
 * take such a route, and such a transfer fails.
 */
function warnUnknownTrunks(dialplans: Dialplans, trunks: readonly TrunkConfig[], logger: Logger): void {
  const known = (name: string): boolean => trunks.some((trunk) => trunk.name === name);
  for (const route of dialplans.routes) {
    for (const step of route.steps)
      if ('transfer' in step && step.transfer.trunk !== undefined && !known(step.transfer.trunk))
        logger.warn(
          { file: route.file, number: route.number, trunk: step.transfer.trunk },
          `a transfer of the route for ${route.number} in ${route.file} goes through the trunk ${step.transfer.trunk}, which trunks.yaml does not have: it will fail`,
        );
    if (route.trunk !== undefined && !known(route.trunk))
      logger.warn(
        { file: route.file, number: route.number, trunk: route.trunk },
        `the route for ${route.number} in ${route.file} names the trunk ${route.trunk}, which trunks.yaml does not have: no call takes it`,
      );
  }
}

/** The link a Kubernetes ConfigMap or Secret mount swaps to replace its files at once. */
const KUBERNETES_MOUNT_LINK = '..data';

/** The current dialplans of a folder, reloaded as the folder changes. */
export class DialplanLibrary {
  private watcher: SettledWatch | null = null;
  /** Followers of the folders outside this one that hold a trunk's `tls_ca_file`, by folder. */
  private readonly caWatchers = new Map<string, SettledWatch>();
  /** The reload under way: the folder's and the CA folders' watchers take turns through it. */
  private reloading: Promise<void> = Promise.resolve();
  /** Reloads done (good or refused), for logs and tests. */
  reloads = 0;
  private trunkListener: (trunks: readonly TrunkConfig[]) => void = () => {};

  private constructor(
    private readonly directory: string,
    private dialplans: Dialplans,
    private trunkList: readonly TrunkConfig[],
    private readonly logger: Logger,
  ) {}

  /**
   * Loads the folder; a problem stops the start.
   * @throws DialplanError naming the file, line and column of the first problem
   */
  static async open(directory: string, logger: Logger): Promise<DialplanLibrary> {
    const dialplans = await loadDialplans(directory);
    const trunks = await loadTrunks(directory);
    for (const warning of dialplans.warnings) logger.warn(warning.message);
    warnUnknownTrunks(dialplans, trunks, logger);
    return new DialplanLibrary(directory, dialplans, trunks, logger);
  }

  /** The dialplans new calls are routed by. */
  get current(): Dialplans {
    return this.dialplans;
  }

  /** The trunks of the trunk file (none without one). */
  get trunks(): readonly TrunkConfig[] {
    return this.trunkList;
  }

  /** Hears each good trunk file loaded after the start. */
  onTrunks(listener: (trunks: readonly TrunkConfig[]) => void): void {
    this.trunkListener = listener;
  }

  /** Starts following the folder's changes. */
  watch(): void {
    // The lexicon beside the dialplans is followed on its own (speech/lexicon-file.ts).
    const accepts = (name: string | null): boolean =>
      name === null || name === KUBERNETES_MOUNT_LINK || (/\.ya?ml$/.test(name) && !isLexiconFile(name)) || this.caFileNames(this.directory).has(name);
    this.watcher ??= new SettledWatch(this.directory, accepts, () => this.reloadInTurn(), this.logger, 'the dialplan folder');
    this.watcher.start();
    this.followCaFolders();
  }

  /** The names of the current trunks' CA files in `folder`. */
  private caFileNames(folder: string): Set<string> {
    const names = new Set<string>();
    for (const trunk of this.trunkList) if (trunk.tlsCaFile !== null && path.dirname(trunk.tlsCaFile) === folder) names.add(path.basename(trunk.tlsCaFile));
    return names;
  }

  /** Follows each folder outside this one that holds a current trunk's CA file, and no other. */
  private followCaFolders(): void {
    if (!this.watcher) return;
    const folders = new Set(this.trunkList.flatMap((trunk) => (trunk.tlsCaFile === null ? [] : [path.dirname(trunk.tlsCaFile)])));
    folders.delete(this.directory);
    for (const [folder, watcher] of this.caWatchers) {
      if (folders.has(folder)) continue;
      this.caWatchers.delete(folder);
      void watcher.close();
    }
    for (const folder of folders) {
      if (this.caWatchers.has(folder)) continue;
      // Any change in the folder counts: a CA mounted from a Kubernetes Secret is replaced by
      // swapping the folder's ..data link, an event that does not name the CA file.
      const watcher = new SettledWatch(
        folder,
        () => true,
        () => this.reloadInTurn(),
        this.logger,
        `the CA files in ${folder}`,
      );
      try {
        watcher.start();
        this.caWatchers.set(folder, watcher);
      } catch (error) {
        // A folder that cannot be followed (gone, unreadable) leaves the CA to the next reload,
        // which tries to follow it again.
        this.logger.warn(
          { err: error, dir: folder },
          `${folder} cannot be followed: a change to a CA file there is taken with the next change to the dialplan folder`,
        );
      }
    }
  }

  /** {@link reload}, after the one under way: two watchers never reload at once. */
  private reloadInTurn(): Promise<void> {
    this.reloading = this.reloading.then(() => this.reload());
    return this.reloading;
  }

  /**
   * Loads the folder again: good dialplans replace the current ones and a good trunk file the
   * current trunks, each on its own; a bad one is logged and refused.
   */
  async reload(): Promise<void> {
    try {
      try {
        const dialplans = await loadDialplans(this.directory);
        this.dialplans = dialplans;
        for (const warning of dialplans.warnings) this.logger.warn(warning.message);
        this.logger.info({ routes: dialplans.routes.map((route) => route.number) }, 'dialplans reloaded');
      } catch (error) {
        if (!(error instanceof DialplanError)) throw error;
        this.logger.error({ problem: error.message }, `dialplan refused, the version before stays: ${error.message}`);
      }
      try {
        this.trunkList = await loadTrunks(this.directory);
        this.trunkListener(this.trunkList);
        this.followCaFolders();
      } catch (error) {
        if (!(error instanceof DialplanError)) throw error;
        this.logger.error({ problem: error.message }, `trunk file refused, the trunks before stay: ${error.message}`);
      }
      warnUnknownTrunks(this.dialplans, this.trunkList, this.logger);
    } finally {
      this.reloads += 1;
    }
  }

  /** Stops following the folder. */
  async close(): Promise<void> {
    const watchers = [this.watcher, ...this.caWatchers.values()];
    this.watcher = null;
    this.caWatchers.clear();
    await Promise.all(watchers.map((watcher) => watcher?.close()));
  }
}
