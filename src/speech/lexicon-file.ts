/**
 * The deployment lexicon a running gateway speaks with, kept current: loaded at start (a bad
 * one stops the start with its FILE:LINE:COLUMN), then followed — when the file is changed,
 * added or removed, it is loaded and checked again, and a good one replaces the renderer's
 * lexicon for every synthesis that starts after (HTTP, realtime, jobs, calls); a bad one is
 * refused with its message in the log and the one before stays.
 */
import path from 'node:path';
import type { Logger } from 'pino';
import type { DialectRenderer } from '../../engine/dialect/dialect-renderer.js';
import { SettledWatch } from '../dialplan/settled-watch.js';
import { DialplanError } from '../dialplan/yaml-file.js';
import { LEXICON_FILE_NAMES, loadLexicon, type LexiconLocation, type LoadedLexicon } from './lexicon-loader.js';

/** The lexicon file of a deployment and the renderer it feeds. */
export class LexiconFile {
  private watcher: SettledWatch | null = null;
  /** Reloads done (good or refused), for logs and tests. */
  reloads = 0;

  private constructor(
    private readonly location: LexiconLocation,
    private readonly renderer: DialectRenderer,
    private readonly logger: Logger,
    /** The file in use, or null while there is none. */
    private current: string | null,
  ) {}

  /**
   * Loads the lexicon and gives it to the renderer; a problem stops the start.
   * @throws DialplanError naming the file, line and column of the first problem
   */
  static async open(location: LexiconLocation, renderer: DialectRenderer, logger: Logger): Promise<LexiconFile> {
    return LexiconFile.follow(location, renderer, logger, await loadLexicon(location));
  }

  /** Gives a lexicon loaded before (see {@link loadLexicon}) to the renderer, to follow its file from there. */
  static follow(location: LexiconLocation, renderer: DialectRenderer, logger: Logger, loaded: LoadedLexicon | null): LexiconFile {
    renderer.setLexicon(loaded?.lexicon ?? null);
    if (loaded) logger.info({ file: loaded.file, entries: loaded.lexicon.size }, 'deployment lexicon');
    return new LexiconFile(location, renderer, logger, loaded?.file ?? null);
  }

  /** The file in use (null: none). */
  get file(): string | null {
    return this.current;
  }

  /** Starts following the file (its folder, so that a file written anew or added is seen). */
  watch(): void {
    const directory = this.location.file ? path.dirname(this.location.file) : this.location.directory;
    const names: readonly string[] = this.location.file ? [path.basename(this.location.file)] : LEXICON_FILE_NAMES;
    this.watcher ??= new SettledWatch(
      directory,
      (name) => name === null || names.includes(name),
      () => this.reload(),
      this.logger,
      'the lexicon folder',
    );
    try {
      this.watcher.start();
    } catch (error) {
      this.logger.error({ err: error, dir: directory }, 'the lexicon folder cannot be watched: lexicon changes need a restart');
    }
  }

  /** Loads the file again: a good one (or none) replaces the renderer's lexicon; a bad one is logged and refused. */
  async reload(): Promise<void> {
    try {
      const loaded = await loadLexicon(this.location);
      this.renderer.setLexicon(loaded?.lexicon ?? null);
      this.current = loaded?.file ?? null;
      if (loaded) this.logger.info({ file: loaded.file, entries: loaded.lexicon.size }, 'lexicon reloaded');
      else this.logger.info({ dir: this.location.directory }, 'lexicon removed: rendering uses the built-in data alone');
    } catch (error) {
      if (!(error instanceof DialplanError)) throw error;
      this.logger.error({ problem: error.message }, `lexicon refused, the one before stays: ${error.message}`);
    } finally {
      this.reloads += 1;
    }
  }

  /** Stops following the file. */
  async close(): Promise<void> {
    await this.watcher?.close();
  }
}
