/** Joins PCM16 chunks into one array (one copy). */
export function concatPcm(parts: readonly Int16Array[]): Int16Array {
  if (parts.length === 1) return parts[0]!;
  const out = new Int16Array(parts.reduce((sum, part) => sum + part.length, 0));
  let offset = 0;
  for (const part of parts) {
    out.set(part, offset);
    offset += part.length;
  }
  return out;
}
