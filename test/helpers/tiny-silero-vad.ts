/**
 * Writes a minimal Silero VAD (v5 interface) that sherpa-onnx's voice activity detector
 * accepts, so the Silero stage runs in tests without the real model.
 *
 * sherpa-onnx feeds 512-sample windows as `input` [1, 512], the recurrent `state` [2, 1, 128]
 * and `sr` [1], and reads `output` (speech probability) and `stateN`. The graph ignores the
 * state (passes it through) and turns the window's mean power into a probability:
 * sigmoid(SLOPE * (ln(mean(x²) + 1e-10) - ln(THRESHOLD_POWER))), so windows louder than about
 * -40 dBFS RMS are speech.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FLOAT, INT64, node, onnxModel, tensor, valueInfo } from './onnx-writer.js';

/** RMS (as a fraction of full scale) where the probability is one half. */
const THRESHOLD_RMS = 0.01;
const SLOPE = 4;

/** Options of the test model; `failAtRun` gives one whose every run fails inside onnxruntime. */
export interface TinySileroOptions {
  readonly inputNames?: readonly [string, string, string];
  readonly failAtRun?: boolean;
}

export function buildTinySileroVadOnnx(options: TinySileroOptions = {}): Buffer {
  const [input, state, sr] = options.inputNames ?? ['input', 'state', 'sr'];
  // A window of 512 samples cannot take the shape [7, -1]: onnxruntime throws on every run.
  const samples = options.failAtRun ? 'reshaped' : input;
  const nodes = [
    ...(options.failAtRun ? [node('Reshape', [input, 'impossible_shape'], ['reshaped'])] : []),
    node('Mul', [samples, samples], ['squares']),
    node('ReduceMean', ['squares'], ['power'], { axes: [1], keepdims: 1 }), // [1, 1]
    node('Add', ['power', 'floor'], ['power_floored']),
    node('Log', ['power_floored'], ['log_power']),
    node('Sub', ['log_power', 'log_threshold'], ['above']),
    node('Mul', ['above', 'slope'], ['scaled']),
    node('Sigmoid', ['scaled'], ['output']),
    node('Identity', [state], ['stateN']),
  ];
  const initializers = [
    tensor('floor', FLOAT, [], [1e-10]),
    tensor('log_threshold', FLOAT, [], [Math.log(THRESHOLD_RMS * THRESHOLD_RMS)]),
    tensor('slope', FLOAT, [], [SLOPE]),
    ...(options.failAtRun ? [tensor('impossible_shape', INT64, [2], [7, -1])] : []),
  ];
  return onnxModel({
    graphName: 'tiny_silero_vad',
    nodes,
    initializers,
    inputs: [valueInfo(input, FLOAT, [1, 'N']), valueInfo(state, FLOAT, [2, 1, 128]), valueInfo(sr, INT64, [1])],
    outputs: [valueInfo('output', FLOAT, [1, 1]), valueInfo('stateN', FLOAT, [2, 1, 128])],
    metadata: {},
  });
}

/** Writes `silero_vad.onnx` into `dir`; returns its path. */
export async function writeTinySileroVad(dir: string, options: TinySileroOptions = {}): Promise<string> {
  await mkdir(dir, { recursive: true });
  const file = join(dir, 'silero_vad.onnx');
  await writeFile(file, buildTinySileroVadOnnx(options));
  return file;
}
