/**
 * A Vosk (Kaldi) model folder as a streaming recogniser: the model loads once per worker
 * thread, each stream gets its own recogniser, WebRTC voice activity detection ends
 * utterances. Vocabulary becomes a grammar on models with a lookahead graph (the "small"
 * models); models with a static graph ignore it and say so in their capabilities.
 */
import { PooledSttEngine } from '../stt/pooled-engine.js';
import { DecoderPool } from '../stt/worker-pool.js';
import type { FrameClassifierFactory } from '../vad/frame-classifier.js';
import { loadWebRtcVad } from '../vad/webrtc-vad.js';
import { readVoskModelLayout } from './vosk-model.js';
import type { VoskWorkerSettings } from './vosk-worker.js';

/** Options of one Vosk model's engine. */
export interface VoskEngineOptions {
  /** The model folder (`am/`, `conf/`, `graph/`). */
  readonly folder: string;
  /** Engine id shown in capabilities and errors (`vosk:<model name>`). */
  readonly id: string;
  /** Language codes the model serves. */
  readonly languages: readonly string[];
  readonly workers: number;
  /** Streams one worker decodes at once before new ones are refused (default 8). */
  readonly maxStreamsPerWorker?: number;
  /** `libvosk.so` to load instead of the `vosk` package's. */
  readonly libraryPath?: string;
  /** Voice activity detector per stream (default: WebRTC's). */
  readonly detectorFor?: FrameClassifierFactory;
}

/** A Vosk model behind the streaming contract. */
export class VoskEngine extends PooledSttEngine {
  /**
   * Checks the folder, then starts the workers; each has loaded the model before this resolves.
   * @throws VoskModelError for a folder without a model's layout; Error when Vosk refuses it.
   */
  static async start(options: VoskEngineOptions): Promise<VoskEngine> {
    const layout = await readVoskModelLayout(options.folder);
    await loadWebRtcVad();
    const settings: VoskWorkerSettings = { layout, libraryPath: options.libraryPath ?? null };
    const pool = await DecoderPool.start({
      engineId: options.id,
      script: { base: import.meta.url, name: 'vosk-worker' },
      engine: settings,
      workers: options.workers,
      maxStreamsPerWorker: options.maxStreamsPerWorker ?? 8,
      idleDecoders: 4,
    });
    return new VoskEngine(
      options.id,
      { languages: options.languages, sampleRatesHz: [layout.sampleRateHz], partials: true, vocabulary: layout.dynamicGraph ? 'grammar' : 'none' },
      pool,
      options.detectorFor,
    );
  }
}
