import type { SttEngine, SttStream, SttStreamOptions, StreamingSttCapabilities } from '../types.js';
import { EndpointedSttEngine } from './endpointed-engine.js';
import type { DecoderPool } from './worker-pool.js';

/**
 * A native recogniser whose decoders run in a worker pool, behind WebRTC voice activity
 * detection (`loadWebRtcVad()` must have run). Engines subclass it with their own `start`.
 */
export class PooledSttEngine implements SttEngine {
  private readonly inner: EndpointedSttEngine;

  protected constructor(
    readonly id: string,
    readonly capabilities: StreamingSttCapabilities,
    private readonly pool: DecoderPool,
  ) {
    this.inner = new EndpointedSttEngine(id, capabilities, (options) => pool.decoderFor(options));
  }

  /** @throws RecognitionCapacityError when every worker decodes its most streams already. */
  open(options: SttStreamOptions, signal: AbortSignal): SttStream {
    return this.inner.open(options, signal);
  }

  /** Stops the workers; open streams fail. */
  close(): Promise<void> {
    return this.pool.close();
  }
}
