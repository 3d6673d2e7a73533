import alawmulaw from 'alawmulaw';

// The package is CommonJS: its namespaces are properties of the default export.
const { alaw, mulaw } = alawmulaw;

/** Encodes PCM16 samples as G.711 µ-law bytes. */
export function encodeMulaw(pcm: Int16Array): Uint8Array {
  return mulaw.encode(pcm);
}

/** Encodes PCM16 samples as G.711 A-law bytes. */
export function encodeAlaw(pcm: Int16Array): Uint8Array {
  return alaw.encode(pcm);
}

/** Decodes G.711 µ-law bytes to PCM16 samples. */
export function decodeMulaw(bytes: Uint8Array): Int16Array {
  return mulaw.decode(bytes);
}

/** Decodes G.711 A-law bytes to PCM16 samples. */
export function decodeAlaw(bytes: Uint8Array): Int16Array {
  return alaw.decode(bytes);
}
