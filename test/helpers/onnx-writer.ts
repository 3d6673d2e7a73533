/**
 * Just enough of ONNX's protobuf encoding to write tiny test models by hand: tensors, value
 * infos, nodes with integer attributes, and a ModelProto with metadata.
 */

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

/** ONNX element types used by the test models. */
export const FLOAT = 1;
export const INT64 = 7;

/** An initializer (TensorProto). */
export function tensor(name: string, dataType: number, dims: number[], values: number[]): Buffer[] {
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

/** A graph input or output (ValueInfoProto); string dims are symbolic. */
export function valueInfo(name: string, elemType: number, dims: Array<number | string>): Buffer[] {
  // Dimension: dim_value=1 | dim_param=2
  const dimMsgs = dims.map((d) => fMsg(1, [typeof d === 'number' ? fInt(1, d) : fBytes(2, d)]));
  const tensorType = [fInt(1, elemType), fMsg(2, dimMsgs)]; // elem_type, shape
  // ValueInfoProto: name=1, type=2 ; TypeProto: tensor_type=1
  return [fBytes(1, name), fMsg(2, [fMsg(1, tensorType)])];
}

/** A node (NodeProto) with integer or integer-list attributes. */
export function node(opType: string, inputs: string[], outputs: string[], attrs: Record<string, number | number[]> = {}): Buffer[] {
  const parts = [...inputs.map((s) => fBytes(1, s)), ...outputs.map((s) => fBytes(2, s)), fBytes(3, `${opType}_${outputs[0]}`), fBytes(4, opType)];
  for (const [name, value] of Object.entries(attrs)) {
    // AttributeProto: name=1, i=3, ints=8, type=20 (INT=2, INTS=7)
    if (Array.isArray(value)) parts.push(fMsg(5, [fBytes(1, name), ...value.map((v) => fInt(8, v)), fInt(20, 7)]));
    else parts.push(fMsg(5, [fBytes(1, name), fInt(3, value), fInt(20, 2)]));
  }
  return parts;
}

/** What a model holds. */
export interface OnnxModelParts {
  readonly graphName: string;
  readonly nodes: Buffer[][];
  readonly initializers: Buffer[][];
  readonly inputs: Buffer[][];
  readonly outputs: Buffer[][];
  readonly metadata: Readonly<Record<string, string>>;
  readonly opset?: number;
}

/** A ModelProto (IR version 8, default domain at `opset`, 13 unless given). */
export function onnxModel(parts: OnnxModelParts): Buffer {
  const graph = [
    ...parts.nodes.map((n) => fMsg(1, n)),
    fBytes(2, parts.graphName),
    ...parts.initializers.map((t) => fMsg(5, t)),
    ...parts.inputs.map((v) => fMsg(11, v)),
    ...parts.outputs.map((v) => fMsg(12, v)),
  ];
  return Buffer.concat([
    fInt(1, 8), // ir_version
    fBytes(2, 'sprachrohr-tests'), // producer_name
    fMsg(7, graph),
    fMsg(8, [fBytes(1, ''), fInt(2, parts.opset ?? 13)]), // opset_import
    ...Object.entries(parts.metadata).map(([k, v]) => fMsg(14, [fBytes(1, k), fBytes(2, v)])),
  ]);
}
