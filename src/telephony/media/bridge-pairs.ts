/**
 * Which calls of the media thread are bridged to which. The main thread may bridge a call whose
 * media has not started yet (no session); the bridge then begins once both sessions exist. A
 * call is in one bridge at most: bridging it again, unbridging it, or closing it ends the bridge
 * for both calls.
 */
import { MediaBridge, type BridgeableLeg } from './media-bridge.js';

/** The bridges of one media thread, by call id. */
export class BridgePairs {
  private readonly partners = new Map<number, number>();
  private readonly bridges = new Map<number, MediaBridge>();

  /**
   * @param sessionOf a call's session, or null before its media started (or after it closed)
   * @param onChange told how many bridges are running whenever that changes
   */
  constructor(
    private readonly sessionOf: (id: number) => BridgeableLeg | null,
    private readonly onChange: (running: number) => void,
  ) {}

  /** Bridges running (both calls have media). */
  get running(): number {
    return this.bridges.size / 2;
  }

  /** Bridges calls `a` and `b`, each leaving any bridge it was in. */
  join(a: number, b: number): void {
    if (a === b || this.partners.get(a) === b) return;
    this.leave(a);
    this.leave(b);
    this.partners.set(a, b);
    this.partners.set(b, a);
    this.started(a);
  }

  /** Call `id`'s session has started: its bridge begins if the other call has media too. */
  started(id: number): void {
    const other = this.partners.get(id);
    if (other === undefined || this.bridges.has(id)) return;
    const mine = this.sessionOf(id);
    const theirs = this.sessionOf(other);
    if (!mine || !theirs) return;
    const bridge = new MediaBridge(mine, theirs);
    this.bridges.set(id, bridge);
    this.bridges.set(other, bridge);
    this.onChange(this.running);
  }

  /** Ends call `id`'s bridge, for both calls (unbridged, or `id` is closing). */
  leave(id: number): void {
    const other = this.partners.get(id);
    if (other === undefined) return;
    this.partners.delete(id);
    this.partners.delete(other);
    const bridge = this.bridges.get(id);
    if (!bridge) return;
    this.bridges.delete(id);
    this.bridges.delete(other);
    bridge.end();
    this.onChange(this.running);
  }
}
