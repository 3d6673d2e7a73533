/**
 * Reads the metadata of an ONNX model (ModelProto field 14, key/value strings) without
 * loading it. sherpa-onnx ends the whole process when a key it needs is missing, so the
 * engine checks them first and refuses the model with a message instead.
 */

function readVarint(bytes: Uint8Array, at: number): [value: number, next: number] {
  let value = 0;
  let shift = 0;
  let position = at;
  for (;;) {
    if (position >= bytes.length) throw new RangeError('truncated varint');
    const byte = bytes[position++]!;
    value += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [value, position];
    shift += 7;
    if (shift > 63) throw new RangeError('varint too long');
  }
}

/** Walks the fields of one protobuf message, calling `onField` for length-delimited ones. */
function eachField(bytes: Uint8Array, onBytes: (field: number, body: Uint8Array) => void): void {
  let at = 0;
  while (at < bytes.length) {
    const [key, afterKey] = readVarint(bytes, at);
    const field = Math.floor(key / 8);
    const wire = key % 8;
    at = afterKey;
    if (wire === 0) at = readVarint(bytes, at)[1];
    else if (wire === 1) at += 8;
    else if (wire === 5) at += 4;
    else if (wire === 2) {
      const [length, start] = readVarint(bytes, at);
      if (start + length > bytes.length) throw new RangeError('truncated field');
      onBytes(field, bytes.subarray(start, start + length));
      at = start + length;
    } else throw new RangeError(`unsupported wire type ${wire}`);
  }
}

/**
 * The model's metadata as a map.
 * @throws RangeError when the bytes are not a protobuf message.
 */
export function readOnnxMetadata(model: Uint8Array): Map<string, string> {
  const metadata = new Map<string, string>();
  const decoder = new TextDecoder();
  eachField(model, (field, body) => {
    if (field !== 14) return;
    let key = '';
    let value = '';
    eachField(body, (entryField, text) => {
      if (entryField === 1) key = decoder.decode(text);
      if (entryField === 2) value = decoder.decode(text);
    });
    metadata.set(key, value);
  });
  return metadata;
}

/** Metadata sherpa-onnx's VITS loader cannot do without. */
export const REQUIRED_VITS_METADATA = ['sample_rate', 'n_speakers', 'language', 'comment'] as const;

/**
 * The names of the graph's inputs and outputs as a session reports them (inputs that are also
 * initializers, as older exports list them, are left out).
 * @throws RangeError when the bytes are not a protobuf message with one graph.
 */
export function readOnnxGraphIo(model: Uint8Array): { inputs: string[]; outputs: string[] } {
  const decoder = new TextDecoder();
  const inputs: string[] = [];
  const outputs: string[] = [];
  const initializers = new Set<string>();
  let graphs = 0;
  const nameOf = (message: Uint8Array, nameField: number): string => {
    let name = '';
    eachField(message, (field, body) => {
      if (field === nameField) name = decoder.decode(body);
    });
    return name;
  };
  eachField(model, (field, graph) => {
    if (field !== 7) return;
    graphs += 1;
    // GraphProto: initializer=5 (TensorProto, name=8), input=11, output=12 (ValueInfoProto, name=1).
    eachField(graph, (graphField, body) => {
      if (graphField === 5) initializers.add(nameOf(body, 8));
      else if (graphField === 11) inputs.push(nameOf(body, 1));
      else if (graphField === 12) outputs.push(nameOf(body, 1));
    });
  });
  if (graphs !== 1 || outputs.length === 0) throw new RangeError('no model graph in the file');
  return { inputs: inputs.filter((name) => !initializers.has(name)), outputs };
}
