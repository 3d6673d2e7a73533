/**
 * Writes a minimal VITS text-to-speech model that sherpa-onnx accepts (character front end:
 * no espeak-ng data, no lexicon), so the neural engine's loading and generation run in tests
 * without a real voice. The ONNX ModelProto is encoded by hand (protobuf wire format).
 */
//
// The graph ignores the noise scales and turns every input token into a
// block of constant samples:
//   value(token) = 0.05 + 0.01 * id          (always > 0.01, so sherpa's
//                                             silence shortening never cuts)
//   samples per token = ceil(256 * length_scale)   (speed 2 -> half as long)
// Output y: float32 [1, 1, N * ceil(256 * length_scale)], N = token count.
// sherpa's character front end lower-cases the text, drops unknown chars,
// splits sentences after . : ? ! and (use_eos_bos=1) adds bos id 0 at the
// start of each sentence and eos id 0 after its . : ? or !, so
// "hello" -> 6 tokens -> 1536 samples at speed 1.
// Empty text gives no tokens: generate() then SEGFAULTS in sherpa-onnx-node
// 1.13.8 and generateAsync() rejects "TTS generation produced no audio".
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { FLOAT, INT64, node, onnxModel, tensor, valueInfo } from './onnx-writer.js';

export const TINY_VITS_SAMPLE_RATE = 16000;
export const TINY_VITS_HOP = 256; // samples per token at speed 1.0

export function buildTinyVitsOnnx({ sampleRate = TINY_VITS_SAMPLE_RATE, omitMetadata = [] as string[], comment = 'tiny fake vits for tests' } = {}): Buffer {
  const nodes = [
    node('Cast', ['x'], ['xf'], { to: FLOAT }),
    node('Mul', ['xf', 'gain'], ['xs']),
    node('Add', ['xs', 'bias'], ['xv']),
    node('Unsqueeze', ['xv', 'axis2'], ['xu']), // [1, N, 1]
    node('Mul', ['length_scale', 'hop'], ['hl']),
    node('Ceil', ['hl'], ['hc']),
    node('Cast', ['hc'], ['hi'], { to: INT64 }),
    node('Concat', ['ones2', 'hi'], ['reps'], { axis: 0 }), // [1, 1, r]
    node('Tile', ['xu', 'reps'], ['xt']), // [1, N, r]
    node('Reshape', ['xt', 'out_shape'], ['y']), // [1, 1, N*r]
  ];
  const inits = [
    tensor('gain', FLOAT, [], [0.01]),
    tensor('bias', FLOAT, [], [0.05]),
    tensor('axis2', INT64, [1], [2]),
    tensor('hop', FLOAT, [1], [TINY_VITS_HOP]),
    tensor('ones2', INT64, [2], [1, 1]),
    tensor('out_shape', INT64, [3], [1, 1, -1]),
  ];
  // Input order matters: sherpa feeds x, x_length, noise_scale,
  // length_scale, noise_scale_w by position (5 inputs = no speaker id).
  const inputs = [
    valueInfo('x', INT64, [1, 'N']),
    valueInfo('x_length', INT64, [1]),
    valueInfo('noise_scale', FLOAT, [1]),
    valueInfo('length_scale', FLOAT, [1]),
    valueInfo('noise_scale_w', FLOAT, [1]),
  ];
  const meta = {
    model_type: 'vits',
    comment, // must not contain piper/coqui/icefall/melo for the character front end
    language: 'English',
    frontend: 'characters', // use tokens.txt characters directly
    sample_rate: String(sampleRate),
    n_speakers: '1',
    add_blank: '0',
    use_eos_bos: '1', // prepend bos_id so one-character texts still work
    bos_id: '0',
    eos_id: '0',
  };
  const metadata = Object.fromEntries(Object.entries(meta).filter(([k]) => !omitMetadata.includes(k)));
  return onnxModel({ graphName: 'tiny_vits', nodes, initializers: inits, inputs, outputs: [valueInfo('y', FLOAT, [1, 1, 'T'])], metadata });
}

// One character per line: "<char> <id>"; a line holding only an id is space.
export const TINY_VITS_CHARS = [...'abcdefghijklmnopqrstuvwxyz0123456789,.\'?!-:;"'];

export function buildTinyVitsTokens(): string {
  const lines = ['1']; // space -> id 1
  TINY_VITS_CHARS.forEach((c, i) => lines.push(`${c} ${i + 2}`));
  return lines.join('\n') + '\n';
}

export async function writeTinyVitsModel(
  dir: string,
  options: { sampleRate?: number; omitMetadata?: string[]; comment?: string } = {},
): Promise<{ model: string; tokens: string; sampleRate: number }> {
  await mkdir(dir, { recursive: true });
  const model = join(dir, 'model.onnx');
  const tokens = join(dir, 'tokens.txt');
  await writeFile(model, buildTinyVitsOnnx(options));
  await writeFile(tokens, buildTinyVitsTokens(), 'utf8');
  return { model, tokens, sampleRate: options.sampleRate ?? TINY_VITS_SAMPLE_RATE };
}
