/**
 * Two calls' media joined in the media thread (a transfer: the caller and the person it was
 * put through to): what each caller sends goes out to the other at once, on arrival, not on the
 * next tick of the pacer, so the bridge adds no more than the thread's own wait to the delay.
 * While joined, neither call plays prompts; each still hears its caller (keys, voice, audio to
 * the main thread), and each keeps its own RTCP.
 */
import { RtpForwarder, type BridgeLeg } from './rtp-forwarder.js';

/** A call that can be bridged (a `MediaSession`). */
export interface BridgeableLeg extends BridgeLeg {
  /** Joins a bridge: prompts stop, and every packet accepted from the caller goes to `forwarder` as it arrives. */
  joinBridge(forwarder: RtpForwarder): void;
  /** Leaves the bridge: prompts may play again, our stream going on after what was forwarded. */
  leaveBridge(): void;
}

/** Two calls joined both ways. */
export class MediaBridge {
  private ended = false;

  constructor(
    private readonly a: BridgeableLeg,
    private readonly b: BridgeableLeg,
  ) {
    a.joinBridge(new RtpForwarder(a, b));
    b.joinBridge(new RtpForwarder(b, a));
  }

  /** Separates the calls (unbridged, or one of them ends). */
  end(): void {
    if (this.ended) return;
    this.ended = true;
    this.a.leaveBridge();
    this.b.leaveBridge();
  }
}
