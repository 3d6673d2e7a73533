/** A multipart/form-data body built by hand, so tests control every byte. */
export function multipartBody(
  fields: Record<string, string>,
  file?: { name?: string; filename?: string; bytes: Uint8Array; type?: string },
): { payload: Buffer; headers: Record<string, string> } {
  const boundary = '----sprachrohr-test-boundary';
  const parts: Buffer[] = [];
  for (const [name, value] of Object.entries(fields)) {
    parts.push(Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`));
  }
  if (file) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\nContent-Disposition: form-data; name="${file.name ?? 'audio'}"; filename="${file.filename ?? 'audio.bin'}"\r\n` +
          `Content-Type: ${file.type ?? 'application/octet-stream'}\r\n\r\n`,
      ),
      Buffer.from(file.bytes),
      Buffer.from('\r\n'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`));
  return { payload: Buffer.concat(parts), headers: { 'content-type': `multipart/form-data; boundary=${boundary}` } };
}
