import type { EngineLoad, SttEngine, SttStream, SttStreamOptions, StreamingSttCapabilities } from '../types.js';
import { EndpointedSttEngine } from './endpointed-engine.js';
import type { FrameClassifierFactory } from '../vad/frame-classifier.js';
import type { DecoderPool } from './worker-pool.js';

/**
 * A native recogniser whose decoders run in a worker pool, behind voice activity detection
 * (WebRTC's unless a detector factory is given; `loadWebRtcVad()` must have run). Engines
 * subclass it with their own `start`.
 */
export class PooledSttEngine implements SttEngine {
  private readonly inner: EndpointedSttEngine;

  protected constructor(
    readonly id: string,
    readonly capabilities: StreamingSttCapabilities,
    private readonly pool: DecoderPool,
    detectorFor?: FrameClassifierFactory,
  ) {
    this.inner = new EndpointedSttEngine(id, capabilities, (options) => pool.decoderFor(options), detectorFor);
  }

  /** @throws RecognitionCapacityError when every worker decodes its most streams already. */
  open(options: SttStreamOptions, signal: AbortSignal): SttStream {
    return this.inner.open(options, signal);
  }

  load(): EngineLoad {
    return this.pool.load();
  }

  /** Stops the workers; open streams fail. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
