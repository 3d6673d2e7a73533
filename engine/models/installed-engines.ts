/**
 * Recognisers for the models installed in the models folder: one engine per model, serving
 * the catalog languages its description names (a base code such as `de` serves `de-CH`,
 * `de-DE` and `de-AT`).
 */
import { SherpaSttEngine } from '../sherpa/sherpa-stt-engine.js';
import type { SttEngine } from '../types.js';
import { VoskEngine } from '../vosk/vosk-engine.js';
import { listInstalledModels, type InstalledModel } from './model-manifest.js';
import { checkModelLayout } from './model-verify.js';

/** A model that cannot be started; the message names its folder. */
export class InstalledModelError extends Error {
  override name = 'InstalledModelError';
}

/** The catalog codes a model's languages serve. */
export function servedLanguages(modelLanguages: readonly string[], catalogLanguages: readonly string[]): string[] {
  return catalogLanguages.filter((code) => modelLanguages.some((language) => code === language || code.startsWith(`${language}-`)));
}

/** A started engine and how to stop it. */
export interface RunningModel {
  readonly model: InstalledModel;
  readonly engine: SttEngine & { close(): Promise<void> };
}

async function startModel(model: InstalledModel, languages: string[], workers: number): Promise<RunningModel['engine']> {
  const manifest = model.manifest;
  if (manifest.engine === 'vosk') return VoskEngine.start({ folder: model.folder, id: `vosk:${model.name}`, languages, workers });
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
  });
}

/**
 * Starts an engine for every installed model whose languages the catalog has.
 * @throws InstalledModelError when a model's description or files are wrong or its engine
 *   refuses it (engines already started are stopped).
 */
export async function startInstalledModels(modelsDir: string, catalogLanguages: readonly string[], workers: number): Promise<RunningModel[]> {
  let models: InstalledModel[];
  try {
    models = await listInstalledModels(modelsDir);
  } catch (error) {
    throw new InstalledModelError((error as Error).message);
  }
  const running: RunningModel[] = [];
  try {
    for (const model of models) {
      const languages = servedLanguages(model.manifest.languages, catalogLanguages);
      if (languages.length === 0) throw new InstalledModelError(`${model.folder}: none of its languages (${model.manifest.languages.join(', ')}) is a catalog language`);
      const problems = await checkModelLayout(model.folder, model.manifest);
      if (problems.length > 0) throw new InstalledModelError(problems.join('; '));
      try {
        running.push({ model, engine: await startModel(model, languages, workers) });
      } catch (error) {
        throw error instanceof InstalledModelError ? error : new InstalledModelError(`${model.folder}: ${(error as Error).message}`);
      }
    }
  } catch (error) {
    await Promise.all(running.map(({ engine }) => engine.close()));
    throw error;
  }
  return running;
}
