/**
 * Installed recognition models: one folder per model under the models folder, described by
 * `sprachrohr-model.json`. `sprachrohr models pull` writes the description for the models it
 * downloads; operators who unpack a model themselves write it by hand (docs/models.md).
 */
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** The description's file name inside each model folder. */
export const MANIFEST_FILE = 'sprachrohr-model.json';

/** Kinds of sherpa-onnx models the service runs, and the files each needs. */
export const SHERPA_MODEL_FILES = {
  /** Streaming transducer (zipformer, conformer, LSTM). */
  transducer: ['encoder', 'decoder', 'joiner', 'tokens'],
  /** Streaming zipformer CTC. */
  'zipformer2-ctc': ['model', 'tokens'],
  /** Offline NeMo CTC (including exported fine-tunes). */
  'nemo-ctc': ['model', 'tokens'],
  /** Offline Whisper (multilingual or Swiss German fine-tunes exported to ONNX). */
  whisper: ['encoder', 'decoder', 'tokens'],
  /** Offline SenseVoice. */
  'sense-voice': ['model', 'tokens'],
  /** Silero voice activity detection (replaces WebRTC's detector for 16 kHz streams). */
  'silero-vad': ['model'],
  /** Spoken-language identification with a multilingual Whisper model (candidate detection). */
  'language-id': ['encoder', 'decoder'],
} as const satisfies Record<string, readonly string[]>;

/** A sherpa-onnx model kind. */
export type SherpaModelType = keyof typeof SHERPA_MODEL_FILES;

/** sherpa-onnx model kinds that are not recognisers: they serve every language. */
export const HELPER_MODEL_TYPES: ReadonlySet<SherpaModelType> = new Set(['silero-vad', 'language-id']);

/** sherpa-onnx model kinds that recognise speech. */
export type SherpaRecogniserType = Exclude<SherpaModelType, 'silero-vad' | 'language-id'>;

/** Where a model came from, when `models pull` installed it. */
export interface ModelSource {
  readonly url: string;
  readonly md5?: string;
  readonly sha256?: string;
}

interface ManifestCommon {
  /**
   * Language codes the model recognises (`de`, `en-US`; a base code serves its regions); empty
   * for voice activity and language identification models.
   */
  readonly languages: readonly string[];
  readonly source?: ModelSource;
  /** SHA-256 of every file as installed, by path inside the folder (for `models verify`). */
  readonly files?: Readonly<Record<string, string>>;
}

/** What `sprachrohr-model.json` says. */
export type ModelManifest =
  | (ManifestCommon & { readonly engine: 'vosk' })
  | (ManifestCommon & {
      readonly engine: 'sherpa-onnx';
      readonly type: SherpaModelType;
      /** Paths inside the folder of the files the type needs (`encoder`, `tokens`, …). */
      readonly paths: Readonly<Record<string, string>>;
    });

/** An installed model: its folder name, folder and description. */
export interface InstalledModel {
  readonly name: string;
  readonly folder: string;
  readonly manifest: ModelManifest;
}

/** A model folder whose description is missing or wrong; the message names the file. */
export class ModelManifestError extends Error {
  override name = 'ModelManifestError';
}

const LANGUAGE_CODE = /^[a-z]{2,3}(-[A-Z]{2})?$/;
const HEX = (length: number) => new RegExp(`^[0-9a-f]{${length}}$`);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Checks a parsed description.
 * @throws ModelManifestError naming the field that is wrong.
 */
export function parseManifest(value: unknown, where: string): ModelManifest {
  const fail = (message: string): never => {
    throw new ModelManifestError(`${where}: ${message}`);
  };
  if (!isRecord(value)) return fail('must hold a JSON object');
  const helper = value['engine'] === 'sherpa-onnx' && HELPER_MODEL_TYPES.has(value['type'] as SherpaModelType);
  const languages = value['languages'] ?? (helper ? [] : undefined);
  if (!Array.isArray(languages) || (!helper && languages.length === 0) || !languages.every((code) => typeof code === 'string' && LANGUAGE_CODE.test(code))) {
    return fail('"languages" must be a non-empty list of language codes such as "de" or "de-CH"');
  }
  let source: ModelSource | undefined;
  if (value['source'] !== undefined) {
    const given = value['source'];
    if (!isRecord(given) || typeof given['url'] !== 'string') return fail('"source" must be an object with a "url"');
    if (given['md5'] !== undefined && !(typeof given['md5'] === 'string' && HEX(32).test(given['md5']))) return fail('"source.md5" must be 32 hex digits');
    if (given['sha256'] !== undefined && !(typeof given['sha256'] === 'string' && HEX(64).test(given['sha256'])))
      return fail('"source.sha256" must be 64 hex digits');
    source = given as unknown as ModelSource;
  }
  let files: Record<string, string> | undefined;
  if (value['files'] !== undefined) {
    const given = value['files'];
    if (!isRecord(given) || !Object.values(given).every((hash) => typeof hash === 'string' && HEX(64).test(hash))) {
      return fail('"files" must map paths to SHA-256 digests (64 hex digits)');
    }
    files = given as Record<string, string>;
  }
  const common = { languages: languages as string[], ...(source ? { source } : {}), ...(files ? { files } : {}) };
  if (value['engine'] === 'vosk') return { engine: 'vosk', ...common };
  if (value['engine'] !== 'sherpa-onnx') return fail('"engine" must be "vosk" or "sherpa-onnx"');
  const type = value['type'];
  if (typeof type !== 'string' || !(type in SHERPA_MODEL_FILES)) return fail(`"type" must be one of ${Object.keys(SHERPA_MODEL_FILES).join(', ')}`);
  const paths = value['paths'];
  const needed = SHERPA_MODEL_FILES[type as SherpaModelType];
  if (!isRecord(paths)) return fail(`"paths" must name the files of a ${type} model: ${needed.join(', ')}`);
  for (const role of needed) {
    const file = paths[role];
    if (typeof file !== 'string' || file === '' || file.startsWith('/') || file.split('/').includes('..')) {
      return fail(`"paths.${role}" must be a path inside the model folder`);
    }
  }
  return { engine: 'sherpa-onnx', type: type as SherpaModelType, paths: paths as Record<string, string>, ...common };
}

/** Reads one model folder's description. */
export async function readManifest(folder: string): Promise<ModelManifest> {
  const file = join(folder, MANIFEST_FILE);
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch {
    throw new ModelManifestError(`${folder}: ${MANIFEST_FILE} is missing (docs/models.md shows what it holds)`);
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ModelManifestError(`${file}: not valid JSON (${(error as Error).message})`);
  }
  return parseManifest(parsed, file);
}

/**
 * The models installed in a models folder, by folder name. Folders whose name starts with a
 * dot (downloads in progress) are skipped.
 * @throws ModelManifestError for a folder without a valid description.
 */
export async function listInstalledModels(modelsDir: string): Promise<InstalledModel[]> {
  let entries;
  try {
    entries = await readdir(modelsDir, { withFileTypes: true });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new ModelManifestError(`the models folder ${modelsDir} cannot be read: ${(error as Error).message}`);
  }
  const models: InstalledModel[] = [];
  for (const entry of entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).sort((a, b) => a.name.localeCompare(b.name))) {
    const folder = join(modelsDir, entry.name);
    models.push({ name: entry.name, folder, manifest: await readManifest(folder) });
  }
  return models;
}
