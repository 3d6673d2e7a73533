/**
 * Keeps the keys of open realtime sessions under watch: a key is authenticated once, at the
 * upgrade, but a session may last hours. A key revoked (by `sprachrohr keys revoke`, perhaps in
 * another process writing the same store) or whose rotation overlap ends must stop working in
 * its open sessions too, within a second.
 */
import type { Principal } from '../auth/authenticate.js';
import { refusalOf } from '../auth/authenticate.js';
import type { KeyService } from '../auth/key-service.js';
import type { ApiError, ErrorFamily } from '../api/errors.js';

/** How often the keys of open sessions are looked up again: well inside the promised second. */
export const KEY_RECHECK_MS = 400;

/** Told why the session's key may no longer act. */
export type KeyRefusalHandler = (refusal: ApiError) => void;

interface Watcher {
  readonly family: ErrorFamily;
  readonly onRefused: KeyRefusalHandler;
}

/**
 * One lookup per distinct key per {@link KEY_RECHECK_MS}, whatever the number of its sessions
 * (a lookup by id is one indexed read). The timer runs only while a session is open.
 */
export class KeyWatch {
  private readonly watchers = new Map<string, Set<Watcher>>();
  private timer: NodeJS.Timeout | null = null;
  private checking = false;

  constructor(
    private readonly keys: KeyService,
    private readonly log: (error: unknown) => void,
    private readonly intervalMs = KEY_RECHECK_MS,
  ) {}

  /**
   * Watches a session's key until the returned function is called (the session closed).
   * `onRefused` is called at most once.
   */
  watch(principal: Principal, family: ErrorFamily, onRefused: KeyRefusalHandler): () => void {
    const watcher: Watcher = { family, onRefused };
    let set = this.watchers.get(principal.keyId);
    if (!set) this.watchers.set(principal.keyId, (set = new Set()));
    set.add(watcher);
    this.timer ??= setInterval(() => void this.check(), this.intervalMs).unref();
    return () => this.unwatch(principal.keyId, watcher);
  }

  /** Stops the timer (the transport is closing). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    this.watchers.clear();
  }

  private unwatch(keyId: string, watcher: Watcher): void {
    const set = this.watchers.get(keyId);
    if (!set?.delete(watcher)) return;
    if (set.size === 0) this.watchers.delete(keyId);
    if (this.watchers.size === 0 && this.timer) {
      clearInterval(this.timer);
      this.timer = null;
    }
  }

  private async check(): Promise<void> {
    // A slow store must not pile up lookups: a round still running skips this beat.
    if (this.checking) return;
    this.checking = true;
    try {
      for (const keyId of [...this.watchers.keys()]) {
        const lookup = await this.keys.statusOf(keyId);
        if (lookup.status === 'active' || lookup.status === 'superseded') continue;
        for (const watcher of [...(this.watchers.get(keyId) ?? [])]) {
          this.unwatch(keyId, watcher);
          watcher.onRefused(refusalOf(lookup, watcher.family)!);
        }
      }
    } catch (error) {
      this.log(error);
    } finally {
      this.checking = false;
    }
  }
}
