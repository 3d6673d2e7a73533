/**
 * Checks sherpa-onnx model files the way sherpa-onnx will read them. sherpa-onnx ends the
 * whole process (not an exception) when a model lacks a metadata key it reads or its token
 * list lacks a blank, so models are checked here first and refused with a message naming the
 * file.
 */
import { readFile } from 'node:fs/promises';
import type { SherpaModelType } from '../models/model-manifest.js';
import { readOnnxGraphIo, readOnnxMetadata } from './onnx-metadata.js';

/** A model sherpa-onnx could not run; the message names the file and what is wrong. */
export class SherpaModelError extends Error {
  override name = 'SherpaModelError';
}

/** What sherpa-onnx reads from a Whisper encoder without a default. */
const WHISPER_ENCODER_METADATA = [
  'n_mels',
  'n_text_layer',
  'n_text_ctx',
  'n_text_state',
  'n_vocab',
  'sot',
  'eot',
  'blank_id',
  'translate',
  'transcribe',
  'is_multilingual',
  'no_timestamps',
  'no_speech',
  'sot_sequence',
];

/** What a Zipformer2 encoder must say about itself, streaming transducer or CTC. */
const ZIPFORMER2_METADATA: readonly string[] = [
  'encoder_dims',
  'query_head_dims',
  'value_head_dims',
  'num_heads',
  'num_encoder_layers',
  'cnn_module_kernels',
  'left_context_len',
  'T',
  'decode_chunk_len',
];

/** Metadata keys sherpa-onnx reads without a default, per model type and file role. */
const REQUIRED_METADATA: Partial<Record<SherpaModelType, Readonly<Record<string, readonly string[]>>>> = {
  transducer: { encoder: ['model_type'], decoder: ['vocab_size', 'context_size'] },
  'zipformer2-ctc': { model: ZIPFORMER2_METADATA },
  'nemo-ctc': { model: ['vocab_size', 'subsampling_factor'] },
  whisper: { encoder: WHISPER_ENCODER_METADATA },
  'language-id': { encoder: WHISPER_ENCODER_METADATA },
  'sense-voice': { model: ['vocab_size', 'lfr_window_size', 'lfr_window_shift', 'normalize_samples'] },
};

/** What each kind of streaming transducer encoder must say about itself. */
const TRANSDUCER_ENCODER_METADATA: Readonly<Record<string, readonly string[]>> = {
  conformer: ['num_encoder_layers', 'T', 'decode_chunk_len', 'left_context', 'encoder_dim', 'pad_length', 'cnn_module_kernel'],
  ebranchformer: [
    'decode_chunk_len',
    'T',
    'num_hidden_layers',
    'hidden_size',
    'intermediate_size',
    'csgu_kernel_size',
    'merge_conv_kernel',
    'left_context_len',
    'num_heads',
    'head_dim',
  ],
  lstm: ['num_encoder_layers', 'T', 'decode_chunk_len', 'rnn_hidden_size', 'd_model'],
  zipformer: ['encoder_dims', 'attention_dims', 'num_encoder_layers', 'cnn_module_kernels', 'left_context_len', 'T', 'decode_chunk_len'],
  zipformer2: ZIPFORMER2_METADATA,
};
/** Encoder kinds sherpa-onnx's streaming transducer runs. */
const TRANSDUCER_ENCODERS = Object.keys(TRANSDUCER_ENCODER_METADATA);
/** Feature normalisations sherpa-onnx applies for NeMo models (others end the process). */
const NEMO_NORMALISATIONS = ['', 'NA', 'per_feature'];
/** Names CTC decoding takes for the blank token. */
const BLANK_TOKENS = ['<blk>', '<eps>', '<blank>'];

/**
 * Checks the files of a model the way sherpa-onnx will read them.
 * `language` is the one a Whisper recogniser is told to expect (it must be one the model knows).
 * @throws SherpaModelError naming the file and the problem.
 */
export async function checkSherpaModel(type: SherpaModelType, files: Readonly<Record<string, string>>, options: { language?: string } = {}): Promise<void> {
  for (const [role, file] of Object.entries(files)) {
    if (!file.endsWith('.onnx')) continue;
    let metadata: Map<string, string>;
    try {
      const bytes = await readFile(file);
      readOnnxGraphIo(bytes);
      metadata = readOnnxMetadata(bytes);
    } catch (error) {
      throw new SherpaModelError(`${file} is not an ONNX model (${(error as Error).message})`);
    }
    const missing = (REQUIRED_METADATA[type]?.[role] ?? []).filter((key) => !metadata.has(key));
    if (missing.length > 0) throw new SherpaModelError(`${file} lacks the metadata sherpa-onnx needs for a ${type} ${role}: ${missing.join(', ')}`);
    if (type === 'transducer' && role === 'encoder') {
      const kind = metadata.get('model_type')!;
      if (!TRANSDUCER_ENCODERS.includes(kind))
        throw new SherpaModelError(`${file}: encoder model_type "${kind}" is not one sherpa-onnx streams (${TRANSDUCER_ENCODERS.join(', ')})`);
      const lacking = TRANSDUCER_ENCODER_METADATA[kind]!.filter((key) => !metadata.has(key));
      if (lacking.length > 0)
        throw new SherpaModelError(`${file} lacks the metadata sherpa-onnx needs for a ${kind} transducer encoder: ${lacking.join(', ')}`);
    }
    if ((type === 'whisper' || type === 'language-id') && role === 'encoder') checkWhisperEncoder(type, file, metadata, options.language ?? '');
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

/** What sherpa-onnx needs beyond the common keys of a Whisper encoder (it exits or crashes otherwise). */
function checkWhisperEncoder(type: 'whisper' | 'language-id', file: string, metadata: Map<string, string>, language: string): void {
  const multilingual = metadata.get('is_multilingual') === '1';
  if (type === 'language-id') {
    if (!multilingual) throw new SherpaModelError(`${file} is an English-only Whisper model; identifying languages needs a multilingual one`);
    if (!metadata.get('model_type')?.startsWith('whisper'))
      throw new SherpaModelError(`${file}: model_type "${metadata.get('model_type') ?? ''}" is not a Whisper model sherpa-onnx identifies languages with`);
  }
  if (!multilingual) return;
  const missing = ['all_language_tokens', 'all_language_codes'].filter((key) => !metadata.has(key));
  if (missing.length > 0) throw new SherpaModelError(`${file} lacks the metadata sherpa-onnx needs for a multilingual Whisper encoder: ${missing.join(', ')}`);
  const codes = metadata.get('all_language_codes')!.split(',');
  if (language !== '' && !codes.includes(language))
    throw new SherpaModelError(`${file} does not know the language "${language}" (it knows ${codes.join(', ')})`);
}
