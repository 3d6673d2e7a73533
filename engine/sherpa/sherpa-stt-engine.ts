/**
 * A sherpa-onnx recognition model as a streaming recogniser: streaming transducers and
 * zipformer CTC models give partials as audio arrives; offline models (NeMo CTC, Whisper,
 * SenseVoice, including Swiss German fine-tunes exported to ONNX) decode each utterance that
 * WebRTC voice activity detection closes.
 *
 * sherpa-onnx ends the whole process (not an exception) when a model lacks a metadata key it
 * reads or its token list lacks a blank, so those are checked here first and the model is
 * refused with a message naming the file.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { SherpaModelType } from '../models/model-manifest.js';
import { PooledSttEngine } from '../stt/pooled-engine.js';
import { DecoderPool } from '../stt/worker-pool.js';
import { loadWebRtcVad } from '../vad/webrtc-vad.js';
import { readOnnxMetadata } from './onnx-metadata.js';
import { SHERPA_STT_RATE_HZ, STREAMING_TYPES, type SherpaSttSettings } from './sherpa-stt-protocol.js';

/** A model sherpa-onnx could not run; the message names the file and what is wrong. */
export class SherpaModelError extends Error {
  override name = 'SherpaModelError';
}

/** Metadata keys sherpa-onnx reads without a default, per model type and file role. */
const REQUIRED_METADATA: Partial<Record<SherpaModelType, Readonly<Record<string, readonly string[]>>>> = {
  transducer: { encoder: ['model_type'] },
  'zipformer2-ctc': {
    model: ['encoder_dims', 'query_head_dims', 'value_head_dims', 'num_heads', 'num_encoder_layers', 'cnn_module_kernels', 'left_context_len', 'T', 'decode_chunk_len'],
  },
  'nemo-ctc': { model: ['vocab_size', 'subsampling_factor'] },
  whisper: {
    encoder: ['n_mels', 'n_text_layer', 'n_text_ctx', 'n_text_state', 'n_vocab', 'sot', 'eot', 'blank_id', 'translate', 'transcribe', 'is_multilingual', 'no_timestamps', 'no_speech', 'sot_sequence'],
  },
  'sense-voice': { model: ['vocab_size', 'lfr_window_size', 'lfr_window_shift', 'normalize_samples'] },
};

/** Encoder kinds sherpa-onnx's streaming transducer runs. */
const TRANSDUCER_ENCODERS = ['conformer', 'ebranchformer', 'lstm', 'zipformer', 'zipformer2'];
/** Feature normalisations sherpa-onnx applies for NeMo models (others end the process). */
const NEMO_NORMALISATIONS = ['', 'NA', 'per_feature'];
/** Names CTC decoding takes for the blank token. */
const BLANK_TOKENS = ['<blk>', '<eps>', '<blank>'];

/**
 * Checks the files of a model the way sherpa-onnx will read them.
 * @throws SherpaModelError naming the file and the problem.
 */
export async function checkSherpaModel(type: SherpaModelType, files: Readonly<Record<string, string>>): Promise<void> {
  for (const [role, file] of Object.entries(files)) {
    if (!file.endsWith('.onnx')) continue;
    let metadata: Map<string, string>;
    try {
      metadata = readOnnxMetadata(await readFile(file));
    } catch (error) {
      throw new SherpaModelError(`${file} is not an ONNX model (${(error as Error).message})`);
    }
    const missing = (REQUIRED_METADATA[type]?.[role] ?? []).filter((key) => !metadata.has(key));
    if (missing.length > 0) throw new SherpaModelError(`${file} lacks the metadata sherpa-onnx needs for a ${type} ${role}: ${missing.join(', ')}`);
    if (type === 'transducer' && role === 'encoder' && !TRANSDUCER_ENCODERS.includes(metadata.get('model_type')!)) {
      throw new SherpaModelError(`${file}: encoder model_type "${metadata.get('model_type')}" is not one sherpa-onnx streams (${TRANSDUCER_ENCODERS.join(', ')})`);
    }
    if (type === 'nemo-ctc' && !NEMO_NORMALISATIONS.includes(metadata.get('normalize_type') ?? '')) {
      throw new SherpaModelError(`${file}: normalize_type "${metadata.get('normalize_type')}" is not one sherpa-onnx applies (per_feature or none)`);
    }
  }
  const tokens = files['tokens'];
  if (!tokens) return;
  const lines = (await readFile(tokens, 'utf8')).split('\n').filter((line) => line.trim() !== '');
  if (lines.length === 0) throw new SherpaModelError(`${tokens} is empty`);
  // "<symbol> <id>", or only "<id>" for the space symbol of some character models.
  const bad = lines.findIndex((line) => !/^(\S+\s+)?\d+\s*$/.test(line));
  if (bad >= 0) throw new SherpaModelError(`${tokens}: line ${bad + 1} is not "<symbol> <id>"`);
  if ((type === 'nemo-ctc' || type === 'zipformer2-ctc') && !lines.some((line) => BLANK_TOKENS.includes(line.split(/\s+/)[0]!))) {
    throw new SherpaModelError(`${tokens} has no blank token (${BLANK_TOKENS.join(', ')}), which CTC decoding needs`);
  }
}

/** Options of one sherpa-onnx model's engine. */
export interface SherpaSttEngineOptions {
  readonly id: string;
  readonly type: SherpaModelType;
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
}

/** A sherpa-onnx recognition model behind the streaming contract. */
export class SherpaSttEngine extends PooledSttEngine {
  /**
   * Checks the model, then starts the workers; each has loaded it before this resolves.
   * @throws SherpaModelError for files sherpa-onnx could not run; Error when it refuses them.
   */
  static async start(options: SherpaSttEngineOptions): Promise<SherpaSttEngine> {
    const files = Object.fromEntries(Object.entries(options.paths).map(([role, path]) => [role, join(options.folder, path)]));
    await checkSherpaModel(options.type, files);
    await loadWebRtcVad();
    const settings: SherpaSttSettings = { type: options.type, files, language: options.modelLanguage, threads: 1 };
    const pool = await DecoderPool.start({
      engineId: options.id,
      script: new URL(import.meta.url.endsWith('.js') ? './sherpa-stt-worker.js' : './sherpa-stt-worker.ts', import.meta.url),
      engine: settings,
      workers: options.workers,
      maxStreamsPerWorker: options.maxStreamsPerWorker ?? 8,
      idleDecoders: 4,
    });
    return new SherpaSttEngine(options.id, { languages: options.languages, sampleRatesHz: [SHERPA_STT_RATE_HZ], partials: STREAMING_TYPES.has(options.type), vocabulary: 'none' }, pool);
  }
}
