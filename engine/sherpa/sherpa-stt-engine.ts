/**
 * A sherpa-onnx recognition model as a streaming recogniser: streaming transducers and
 * zipformer CTC models give partials as audio arrives; offline models (NeMo CTC, Whisper,
 * SenseVoice, including Swiss German fine-tunes exported to ONNX) decode each utterance that
 * voice activity detection closes. The files are checked first (`sherpa-model-check.ts`).
 */
import { join } from 'node:path';
import type { SherpaRecogniserType } from '../models/model-manifest.js';
import { PooledSttEngine } from '../stt/pooled-engine.js';
import { DecoderPool } from '../stt/worker-pool.js';
import type { FrameClassifierFactory } from '../vad/frame-classifier.js';
import { loadWebRtcVad } from '../vad/webrtc-vad.js';
import { checkSherpaModel } from './sherpa-model-check.js';
import { SHERPA_STT_RATE_HZ, STREAMING_TYPES, type SherpaSttSettings } from './sherpa-stt-protocol.js';

/** Options of one sherpa-onnx model's engine. */
export interface SherpaSttEngineOptions {
  readonly id: string;
  readonly type: SherpaRecogniserType;
  readonly folder: string;
  /** Paths inside the folder, by role (`encoder`, `tokens`, …). */
  readonly paths: Readonly<Record<string, string>>;
  /** Language codes it serves. */
  readonly languages: readonly string[];
  /** Language a Whisper or SenseVoice model is told to expect; empty: it detects. */
  readonly modelLanguage: string;
  readonly workers: number;
  /** Streams one worker decodes at once before new ones are refused (default 8). */
  readonly maxStreamsPerWorker?: number;
  /** Voice activity detector per stream (default: WebRTC's). */
  readonly detectorFor?: FrameClassifierFactory;
}

/** A sherpa-onnx recognition model behind the streaming contract. */
export class SherpaSttEngine extends PooledSttEngine {
  /**
   * Checks the model, then starts the workers; each has loaded it before this resolves.
   * @throws SherpaModelError for files sherpa-onnx could not run; Error when it refuses them.
   */
  static async start(options: SherpaSttEngineOptions): Promise<SherpaSttEngine> {
    const files = Object.fromEntries(Object.entries(options.paths).map(([role, path]) => [role, join(options.folder, path)]));
    await checkSherpaModel(options.type, files, { language: options.modelLanguage });
    await loadWebRtcVad();
    const settings: SherpaSttSettings = { type: options.type, files, language: options.modelLanguage, threads: 1 };
    const pool = await DecoderPool.start({
      engineId: options.id,
      script: { base: import.meta.url, name: 'sherpa-stt-worker' },
      engine: settings,
      workers: options.workers,
      maxStreamsPerWorker: options.maxStreamsPerWorker ?? 8,
      idleDecoders: 4,
    });
    return new SherpaSttEngine(
      options.id,
      { languages: options.languages, sampleRatesHz: [SHERPA_STT_RATE_HZ], partials: STREAMING_TYPES.has(options.type), vocabulary: 'none' },
      pool,
      options.detectorFor,
    );
  }
}
