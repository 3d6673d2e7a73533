/**
 * A deployment that moves to a store whose bytes live in the database (PostgreSQL) still has
 * the files its data folder kept before: voicemail WAVs, job results and queued recognition
 * uploads, which the store's rows point at. They are moved into the database once, at start,
 * each file removed only after the database holds its bytes, so an interrupted move goes on at
 * the next start and nothing is lost.
 */
import type { BlobStore } from './blob-store.js';
import { FileBlobStore } from './file-blob-store.js';

/**
 * Moves every finished file of `folder` into `into` under its own name.
 * @returns how many files were moved (0 when the folder does not exist).
 */
export async function importBlobFiles(folder: string, into: BlobStore): Promise<number> {
  const files = new FileBlobStore(folder);
  let moved = 0;
  for (const name of await files.names()) {
    const bytes = await files.get(name);
    if (bytes === null) continue;
    await into.put(name, [bytes]);
    await files.remove(name);
    moved++;
  }
  return moved;
}
