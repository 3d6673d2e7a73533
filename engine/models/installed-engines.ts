/**
 * Engines for the models installed in the models folder: a recogniser per recognition model,
 * serving the catalog languages its description names (a base code such as `de` serves
 * `de-CH`, `de` and `de-AT`), plus at most one Silero voice activity detector and one
 * language identifier, which serve every recogniser.
 */
import { join } from 'node:path';
import { WhisperLanguageIdentifier, type LanguageIdentifier } from '../sherpa/language-id.js';
import { sileroDetectors } from '../sherpa/silero-vad.js';
import { SherpaSttEngine } from '../sherpa/sherpa-stt-engine.js';
import type { SttEngine } from '../types.js';
import type { FrameClassifierFactory } from '../vad/frame-classifier.js';
import { loadWebRtcVad } from '../vad/webrtc-vad.js';
import { VoskEngine } from '../vosk/vosk-engine.js';
import { HELPER_MODEL_TYPES, listInstalledModels, type InstalledModel } from './model-manifest.js';
import { checkModelLayout } from './model-verify.js';
import { probeModels } from './load-probe.js';

/** A model that cannot be started; the message names its folder. */
export class InstalledModelError extends Error {
  override name = 'InstalledModelError';
}

/** The catalog codes a model's languages serve. */
export function servedLanguages(modelLanguages: readonly string[], catalogLanguages: readonly string[]): string[] {
  return catalogLanguages.filter((code) => modelLanguages.some((language) => code === language || code.startsWith(`${language}-`)));
}

/** A started recogniser and how to stop it. */
export type RunningRecogniser = SttEngine & { close(): Promise<void> };

/** What the models folder gave the service. */
export interface InstalledEngines {
  readonly recognisers: readonly RunningRecogniser[];
  /** Silero detectors for streams, or `null` (WebRTC's detector) when none is installed. */
  readonly detectorFor: FrameClassifierFactory | null;
  readonly languageId: LanguageIdentifier | null;
  close(): Promise<void>;
}

/** Wraps any failure of one model in an error naming its folder. */
async function forModel<T>(model: InstalledModel, start: () => Promise<T>): Promise<T> {
  try {
    return await start();
  } catch (error) {
    throw error instanceof InstalledModelError ? error : new InstalledModelError(`${model.folder}: ${(error as Error).message}`);
  }
}

function recogniser(model: InstalledModel, languages: string[], workers: number, detectorFor: FrameClassifierFactory | undefined): Promise<RunningRecogniser> {
  const manifest = model.manifest;
  if (manifest.engine === 'vosk')
    return VoskEngine.start({ folder: model.folder, id: `vosk:${model.name}`, languages, workers, ...(detectorFor ? { detectorFor } : {}) });
  if (manifest.type === 'silero-vad' || manifest.type === 'language-id')
    throw new InstalledModelError(`${model.folder}: a ${manifest.type} model recognises no speech`);
  // Whisper and SenseVoice are told the language when the model serves one; otherwise they detect it.
  const bases = new Set(manifest.languages.map((code) => code.split('-')[0]!));
  return SherpaSttEngine.start({
    id: `sherpa-onnx:${model.name}`,
    type: manifest.type,
    folder: model.folder,
    paths: manifest.paths,
    languages,
    modelLanguage: bases.size === 1 ? [...bases][0]! : '',
    workers,
    ...(detectorFor ? { detectorFor } : {}),
  });
}

/** The one installed model of a helper type, or `null`. */
function single(models: readonly InstalledModel[], type: 'silero-vad' | 'language-id'): InstalledModel | null {
  const found = models.filter((model) => model.manifest.engine === 'sherpa-onnx' && model.manifest.type === type);
  if (found.length > 1) throw new InstalledModelError(`only one ${type} model can be installed; found ${found.map((model) => model.name).join(', ')}`);
  return found[0] ?? null;
}

function fileOf(model: InstalledModel, role: string): string {
  return model.manifest.engine === 'sherpa-onnx' ? join(model.folder, model.manifest.paths[role]!) : '';
}

/** Which models to start, and whether to try them in a separate process first. */
export interface StartModelsOptions {
  /** Start only these models (folder names). */
  readonly only?: readonly string[];
  /**
   * Load each model and decode a second of audio in a child process before loading it here
   * (default true): a model that would end the process is refused instead.
   */
  readonly probe?: boolean;
}

/**
 * Starts the engines of every installed model.
 * @throws InstalledModelError when a model's description or files are wrong or its engine
 *   refuses it (engines already started are stopped).
 */
export async function startInstalledModels(
  modelsDir: string,
  catalogLanguages: readonly string[],
  workers: number,
  options: StartModelsOptions = {},
): Promise<InstalledEngines> {
  let models: InstalledModel[];
  try {
    models = (await listInstalledModels(modelsDir)).filter((model) => !options.only || options.only.includes(model.name));
  } catch (error) {
    throw new InstalledModelError((error as Error).message);
  }
  for (const model of models) {
    const problems = await checkModelLayout(model.folder, model.manifest);
    if (problems.length > 0) throw new InstalledModelError(problems.join('; '));
    if (model.manifest.engine === 'vosk' || !HELPER_MODEL_TYPES.has(model.manifest.type)) {
      const languages = servedLanguages(model.manifest.languages, catalogLanguages);
      if (languages.length === 0)
        throw new InstalledModelError(`${model.folder}: none of its languages (${model.manifest.languages.join(', ')}) is a catalog language`);
    }
  }
  if (options.probe ?? true) {
    for (const probe of await probeModels(
      modelsDir,
      models.map((model) => model.name),
      catalogLanguages,
    )) {
      const folder = join(modelsDir, probe.name);
      if (!probe.ok) throw new InstalledModelError(probe.detail.startsWith(folder) ? probe.detail : `${folder}: ${probe.detail}`);
    }
  }
  await loadWebRtcVad();
  const silero = single(models, 'silero-vad');
  const detectorFor = silero ? await forModel(silero, () => sileroDetectors(fileOf(silero, 'model'))) : null;
  const identifierModel = single(models, 'language-id');
  const languageId = identifierModel
    ? await forModel(identifierModel, () =>
        WhisperLanguageIdentifier.start(`sherpa-onnx:${identifierModel.name}`, {
          encoder: fileOf(identifierModel, 'encoder'),
          decoder: fileOf(identifierModel, 'decoder'),
        }),
      )
    : null;
  const recognisers: RunningRecogniser[] = [];
  const close = async (): Promise<void> => {
    await Promise.all([...recognisers.map((engine) => engine.close()), languageId?.close()]);
  };
  try {
    for (const model of models) {
      if (model.manifest.engine === 'sherpa-onnx' && HELPER_MODEL_TYPES.has(model.manifest.type)) continue;
      const languages = servedLanguages(model.manifest.languages, catalogLanguages);
      recognisers.push(await forModel(model, () => recogniser(model, languages, workers, detectorFor ?? undefined)));
    }
  } catch (error) {
    await close();
    throw error;
  }
  return { recognisers, detectorFor, languageId, close };
}
