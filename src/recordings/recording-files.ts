/**
 * The WAV files of recordings, one per id in one folder: written whole or not at all, readable
 * by the owner alone.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import type { ReadStream } from 'node:fs';
import path from 'node:path';
import { WAV_HEADER_BYTES, wavHeader } from '../audio/wav.js';

/** Marks a file still being written; it only gets its real name once complete. */
const PARTIAL = '.partial-';
/** A partial file older than this was left by a process that stopped while writing. */
const ABANDONED_MS = 60 * 60 * 1000;

/** An opened recording file: its bytes to stream and their count. */
export interface OpenedAudio {
  readonly stream: ReadStream;
  readonly sizeBytes: number;
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** The folder of recording files. Nothing touches the disk before the first recording. */
export class RecordingFiles {
  constructor(readonly folder: string) {}

  /** Where the recording `id` lives. Ids are checked by the caller: they become file names. */
  pathOf(id: string): string {
    return path.join(this.folder, `${id}.wav`);
  }

  /**
   * Writes a mono PCM16 WAV file for `id`: to a temporary name, flushed to disk, then renamed,
   * so that a reader (or a crash) never meets half a file.
   * @returns the file's size in bytes.
   */
  async write(id: string, pcm: Int16Array, sampleRateHz: number): Promise<number> {
    await fs.mkdir(this.folder, { recursive: true, mode: 0o700 });
    const partial = path.join(this.folder, `${id}.wav${PARTIAL}${randomBytes(6).toString('hex')}`);
    // Samples are little-endian in memory on every platform Node runs this service on.
    const samples = Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength);
    const handle = await fs.open(partial, 'wx', 0o600);
    try {
      await handle.writev([wavHeader(sampleRateHz, samples.length), samples]);
      await handle.sync();
    } catch (error) {
      await handle.close();
      await fs.rm(partial, { force: true });
      throw error;
    }
    await handle.close();
    await fs.rename(partial, this.pathOf(id));
    return WAV_HEADER_BYTES + samples.length;
  }

  /**
   * Opens the file of `id` for reading, or `null` when there is none. The open handle keeps
   * the bytes readable even if the recording is deleted while they stream.
   */
  async open(id: string): Promise<OpenedAudio | null> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.pathOf(id), 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      return { stream: handle.createReadStream(), sizeBytes: size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  /** Removes the file of `id`; one that is already gone is fine. */
  async remove(id: string): Promise<void> {
    await fs.rm(this.pathOf(id), { force: true });
  }

  /**
   * Removes what a process that stopped mid-write left behind (partial files more than an hour
   * old, so that a write in progress is never touched).
   * @returns how many were removed.
   */
  async removeAbandoned(now: Date): Promise<number> {
    let names: string[];
    try {
      names = await fs.readdir(this.folder);
    } catch (error) {
      if (isMissing(error)) return 0;
      throw error;
    }
    let removed = 0;
    for (const name of names.filter((entry) => entry.includes(PARTIAL))) {
      const file = path.join(this.folder, name);
      const stat = await fs.stat(file).catch(() => null);
      if (stat && now.getTime() - stat.mtimeMs > ABANDONED_MS) {
        await fs.rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }
}
