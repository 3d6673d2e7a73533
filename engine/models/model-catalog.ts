/**
 * Models `sprachrohr models pull` can download: each from its publisher's own address, with
 * the publisher's checksum. Operators add or replace entries with a catalog file of their own
 * (a mirror inside their network, a sherpa-onnx model they have checked).
 */
import { readFile } from 'node:fs/promises';
import { parseManifest, type ModelManifest } from './model-manifest.js';

/** A downloadable model. */
export interface CatalogModel {
  /** Folder name it installs as, and the name `pull` takes. */
  readonly name: string;
  readonly description: string;
  /** Archive (`.zip`, `.tar.bz2`, `.tar.gz`) or single file to download. */
  readonly url: string;
  /** Download size, for the progress bar when the server does not say. */
  readonly sizeBytes?: number;
  /** Checksums of the download; at least one. */
  readonly md5?: string;
  readonly sha256?: string;
  /** The installed model's description, without `source` and `files` (pull adds them). */
  readonly manifest: ModelManifest;
}

/**
 * Vosk's small models (Apache-2.0), as listed in alphacephei's model list
 * (https://alphacephei.com/vosk/models/model-list.json: `url`, `size`, `md5`). Each is a
 * lookahead-graph model: vocabularies become grammars. The German model is Standard German;
 * it is not trained on Swiss German speech.
 */
export const BUILT_IN_CATALOG: readonly CatalogModel[] = [
  {
    name: 'vosk-model-small-de-0.15',
    description: 'Vosk small German (Standard German), 16 kHz, grammar-capable',
    url: 'https://alphacephei.com/vosk/models/vosk-model-small-de-0.15.zip',
    sizeBytes: 46_499_967,
    md5: '4f21f92c0897b48287ef8839420608eb',
    manifest: { engine: 'vosk', languages: ['de'] },
  },
  {
    name: 'vosk-model-small-en-us-0.15',
    description: 'Vosk small US English, 16 kHz, grammar-capable',
    url: 'https://alphacephei.com/vosk/models/vosk-model-small-en-us-0.15.zip',
    sizeBytes: 41_205_931,
    md5: '09ab50ccd62b674cbaa231b825f9c1cb',
    manifest: { engine: 'vosk', languages: ['en'] },
  },
  {
    name: 'vosk-model-small-fr-0.22',
    description: 'Vosk small French, 16 kHz, grammar-capable',
    url: 'https://alphacephei.com/vosk/models/vosk-model-small-fr-0.22.zip',
    sizeBytes: 42_233_323,
    md5: '8873b1234503f6edd55f54bfff31cf3e',
    manifest: { engine: 'vosk', languages: ['fr'] },
  },
  {
    name: 'vosk-model-small-it-0.22',
    description: 'Vosk small Italian, 16 kHz, grammar-capable',
    url: 'https://alphacephei.com/vosk/models/vosk-model-small-it-0.22.zip',
    sizeBytes: 49_665_141,
    md5: 'fbd8f9c72cbb8c3dfa3e4581bd3585f4',
    manifest: { engine: 'vosk', languages: ['it'] },
  },
];

/** A catalog file that cannot be used; the message names the file and the entry. */
export class ModelCatalogError extends Error {
  override name = 'ModelCatalogError';
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/**
 * The built-in catalog with an operator's catalog file laid over it (same shape as
 * {@link CatalogModel}, a JSON list; an entry with a built-in name replaces it).
 * @throws ModelCatalogError for a file that cannot be read or an entry that is wrong.
 */
export async function loadModelCatalog(catalogFile: string | null): Promise<CatalogModel[]> {
  const byName = new Map(BUILT_IN_CATALOG.map((entry) => [entry.name, entry]));
  if (catalogFile === null) return [...byName.values()];
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(catalogFile, 'utf8'));
  } catch (error) {
    throw new ModelCatalogError(`the model catalog ${catalogFile} cannot be read: ${(error as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new ModelCatalogError(`${catalogFile}: must hold a JSON list of models`);
  parsed.forEach((value: unknown, index) => {
    const where = `${catalogFile}, entry ${index + 1}`;
    const entry = value as Partial<Record<keyof CatalogModel, unknown>>;
    if (typeof entry !== 'object' || entry === null) throw new ModelCatalogError(`${where}: must be an object`);
    if (typeof entry.name !== 'string' || !NAME.test(entry.name))
      throw new ModelCatalogError(`${where}: "name" must be a folder name (letters, digits, . _ -)`);
    if (typeof entry.url !== 'string' || !/^https?:\/\//.test(entry.url)) throw new ModelCatalogError(`${where}: "url" must be an http(s) address`);
    const md5 = typeof entry.md5 === 'string' && /^[0-9a-f]{32}$/.test(entry.md5);
    const sha256 = typeof entry.sha256 === 'string' && /^[0-9a-f]{64}$/.test(entry.sha256);
    if ((entry.md5 !== undefined && !md5) || (entry.sha256 !== undefined && !sha256) || (!md5 && !sha256)) {
      throw new ModelCatalogError(`${where}: needs "sha256" (64 hex digits) or "md5" (32 hex digits) of the download`);
    }
    if (entry.sizeBytes !== undefined && !(Number.isInteger(entry.sizeBytes) && (entry.sizeBytes as number) > 0)) {
      throw new ModelCatalogError(`${where}: "sizeBytes" must be a positive integer`);
    }
    const manifest = parseManifest(entry.manifest, `${where}, "manifest"`);
    byName.set(entry.name, {
      name: entry.name,
      description: typeof entry.description === 'string' ? entry.description : entry.name,
      url: entry.url,
      ...(entry.sizeBytes !== undefined ? { sizeBytes: entry.sizeBytes as number } : {}),
      ...(md5 ? { md5: entry.md5 as string } : {}),
      ...(sha256 ? { sha256: entry.sha256 as string } : {}),
      manifest,
    });
  });
  return [...byName.values()];
}
