/**
 * A {@link BlobStore} as files in one folder, readable by the owner alone (the embedded store's
 * way): each name a file, written under a temporary name, flushed, then renamed.
 */
import { randomBytes } from 'node:crypto';
import fs from 'node:fs/promises';
import path from 'node:path';
import type { BlobStore, OpenedBlob } from './blob-store.js';

/** Marks a file still being written; it only gets its real name once complete. */
const PARTIAL = '.partial-';
/** A partial file older than this was left by a process that stopped while writing. */
const ABANDONED_MS = 60 * 60 * 1000;

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException).code === 'ENOENT';
}

/** Files in `folder`, created (mode 0700) on the first write. */
export class FileBlobStore implements BlobStore {
  constructor(readonly folder: string) {}

  /** The file of `name`. */
  private pathOf(name: string): string {
    return path.join(this.folder, name);
  }

  async put(name: string, parts: readonly Uint8Array[]): Promise<number> {
    await fs.mkdir(this.folder, { recursive: true, mode: 0o700 });
    const partial = `${this.pathOf(name)}${PARTIAL}${randomBytes(6).toString('hex')}`;
    const handle = await fs.open(partial, 'wx', 0o600);
    let size = 0;
    try {
      await handle.writev([...parts]);
      await handle.sync();
      size = parts.reduce((sum, part) => sum + part.byteLength, 0);
    } catch (error) {
      await handle.close();
      await fs.rm(partial, { force: true });
      throw error;
    }
    await handle.close();
    await fs.rename(partial, this.pathOf(name));
    return size;
  }

  async get(name: string, signal?: AbortSignal): Promise<Buffer | null> {
    try {
      return await fs.readFile(this.pathOf(name), signal ? { signal } : {});
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  async open(name: string): Promise<OpenedBlob | null> {
    let handle: fs.FileHandle;
    try {
      handle = await fs.open(this.pathOf(name), 'r');
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
    try {
      const { size } = await handle.stat();
      // The open handle keeps the bytes readable even if the file is removed while they stream.
      return { stream: handle.createReadStream(), sizeBytes: size };
    } catch (error) {
      await handle.close();
      throw error;
    }
  }

  async remove(name: string): Promise<void> {
    await fs.rm(this.pathOf(name), { force: true });
  }

  /** The names that hold finished bytes (not writes in progress or abandoned); none without the folder. */
  async names(): Promise<string[]> {
    return (await this.entries()).filter((entry) => !entry.includes(PARTIAL));
  }

  async removeAbandoned(now: Date): Promise<number> {
    let removed = 0;
    for (const name of (await this.entries()).filter((entry) => entry.includes(PARTIAL))) {
      const file = path.join(this.folder, name);
      const stat = await fs.stat(file).catch(() => null);
      if (stat && now.getTime() - stat.mtimeMs > ABANDONED_MS) {
        await fs.rm(file, { force: true });
        removed++;
      }
    }
    return removed;
  }

  /** Everything in the folder; nothing when it does not exist (yet). */
  private async entries(): Promise<string[]> {
    try {
      return await fs.readdir(this.folder);
    } catch (error) {
      if (isMissing(error)) return [];
      throw error;
    }
  }
}
