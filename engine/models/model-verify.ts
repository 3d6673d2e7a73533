/**
 * Checks installed models: the files the engine needs are there, and files recorded at
 * download time still have their SHA-256.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, readdir } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { readVoskModelLayout, VoskModelError } from '../vosk/vosk-model.js';
import { MANIFEST_FILE, type InstalledModel, type ModelManifest } from './model-manifest.js';

/** SHA-256 of a file, read as a stream. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** Every file below a folder, as paths relative to it with `/` separators, sorted. */
export async function listFiles(folder: string): Promise<string[]> {
  const entries = await readdir(folder, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(folder, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
}

/** SHA-256 of every file of a model folder except its description. */
export async function hashModelFiles(folder: string): Promise<Record<string, string>> {
  const hashes: Record<string, string> = {};
  for (const file of await listFiles(folder)) if (file !== MANIFEST_FILE) hashes[file] = await sha256File(join(folder, file));
  return hashes;
}

/**
 * Whether the files an engine needs are in the folder; the problems found (empty: usable).
 */
export async function checkModelLayout(folder: string, manifest: ModelManifest): Promise<string[]> {
  if (manifest.engine === 'vosk') {
    try {
      await readVoskModelLayout(folder);
      return [];
    } catch (error) {
      if (error instanceof VoskModelError) return [error.message];
      throw error;
    }
  }
  const problems: string[] = [];
  for (const [role, path] of Object.entries(manifest.paths)) {
    try {
      await access(join(folder, path));
    } catch {
      problems.push(`${folder}: the ${role} file ${path} is missing`);
    }
  }
  return problems;
}

/** The outcome of checking one installed model. */
export interface ModelCheck {
  readonly name: string;
  readonly ok: boolean;
  readonly problems: readonly string[];
  /** Files whose SHA-256 was compared with the one recorded at download. */
  readonly filesChecked: number;
}

/** Checks one installed model's layout and recorded file hashes. */
export async function verifyModel(model: InstalledModel): Promise<ModelCheck> {
  const problems = await checkModelLayout(model.folder, model.manifest);
  let filesChecked = 0;
  for (const [file, expected] of Object.entries(model.manifest.files ?? {})) {
    let actual: string;
    try {
      actual = await sha256File(join(model.folder, file));
    } catch {
      problems.push(`${file} is missing`);
      continue;
    }
    filesChecked += 1;
    if (actual !== expected) problems.push(`${file} has changed since it was installed (SHA-256 ${actual}, recorded ${expected})`);
  }
  return { name: model.name, ok: problems.length === 0, problems, filesChecked };
}
