import alawmulaw from 'alawmulaw';

// The package is CommonJS: its namespaces are properties of the default export.
const { alaw, mulaw } = alawmulaw;

/**
 * G.711 through lookup tables made once from `alawmulaw` itself, so they are bit-exact with it
 * by construction (a test compares every sample value and every byte): a table lookup per
 * sample instead of a function call, which matters at 50 frames a second on every call.
 */
const EVERY_SAMPLE = Int16Array.from({ length: 65536 }, (_, i) => i - 32768);
const EVERY_BYTE = Uint8Array.from({ length: 256 }, (_, i) => i);
const MULAW_ENCODE: Uint8Array = mulaw.encode(EVERY_SAMPLE);
const ALAW_ENCODE: Uint8Array = alaw.encode(EVERY_SAMPLE);
const MULAW_DECODE: Int16Array = mulaw.decode(EVERY_BYTE);
const ALAW_DECODE: Int16Array = alaw.decode(EVERY_BYTE);

function encode(pcm: Int16Array, table: Uint8Array): Uint8Array {
  const out = new Uint8Array(pcm.length);
  for (let i = 0; i < pcm.length; i++) out[i] = table[pcm[i]! + 32768]!;
  return out;
}

function decode(bytes: Uint8Array, table: Int16Array, into?: Int16Array): Int16Array {
  const out = into?.length === bytes.length ? into : new Int16Array(bytes.length);
  for (let i = 0; i < bytes.length; i++) out[i] = table[bytes[i]!]!;
  return out;
}

/** Encodes PCM16 samples as G.711 µ-law bytes. */
export function encodeMulaw(pcm: Int16Array): Uint8Array {
  return encode(pcm, MULAW_ENCODE);
}

/** Encodes PCM16 samples as G.711 A-law bytes. */
export function encodeAlaw(pcm: Int16Array): Uint8Array {
  return encode(pcm, ALAW_ENCODE);
}

/** Decodes G.711 µ-law bytes to PCM16 samples, into `into` when it has one sample per byte (no allocation per frame). */
export function decodeMulaw(bytes: Uint8Array, into?: Int16Array): Int16Array {
  return decode(bytes, MULAW_DECODE, into);
}

/** Decodes G.711 A-law bytes to PCM16 samples, into `into` when it has one sample per byte (no allocation per frame). */
export function decodeAlaw(bytes: Uint8Array, into?: Int16Array): Int16Array {
  return decode(bytes, ALAW_DECODE, into);
}
