import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import ffmpeg from '@ffmpeg-installer/ffmpeg';
import ffprobe from '@ffprobe-installer/ffprobe';

const run = promisify(execFile);

/**
 * ffmpeg and ffprobe as static builds shipped in npm packages (devDependencies), so the tests
 * need nothing from the system. The packages' install steps mark the binaries executable; make sure.
 */
const FFMPEG = ffmpeg.path;
const FFPROBE = ffprobe.path;
await fs.chmod(FFPROBE, 0o755).catch(() => undefined);
await fs.chmod(FFMPEG, 0o755).catch(() => undefined);

/** What ffprobe, an independent decoder, reads from a file. */
export interface Probe {
  readonly codec: string;
  readonly sampleRateHz: number;
  readonly channels: number;
  /** Duration from decoding every sample, not from the header. */
  readonly decodedSeconds: number;
}

async function tempFile(name: string, bytes: Uint8Array): Promise<{ file: string; dispose: () => Promise<void> }> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-test-'));
  const file = path.join(dir, name);
  await fs.writeFile(file, bytes);
  return { file, dispose: () => fs.rm(dir, { recursive: true, force: true }) };
}

/**
 * Decodes audio with ffmpeg and reports codec, rate, channels and the decoded length.
 * `rawFormat` names a headerless input (`s16le`, `mulaw`, `alaw`) at `rawRate`.
 */
export async function probeAudio(bytes: Uint8Array, rawFormat?: { format: string; rate: number }): Promise<Probe> {
  const { file, dispose } = await tempFile('input', bytes);
  try {
    const inputArgs = rawFormat ? ['-f', rawFormat.format, '-ar', String(rawFormat.rate), '-ac', '1'] : [];
    const { stdout } = await run(FFPROBE, ['-v', 'error', ...inputArgs, '-show_streams', '-of', 'json', file]);
    const stream = (JSON.parse(stdout) as { streams: Array<{ codec_name: string; sample_rate: string; channels: number }> }).streams[0]!;
    // Count decoded samples at the stream's own rate: the real length, whatever the header says.
    const decoded = await run(FFMPEG, ['-v', 'error', ...inputArgs, '-i', file, '-f', 's16le', '-ac', '1', '-'], { encoding: 'buffer', maxBuffer: 1 << 30 });
    const sampleRateHz = Number(stream.sample_rate);
    return { codec: stream.codec_name, sampleRateHz, channels: stream.channels, decodedSeconds: decoded.stdout.length / 2 / sampleRateHz };
  } finally {
    await dispose();
  }
}

/** Converts a WAV file with ffmpeg, for example to FLAC or Ogg Opus (`-c:a libopus`). */
export async function convertWithFfmpeg(wav: Uint8Array, outputName: string, args: string[]): Promise<Buffer> {
  const { file, dispose } = await tempFile('input.wav', wav);
  try {
    const output = path.join(path.dirname(file), outputName);
    await run(FFMPEG, ['-v', 'error', '-y', '-i', file, ...args, output]);
    return await fs.readFile(output);
  } finally {
    await dispose();
  }
}
