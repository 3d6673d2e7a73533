import type { SttEngine, SttStream, SttStreamOptions, StreamingSttCapabilities } from '../types.js';
import { DEFAULT_ENDPOINTER_OPTIONS, type EndpointerOptions } from '../vad/endpointer.js';
import type { FrameClassifierFactory } from '../vad/frame-classifier.js';
import { WebRtcVad } from '../vad/webrtc-vad.js';
import { EndpointedStream, type UtteranceDecoder } from './endpointed-stream.js';

/**
 * A streaming engine made of an utterance decoder per stream and voice activity detection for
 * endpointing: WebRTC's detector (`loadWebRtcVad()` must have run) unless another is given.
 */
export class EndpointedSttEngine implements SttEngine {
  constructor(
    readonly id: string,
    readonly capabilities: StreamingSttCapabilities,
    private readonly makeDecoder: (options: SttStreamOptions) => UtteranceDecoder,
    private readonly detectorFor: FrameClassifierFactory = (rateHz) => WebRtcVad.create(rateHz),
    private readonly endpointer: EndpointerOptions = DEFAULT_ENDPOINTER_OPTIONS,
  ) {}

  open(options: SttStreamOptions, signal: AbortSignal): SttStream {
    if (!this.capabilities.languages.includes(options.language)) throw new RangeError(`${this.id} does not recognise ${options.language}`);
    if (!this.capabilities.sampleRatesHz.includes(options.sampleRateHz)) {
      throw new RangeError(`${this.id} decodes ${this.capabilities.sampleRatesHz.join(' or ')} Hz, not ${options.sampleRateHz}`);
    }
    const vad = this.detectorFor(options.sampleRateHz);
    try {
      const endpointer = options.endSilenceMs === undefined ? this.endpointer : { ...this.endpointer, hangoverMs: options.endSilenceMs };
      return new EndpointedStream(this.makeDecoder(options), vad, options.sampleRateHz, signal, endpointer);
    } catch (error) {
      vad.close();
      throw error;
    }
  }
}
