/**
 * Writes a minimal NeMo CTC recognition model that sherpa-onnx's offline recogniser accepts,
 * so the sherpa-onnx adapter's loading and decoding run in tests without a real model.
 *
 * sherpa-onnx feeds the model 80 log-mel features as [N, 80, T] and the frame count, and
 * greedy-decodes the first output, [N, T, vocabulary] log-probabilities (blank is `<blk>`).
 * The graph scores each frame by its mean log-mel energy: above the threshold the token
 * `▁hello` wins, below it the blank. A loud stretch of audio thus reads as one "hello"
 * (CTC collapses repeats), silence as nothing, and each token's time is its first loud frame.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FLOAT, INT64, node, onnxModel, tensor, valueInfo } from './onnx-writer.js';

/** The word a loud stretch reads as. */
export const TINY_CTC_WORD = 'hello';

/** Mean log-mel energy above which a frame is speech (silence sits near -23, speech well above 0). */
const ENERGY_THRESHOLD = -5;

export function buildTinyNemoCtcOnnx(options: { omitMetadata?: readonly string[] } = {}): Buffer {
  const nodes = [
    node('ReduceMax', ['features'], ['energy'], { axes: [1], keepdims: 0 }), // [N, T]
    node('Unsqueeze', ['energy', 'last_axis'], ['energy3']), // [N, T, 1]
    node('Mul', ['energy3', 'weights'], ['scaled']), // [N, T, 3]
    node('Add', ['scaled', 'biases'], ['logits']),
    node('LogSoftmax', ['logits'], ['logprobs'], { axis: -1 }),
  ];
  // Tokens: 0 "▁hello", 1 "▁never" (never wins), 2 "<blk>" (last, as NeMo exports it).
  const initializers = [
    tensor('last_axis', INT64, [1], [2]),
    tensor('weights', FLOAT, [3], [1, 0, 0]),
    tensor('biases', FLOAT, [3], [-ENERGY_THRESHOLD, -100, 0]),
  ];
  const metadata: Record<string, string> = { vocab_size: '3', subsampling_factor: '1', normalize_type: '', model_type: 'EncDecCTCModelBPE' };
  for (const key of options.omitMetadata ?? []) delete metadata[key];
  return onnxModel({
    graphName: 'tiny_nemo_ctc',
    nodes,
    initializers,
    inputs: [valueInfo('features', FLOAT, ['N', 80, 'T']), valueInfo('features_length', INT64, ['N'])],
    outputs: [valueInfo('logprobs', FLOAT, ['N', 'T', 3])],
    metadata,
    opset: 13,
  });
}

export const TINY_CTC_TOKENS = `▁${TINY_CTC_WORD} 0\n▁never 1\n<blk> 2\n`;

/** Writes `model.onnx` and `tokens.txt` into `dir`. */
export async function writeTinyNemoCtcModel(dir: string, options: { omitMetadata?: readonly string[] } = {}): Promise<{ model: string; tokens: string }> {
  await mkdir(dir, { recursive: true });
  const model = join(dir, 'model.onnx');
  const tokens = join(dir, 'tokens.txt');
  await writeFile(model, buildTinyNemoCtcOnnx(options));
  await writeFile(tokens, TINY_CTC_TOKENS, 'utf8');
  return { model, tokens };
}
