/**
 * Unpacks a downloaded model: zip (Vosk), tar.bz2 (sherpa-onnx releases), tar.gz, or a single
 * file. Entries that would land outside the target folder are refused, not skipped.
 */
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readdir, rename, rmdir } from 'node:fs/promises';
import { basename, dirname, join, normalize, sep } from 'node:path';
import { pipeline } from 'node:stream/promises';
import * as tar from 'tar';
import unbzip2 from 'unbzip2-stream';
import yauzl from 'yauzl';

/** An archive that cannot be unpacked safely; the message says why. */
export class ModelArchiveError extends Error {
  override name = 'ModelArchiveError';
}

/** How a download is unpacked, from its address. */
export type ArchiveKind = 'zip' | 'tar.bz2' | 'tar.gz' | 'file';

/** The archive kind of a download address. */
export function archiveKind(url: string): ArchiveKind {
  const path = new URL(url).pathname.toLowerCase();
  if (path.endsWith('.zip')) return 'zip';
  if (path.endsWith('.tar.bz2') || path.endsWith('.tbz2')) return 'tar.bz2';
  if (path.endsWith('.tar.gz') || path.endsWith('.tgz')) return 'tar.gz';
  return 'file';
}

/** The entry's path inside `target`, or an error for one that would leave it. */
function safePath(target: string, entryName: string): string {
  const relative = normalize(entryName);
  if (entryName.startsWith('/') || relative === '..' || relative.startsWith(`..${sep}`) || /^[A-Za-z]:/.test(entryName)) {
    throw new ModelArchiveError(`the archive holds a path outside its folder: ${JSON.stringify(entryName)}`);
  }
  return join(target, relative);
}

function openZip(file: string): Promise<yauzl.ZipFile> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, autoClose: true, strictFileNames: true }, (error, zip) =>
      error ? reject(new ModelArchiveError(`not a readable zip archive: ${error.message}`)) : resolve(zip),
    );
  });
}

async function unzip(file: string, target: string): Promise<void> {
  const zip = await openZip(file);
  await new Promise<void>((resolve, reject) => {
    const fail = (error: Error): void => {
      zip.close();
      if (error instanceof ModelArchiveError) reject(error);
      // yauzl checks names itself (strictFileNames) before safePath sees them.
      else if (/invalid relative path|absolute path/.test(error.message))
        reject(new ModelArchiveError(`the archive holds a path outside its folder (${error.message})`));
      else reject(new ModelArchiveError(`the zip archive is damaged: ${error.message}`));
    };
    zip.on('error', fail);
    zip.on('end', resolve);
    zip.on('entry', (entry: yauzl.Entry) => {
      void (async () => {
        const path = safePath(target, entry.fileName);
        if (entry.fileName.endsWith('/')) {
          await mkdir(path, { recursive: true });
        } else {
          await mkdir(dirname(path), { recursive: true });
          const stream = await new Promise<NodeJS.ReadableStream>((resolveStream, rejectStream) =>
            zip.openReadStream(entry, (error, readable) => (error ? rejectStream(error) : resolveStream(readable))),
          );
          await pipeline(stream, createWriteStream(path));
        }
        zip.readEntry();
      })().catch(fail);
    });
    zip.readEntry();
  });
}

async function untar(file: string, target: string, compression: 'bz2' | 'gz'): Promise<void> {
  const problems: string[] = [];
  const extract = tar.x({
    cwd: target,
    // tar already refuses absolute and `..` paths by default; these also count as failures.
    onwarn: (_code, message) => problems.push(message),
    strict: true,
  });
  try {
    if (compression === 'bz2') await pipeline(createReadStream(file), unbzip2(), extract);
    else await pipeline(createReadStream(file), extract);
  } catch (error) {
    throw new ModelArchiveError(`the tar archive is damaged: ${(error as Error).message}`);
  }
  if (problems.length > 0) throw new ModelArchiveError(`the tar archive has entries that cannot be unpacked safely: ${problems.join('; ')}`);
}

/**
 * Unpacks `file` into the empty folder `target`; when everything sits in one top folder (as in
 * Vosk's and sherpa-onnx's archives), its contents move up into `target`. A single-file download
 * is moved into `target` under `fileName`.
 * @throws ModelArchiveError for a damaged or unsafe archive.
 */
export async function unpackModel(file: string, kind: ArchiveKind, target: string, fileName: string): Promise<void> {
  await mkdir(target, { recursive: true });
  if (kind === 'file') {
    await rename(file, join(target, basename(fileName)));
    return;
  }
  if (kind === 'zip') await unzip(file, target);
  else await untar(file, target, kind === 'tar.bz2' ? 'bz2' : 'gz');
  const top = await readdir(target, { withFileTypes: true });
  if (top.length === 1 && top[0]!.isDirectory()) {
    // Renamed first, so an entry named like the top folder cannot collide with it.
    const inner = join(target, '.unpacked-top-folder');
    await rename(join(target, top[0]!.name), inner);
    for (const name of await readdir(inner)) await rename(join(inner, name), join(target, name));
    await rmdir(inner);
  }
  if ((await readdir(target)).length === 0) throw new ModelArchiveError('the archive is empty');
}
