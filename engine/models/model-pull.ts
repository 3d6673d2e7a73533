/**
 * Downloads a catalog model, checks the publisher's checksum, unpacks it and installs it under
 * the models folder in one rename, so a broken or interrupted download never leaves a model
 * folder behind that the service would try to load.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { archiveKind, unpackModel } from './model-archive.js';
import type { CatalogModel } from './model-catalog.js';
import { MANIFEST_FILE, type ModelManifest } from './model-manifest.js';
import { checkModelLayout, hashModelFiles } from './model-verify.js';
import { pathExists } from '../path-exists.js';

/** A download that failed or did not match its checksum; nothing was installed. */
export class ModelPullError extends Error {
  override name = 'ModelPullError';
}

/** Progress of a download: bytes so far and the expected total (`null` when unknown). */
export type PullProgress = (receivedBytes: number, totalBytes: number | null) => void;

/** How to pull. */
export interface PullOptions {
  readonly modelsDir: string;
  /** Replace an installed model of the same name. */
  readonly force?: boolean;
  readonly onProgress?: PullProgress;
  readonly signal?: AbortSignal;
}

/** Streams the body to `file`, hashing as it goes; returns the MD5 and SHA-256. */
async function download(entry: CatalogModel, file: string, options: PullOptions): Promise<{ md5: string; sha256: string; bytes: number }> {
  let response: Response;
  try {
    response = await fetch(entry.url, { signal: options.signal ?? null, redirect: 'follow' });
  } catch (error) {
    throw new ModelPullError(
      `${entry.url} cannot be reached: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`,
    );
  }
  if (!response.ok || !response.body) throw new ModelPullError(`${entry.url} answered ${response.status} ${response.statusText}`);
  const length = Number(response.headers.get('content-length'));
  const total = Number.isFinite(length) && length > 0 ? length : (entry.sizeBytes ?? null);
  const md5 = createHash('md5');
  const sha256 = createHash('sha256');
  let bytes = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      md5.update(chunk);
      sha256.update(chunk);
      bytes += chunk.length;
      options.onProgress?.(bytes, total);
      done(null, chunk);
    },
  });
  try {
    await pipeline(Readable.fromWeb(response.body as WebReadableStream<Uint8Array>), meter, createWriteStream(file), { signal: options.signal });
  } catch (error) {
    throw new ModelPullError(`the download of ${entry.url} broke off after ${bytes} bytes: ${(error as Error).message}`);
  }
  return { md5: md5.digest('hex'), sha256: sha256.digest('hex'), bytes };
}

/**
 * Pulls a model into `<modelsDir>/<name>/` with its description (source, checksums and the
 * SHA-256 of every installed file for `models verify`).
 * @throws ModelPullError when it is installed already (without `force`), the download fails,
 *   the checksum differs, or the unpacked files are not the model the catalog describes.
 */
export async function pullModel(entry: CatalogModel, options: PullOptions): Promise<{ folder: string; bytes: number }> {
  const folder = join(options.modelsDir, entry.name);
  if (!options.force && (await pathExists(folder))) throw new ModelPullError(`${entry.name} is installed already (${folder}); --force replaces it`);
  await mkdir(options.modelsDir, { recursive: true });
  // A dot folder: the service and `models list` skip it while the download is in progress.
  const work = join(options.modelsDir, `.pull-${entry.name}-${randomBytes(4).toString('hex')}`);
  await mkdir(work);
  try {
    const archive = join(work, 'download');
    const { md5, sha256, bytes } = await download(entry, archive, options);
    if (entry.sha256 && sha256 !== entry.sha256)
      throw new ModelPullError(`${entry.url}: SHA-256 ${sha256} is not the catalog's ${entry.sha256}; nothing was installed`);
    if (entry.md5 && md5 !== entry.md5) throw new ModelPullError(`${entry.url}: MD5 ${md5} is not the catalog's ${entry.md5}; nothing was installed`);
    const unpacked = join(work, 'model');
    await unpackModel(archive, archiveKind(entry.url), unpacked, basename(new URL(entry.url).pathname));
    const problems = await checkModelLayout(unpacked, entry.manifest);
    if (problems.length > 0)
      throw new ModelPullError(`${entry.url} does not hold the model the catalog describes: ${problems.join('; ').replaceAll(unpacked, entry.name)}`);
    const manifest: ModelManifest = {
      ...entry.manifest,
      source: { url: entry.url, ...(entry.md5 ? { md5 } : {}), sha256 },
      files: await hashModelFiles(unpacked),
    };
    await writeFile(join(unpacked, MANIFEST_FILE), `${JSON.stringify(manifest, null, 2)}\n`);
    if (await pathExists(folder)) await rm(folder, { recursive: true, force: true });
    await rename(unpacked, folder);
    return { folder, bytes };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}
