/** What a sherpa-onnx recogniser worker loads. */
import type { SherpaRecogniserType } from '../models/model-manifest.js';

export interface SherpaSttSettings {
  readonly type: SherpaRecogniserType;
  /** Absolute paths of the files the type needs, by role (`encoder`, `tokens`, …). */
  readonly files: Readonly<Record<string, string>>;
  /** Language a Whisper or SenseVoice model is told to expect (`de`); empty: it detects. */
  readonly language: string;
  /** Threads onnxruntime uses per decode. */
  readonly threads: number;
}

/** Rate every sherpa-onnx recogniser family used here decodes. */
export const SHERPA_STT_RATE_HZ = 16000;

/** Model types that decode while audio arrives (partials); the others decode each utterance. */
export const STREAMING_TYPES: ReadonlySet<SherpaRecogniserType> = new Set(['transducer', 'zipformer2-ctc']);
