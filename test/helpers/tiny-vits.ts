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

export const TINY_VITS_SAMPLE_RATE = 16000;
export const TINY_VITS_HOP = 256; // samples per token at speed 1.0

// ---------------------------------------------------------------- protobuf
function varint(n: number | bigint): Buffer {
  let v = BigInt.asUintN(64, BigInt(n)); // negative int64 -> 10-byte form
  const out: number[] = [];
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v !== 0n) b |= 0x80;
    out.push(b);
  } while (v !== 0n);
  return Buffer.from(out);
}
const key = (field: number, wire: number): Buffer => varint((field << 3) | wire);
const fInt = (field: number, n: number): Buffer => Buffer.concat([key(field, 0), varint(n)]);
const fBytes = (field: number, data: Buffer | string): Buffer => {
  const b = Buffer.isBuffer(data) ? data : Buffer.from(data, 'utf8');
  return Buffer.concat([key(field, 2), varint(b.length), b]);
};
const fMsg = (field: number, parts: Buffer[]): Buffer => fBytes(field, Buffer.concat(parts));

// ---------------------------------------------------------------- ONNX bits
const FLOAT = 1;
const INT64 = 7;

function tensor(name: string, dataType: number, dims: number[], values: number[]): Buffer[] {
  let raw: Buffer;
  if (dataType === FLOAT) {
    raw = Buffer.alloc(4 * values.length);
    values.forEach((v, i) => raw.writeFloatLE(v, i * 4));
  } else {
    raw = Buffer.alloc(8 * values.length);
    values.forEach((v, i) => raw.writeBigInt64LE(BigInt(v), i * 8));
  }
  // TensorProto: dims=1, data_type=2, name=8, raw_data=9
  return [...dims.map((d) => fInt(1, d)), fInt(2, dataType), fBytes(8, name), fBytes(9, raw)];
}

function valueInfo(name: string, elemType: number, dims: Array<number | string>): Buffer[] {
  // Dimension: dim_value=1 | dim_param=2
  const dimMsgs = dims.map((d) => fMsg(1, [typeof d === 'number' ? fInt(1, d) : fBytes(2, d)]));
  const tensorType = [fInt(1, elemType), fMsg(2, dimMsgs)]; // elem_type, shape
  // ValueInfoProto: name=1, type=2 ; TypeProto: tensor_type=1
  return [fBytes(1, name), fMsg(2, [fMsg(1, tensorType)])];
}

function node(opType: string, inputs: string[], outputs: string[], attrs: Record<string, number> = {}): Buffer[] {
  const parts = [
    ...inputs.map((s) => fBytes(1, s)),
    ...outputs.map((s) => fBytes(2, s)),
    fBytes(3, `${opType}_${outputs[0]}`),
    fBytes(4, opType),
  ];
  for (const [name, value] of Object.entries(attrs)) {
    // AttributeProto: name=1, i=3, type=20 (INT=2); only int attrs needed
    parts.push(fMsg(5, [fBytes(1, name), fInt(3, value), fInt(20, 2)]));
  }
  return parts;
}

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
  const graph = [
    ...nodes.map((n) => fMsg(1, n)),
    fBytes(2, 'tiny_vits'),
    ...inits.map((t) => fMsg(5, t)),
    ...inputs.map((v) => fMsg(11, v)),
    fMsg(12, valueInfo('y', FLOAT, [1, 1, 'T'])),
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
  return Buffer.concat([
    fInt(1, 8), // ir_version
    fBytes(2, 'tiny-vits.mjs'), // producer_name
    fMsg(7, graph),
    fMsg(8, [fBytes(1, ''), fInt(2, 13)]), // opset_import: ai.onnx v13
    ...Object.entries(meta)
      .filter(([k]) => !omitMetadata.includes(k))
      .map(([k, v]) => fMsg(14, [fBytes(1, k), fBytes(2, v)])),
  ]);
}

// One character per line: "<char> <id>"; a line holding only an id is space.
export const TINY_VITS_CHARS = [..."abcdefghijklmnopqrstuvwxyz0123456789,.'?!-:;\""];

export function buildTinyVitsTokens(): string {
  const lines = ['1']; // space -> id 1
  TINY_VITS_CHARS.forEach((c, i) => lines.push(`${c} ${i + 2}`));
  return lines.join('\n') + '\n';
}

export async function writeTinyVitsModel(dir: string, options: { sampleRate?: number; omitMetadata?: string[]; comment?: string } = {}): Promise<{ model: string; tokens: string; sampleRate: number }> {
  await mkdir(dir, { recursive: true });
  const model = join(dir, 'model.onnx');
  const tokens = join(dir, 'tokens.txt');
  await writeFile(model, buildTinyVitsOnnx(options));
  await writeFile(tokens, buildTinyVitsTokens(), 'utf8');
  return { model, tokens, sampleRate: options.sampleRate ?? TINY_VITS_SAMPLE_RATE };
}
