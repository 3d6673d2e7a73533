/**
 * Writes a minimal STREAMING transducer (encoder, decoder, joiner, tokens) that sherpa-onnx's
 * OnlineRecognizer really loads and runs, so streaming recognition runs in tests without a
 * real model. The ONNX files are encoded by hand (see onnx-writer.ts).
 *
 * Model type: icefall's LSTM transducer (`model_type` "lstm", online-lstm-transducer-model.cc),
 * chosen because its encoder state is just two tensors, h and c, whose shapes come from metadata.
 *
 * What sherpa-onnx (1.13.x) does with an LSTM transducer:
 * - The encoder's metadata must hold model_type, num_encoder_layers, T, decode_chunk_len,
 *   rnn_hidden_size and d_model; the decoder's vocab_size and context_size. They are read
 *   without defaults: a missing key logs "'<key>' does not exist in the metadata" and ends the
 *   whole process in the constructor (exit status 255). Without `model_type` in the encoder
 *   (and no `modelConfig.modelType`) sherpa logs "No model_type in the metadata!" and "Unknown
 *   model type in online transducer!" and the constructor crashes the process (SIGSEGV, 139);
 *   with `modelConfig.modelType: 'lstm'` the key is not needed. The joiner's metadata is not
 *   read. Inputs and outputs are used by POSITION, names are free. Measured with
 *   sherpa-onnx-node 1.13.8.
 * - Encoder: (x [N, T, 80] log-mel fbank, h [layers, N, d_model], c [layers, N, rnn_hidden])
 *   -> (encoder_out [N, T', D], next h, next c). h and c start as zeros and are carried from
 *   chunk to chunk per stream. sherpa decodes once `T` feature frames (10 ms each) beyond those
 *   already processed are ready (strictly more than T), hands over T frames and then advances
 *   by decode_chunk_len. Every row of encoder_out is one decoding step; timestamps count steps
 *   as 4 feature frames (40 ms), so the encoder emits one row per 4 frames.
 * - Decoder: y [N, context_size] int64 (the last tokens; a fresh stream holds [-1, 0]) ->
 *   decoder_out [N, D'] (must be 2-D: sherpa caches rows of shape[1] floats).
 * - Joiner: (encoder_out [N, D], decoder_out [N, D']) -> logit [N, vocab]. Greedy search takes
 *   the arg-max per step, at most one token per step; id 0 is always the blank, `<unk>` counts as
 *   blank; a non-blank token is appended, fed to the decoder, and its log-softmax probability
 *   goes into `ys_probs`.
 * - Result text is the tokens joined, "▁" replaced by a space (tokens.txt is read with "▁"
 *   turned into a space); the `text` comes back without the leading space.
 *
 * The rules this model follows (token ids: 0 <blk>, 1 <sos/eos>, 2 <unk>, 3 ▁HE, 4 LLO):
 * - Audio is cut into STEPS of 4 feature frames (40 ms) and chunks of 2 steps (80 ms,
 *   T = decode_chunk_len = 8), so partial results appear while audio is still coming in.
 * - A step is LOUD when the largest log-mel value of its 4 frames (any bin) exceeds
 *   TINY_STREAMING_LOUD_THRESHOLD (-5). Measured with sherpa-onnx-node 1.13.8: digital silence
 *   sits at -15.9 (log FLT_EPSILON), a 300 Hz tone at amplitude 0.3 peaks between +2 and +4,
 *   and each tenfold in amplitude adds 4.6; a 300 Hz tone is loud from about amplitude 0.008
 *   (0.006 is still quiet). Use amplitude >= 0.05 for "loud", <= 0.003 or zeros for "quiet";
 *   higher tones (1 kHz, 3.5 kHz) read louder, not quieter (pre-emphasis).
 * - The encoder marks an ONSET: a loud step whose previous step was quiet. The previous step's
 *   loudness crosses chunk borders in the state h (d_model 1); a stream starts "quiet", so audio
 *   that begins loud has an onset at its first step. An onset in a chunk's second step is put
 *   off to the next chunk's first step (state c, rnn_hidden_size 1): "▁HE" is always written
 *   in a chunk's first step and "LLO" in its second, so no result ever ends in half a word.
 * - Joiner logits = encoder_out + decoder_out (both already vocab-sized):
 *     encoder_out = [0, -100, -100, onset ? +10 : -10, 0]
 *     decoder_out = last token ▁HE ? [0, 0, 0, -100, +100] : [0, 0, 0, 0, -100]
 *   So an onset writes "▁HE", the step after it writes "LLO" whatever it holds (the decoder
 *   forces it), and every other step is blank. Each loud stretch thus reads as "HELLO" once,
 *   spelled "▁HE" "LLO" like an English BPE model (tokens come back as " HE", "LLO"; the
 *   text "HELLO HELLO" without a leading space), and silence reads as nothing.
 * - Results: `timestamps` (seconds, one per token) are the onset's chunk start (a multiple of
 *   0.08 s, at most ~0.1 s from the true onset) and 0.04 s later; `ys_probs` is filled
 *   (-0.0067 for "▁HE": sherpa divides logits by its default temperature 2; 0 for "LLO").
 *   Quiet gaps need about 0.1 s to separate two words (a 50 ms gap does not). Speech reads as
 *   one HELLO per pause-separated phrase (eSpeak "Hello world. This is a small test." ->
 *   "HELLO HELLO").
 * - sherpa decodes only while MORE than T frames wait, so the last ~8 frames (~0.1 s plus the
 *   feature window) are never decoded even after inputFinished(): a loud stretch must start
 *   at least ~0.2 s before the end of the input (or pad the input with silence).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FLOAT, INT64, node, onnxModel, tensor, valueInfo } from './onnx-writer.js';

/** The word a loud stretch reads as, and the BPE pieces it is spelled with. */
export const TINY_STREAMING_WORD = 'HELLO';
export const TINY_STREAMING_PIECES = ['▁HE', 'LLO'] as const;

/** Largest log-mel value of a step above which the step is loud. */
export const TINY_STREAMING_LOUD_THRESHOLD = -5;

/** Feature frames per chunk (T and decode_chunk_len) and per decoding step (sherpa assumes 4). */
const CHUNK_FRAMES = 8;
const FRAMES_PER_STEP = 4;
const STEPS_PER_CHUNK = CHUNK_FRAMES / FRAMES_PER_STEP; // 2; the encoder graph is written for 2
const FEATURE_DIM = 80;

// Vocabulary in the order icefall's English BPE models use: blank first, then <sos/eos>, <unk>.
const BLANK = 0;
const HE = 3;
const LLO = 4;
const VOCAB = 5;
export const TINY_STREAMING_TOKENS = `<blk> ${BLANK}\n<sos/eos> 1\n<unk> 2\n▁HE ${HE}\nLLO ${LLO}\n`;

const CONTEXT_SIZE = 2; // as icefall's stateless decoders
const NEVER = -100;

/** Which metadata keys to leave out of which file (for probing sherpa's reactions). */
export interface TinyStreamingOptions {
  readonly omitMetadata?: {
    readonly encoder?: readonly string[];
    readonly decoder?: readonly string[];
    readonly joiner?: readonly string[];
  };
  /** Overrides TINY_STREAMING_LOUD_THRESHOLD. */
  readonly loudThreshold?: number;
}

function withoutKeys(metadata: Record<string, string>, omit: readonly string[] | undefined): Record<string, string> {
  for (const key of omit ?? []) delete metadata[key];
  return metadata;
}

/** Encoder: (x [N, 8, 80], h [1, N, 1], c [1, N, 1]) -> (encoder_out [N, 2, 5], h, c). */
export function buildTinyStreamingEncoderOnnx(options: TinyStreamingOptions = {}): Buffer {
  const onsetRow = new Array<number>(VOCAB).fill(0);
  onsetRow[HE] = 20;
  const baseRow = [0, NEVER, NEVER, -10, 0];
  const nodes = [
    // Loudness of each step: the largest value over its 4 frames and all 80 bins.
    node('Reshape', ['x', 'step_shape'], ['steps']), // [N, 2, 4, 80]
    node('ReduceMax', ['steps'], ['energy'], { axes: [2, 3], keepdims: 0 }), // [N, 2]
    node('Greater', ['energy', 'threshold'], ['loud_bool']),
    node('Cast', ['loud_bool'], ['loud'], { to: FLOAT }), // [N, 2], 1 = loud
    // Loudness of the step before each step: the state for the first, the chunk for the rest.
    node('Squeeze', ['h', 'axis0'], ['h_last']), // [N, 1]
    node('Slice', ['loud', 'zero', 'minus_one', 'axis1'], ['loud_but_last']), // [N, 1]
    node('Concat', ['h_last', 'loud_but_last'], ['previous'], { axis: 1 }), // [N, 2]
    // raw onset = loud * (1 - previous)
    node('Sub', ['one', 'previous'], ['was_quiet']),
    node('Mul', ['loud', 'was_quiet'], ['raw_onset']), // [N, 2]
    // An onset in the chunk's last step is put off to the next chunk's first step (state c),
    // so that "LLO" lands in the same chunk as "▁HE" and no result ever ends in half a word.
    node('Squeeze', ['c', 'axis0'], ['pending']), // [N, 1]
    node('Slice', ['raw_onset', 'zero', 'minus_one', 'axis1'], ['raw_first']), // [N, 1]
    node('Slice', ['raw_onset', 'minus_one', 'end', 'axis1'], ['raw_last']), // [N, 1]
    node('Add', ['raw_first', 'pending'], ['first']), // never 2: pending means the step before was loud
    node('Concat', ['first', 'raw_last'], ['onset_unmasked'], { axis: 1 }), // [N, 2]
    node('Mul', ['onset_unmasked', 'first_step_only'], ['onset']), // [N, 2] = [first, 0]
    node('Unsqueeze', ['onset', 'axis2'], ['onset3']), // [N, 2, 1]
    node('Mul', ['onset3', 'onset_row'], ['onset_scores']), // [N, 2, 5]
    node('Add', ['onset_scores', 'base_row'], ['encoder_out']),
    // Next state: h = loudness of the chunk's last step, c = onset put off from it.
    node('Slice', ['loud', 'minus_one', 'end', 'axis1'], ['loud_last']), // [N, 1]
    node('Unsqueeze', ['loud_last', 'axis0'], ['next_h']), // [1, N, 1]
    node('Unsqueeze', ['raw_last', 'axis0'], ['next_c']), // [1, N, 1]
  ];
  const initializers = [
    tensor('step_shape', INT64, [4], [0, STEPS_PER_CHUNK, FRAMES_PER_STEP, FEATURE_DIM]),
    tensor('threshold', FLOAT, [], [options.loudThreshold ?? TINY_STREAMING_LOUD_THRESHOLD]),
    tensor('one', FLOAT, [], [1]),
    tensor('axis0', INT64, [1], [0]),
    tensor('axis1', INT64, [1], [1]),
    tensor('axis2', INT64, [1], [2]),
    tensor('zero', INT64, [1], [0]),
    tensor('minus_one', INT64, [1], [-1]),
    tensor('end', INT64, [1], [STEPS_PER_CHUNK]),
    tensor('first_step_only', FLOAT, [STEPS_PER_CHUNK], [1, 0]),
    tensor('onset_row', FLOAT, [VOCAB], onsetRow),
    tensor('base_row', FLOAT, [VOCAB], baseRow),
  ];
  const metadata = withoutKeys(
    {
      model_type: 'lstm',
      model_author: 'sprachrohr-tests',
      num_encoder_layers: '1',
      T: String(CHUNK_FRAMES),
      decode_chunk_len: String(CHUNK_FRAMES),
      rnn_hidden_size: '1',
      d_model: '1',
    },
    options.omitMetadata?.encoder,
  );
  return onnxModel({
    graphName: 'tiny_streaming_encoder',
    nodes,
    initializers,
    inputs: [valueInfo('x', FLOAT, ['N', CHUNK_FRAMES, FEATURE_DIM]), valueInfo('h', FLOAT, [1, 'N', 1]), valueInfo('c', FLOAT, [1, 'N', 1])],
    outputs: [valueInfo('encoder_out', FLOAT, ['N', STEPS_PER_CHUNK, VOCAB]), valueInfo('next_h', FLOAT, [1, 'N', 1]), valueInfo('next_c', FLOAT, [1, 'N', 1])],
    metadata,
    opset: 13,
  });
}

/** Decoder: y [N, 2] -> decoder_out [N, 5], a row chosen by the last token. */
export function buildTinyStreamingDecoderOnnx(options: TinyStreamingOptions = {}): Buffer {
  const rows: number[][] = [];
  for (let token = 0; token < VOCAB; token++) {
    // After ▁HE only LLO may follow; otherwise LLO never comes and ▁HE is up to the encoder.
    rows.push(token === HE ? [0, 0, 0, NEVER, -NEVER] : [0, 0, 0, 0, NEVER]);
  }
  const nodes = [
    node('Slice', ['y', 'minus_one', 'end', 'axis1'], ['last_2d']), // [N, 1]
    node('Squeeze', ['last_2d', 'axis1'], ['last']), // [N]; a fresh stream's last token is 0
    node('Gather', ['table', 'last'], ['decoder_out'], { axis: 0 }), // [N, 5]
  ];
  const initializers = [
    tensor('table', FLOAT, [VOCAB, VOCAB], rows.flat()),
    tensor('axis1', INT64, [1], [1]),
    tensor('minus_one', INT64, [1], [-1]),
    tensor('end', INT64, [1], [CONTEXT_SIZE]),
  ];
  const metadata = withoutKeys({ vocab_size: String(VOCAB), context_size: String(CONTEXT_SIZE) }, options.omitMetadata?.decoder);
  return onnxModel({
    graphName: 'tiny_streaming_decoder',
    nodes,
    initializers,
    inputs: [valueInfo('y', INT64, ['N', CONTEXT_SIZE])],
    outputs: [valueInfo('decoder_out', FLOAT, ['N', VOCAB])],
    metadata,
    opset: 13,
  });
}

/** Joiner: (encoder_out [N, 5], decoder_out [N, 5]) -> logit [N, 5], their sum. */
export function buildTinyStreamingJoinerOnnx(options: TinyStreamingOptions = {}): Buffer {
  const metadata = withoutKeys({ joiner_dim: String(VOCAB) }, options.omitMetadata?.joiner);
  return onnxModel({
    graphName: 'tiny_streaming_joiner',
    nodes: [node('Add', ['encoder_out', 'decoder_out'], ['logit'])],
    initializers: [],
    inputs: [valueInfo('encoder_out', FLOAT, ['N', VOCAB]), valueInfo('decoder_out', FLOAT, ['N', VOCAB])],
    outputs: [valueInfo('logit', FLOAT, ['N', VOCAB])],
    metadata,
    opset: 13,
  });
}

/** The files of a tiny streaming transducer. */
export interface TinyTransducerFiles {
  readonly encoder: string;
  readonly decoder: string;
  readonly joiner: string;
  readonly tokens: string;
}

/** Writes encoder.onnx, decoder.onnx, joiner.onnx and tokens.txt into `dir`. */
export async function writeTinyTransducer(dir: string, options: TinyStreamingOptions = {}): Promise<TinyTransducerFiles> {
  await mkdir(dir, { recursive: true });
  const files = {
    encoder: join(dir, 'encoder.onnx'),
    decoder: join(dir, 'decoder.onnx'),
    joiner: join(dir, 'joiner.onnx'),
    tokens: join(dir, 'tokens.txt'),
  };
  await writeFile(files.encoder, buildTinyStreamingEncoderOnnx(options));
  await writeFile(files.decoder, buildTinyStreamingDecoderOnnx(options));
  await writeFile(files.joiner, buildTinyStreamingJoinerOnnx(options));
  await writeFile(files.tokens, TINY_STREAMING_TOKENS, 'utf8');
  return files;
}
