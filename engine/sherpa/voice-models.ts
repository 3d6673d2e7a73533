import fs from 'node:fs/promises';
import path from 'node:path';
import { pathExists } from '../path-exists.js';

/** The files of one installed neural voice. */
export interface VoiceModelFiles {
  /** Catalog voice id the model speaks as (`anna`). */
  readonly voice: string;
  /** Language code it speaks (`de-CH`, or a base language like `de` that serves its regions). */
  readonly language: string;
  readonly folder: string;
  readonly model: string;
  readonly tokens: string;
  /** `espeak-ng-data/` of Piper voices (phonemisation), when present. */
  readonly dataDir: string | null;
  /** `lexicon.txt` of lexicon-based voices, when present. */
  readonly lexicon: string | null;
}

/** A voices folder that does not have the documented layout; the message names the path. */
export class VoiceModelError extends Error {
  override name = 'VoiceModelError';
}

/**
 * Finds installed neural voices. Layout: `<voices>/<voice>/<language>/model.onnx` with
 * `tokens.txt`, and `espeak-ng-data/` (Piper) or `lexicon.txt` beside them, for example
 * `voices/anna/de/model.onnx`. Folders whose voice or language the catalog does not know are
 * refused, so a typo does not silently leave a voice on the fallback engine.
 */
export async function findVoiceModels(voicesDir: string, knownVoices: readonly string[], knownLanguages: readonly string[]): Promise<VoiceModelFiles[]> {
  let voiceFolders: string[];
  try {
    voiceFolders = (await fs.readdir(voicesDir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch (error) {
    throw new VoiceModelError(`the voices folder ${voicesDir} cannot be read: ${(error as Error).message}`);
  }
  const found: VoiceModelFiles[] = [];
  for (const voice of voiceFolders.sort()) {
    if (!knownVoices.includes(voice)) {
      throw new VoiceModelError(`${path.join(voicesDir, voice)}: "${voice}" is not a catalog voice (${knownVoices.join(', ')})`);
    }
    const languageFolders = (await fs.readdir(path.join(voicesDir, voice), { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
    for (const language of languageFolders.sort()) {
      const folder = path.join(voicesDir, voice, language);
      if (!knownLanguages.includes(language)) {
        throw new VoiceModelError(`${folder}: "${language}" is not a catalog language (${knownLanguages.join(', ')})`);
      }
      const model = path.join(folder, 'model.onnx');
      const tokens = path.join(folder, 'tokens.txt');
      if (!(await pathExists(model))) throw new VoiceModelError(`${folder}: model.onnx is missing`);
      if (!(await pathExists(tokens))) throw new VoiceModelError(`${folder}: tokens.txt is missing`);
      const dataDir = path.join(folder, 'espeak-ng-data');
      const lexicon = path.join(folder, 'lexicon.txt');
      found.push({
        voice,
        language,
        folder,
        model,
        tokens,
        dataDir: (await pathExists(dataDir)) ? dataDir : null,
        lexicon: (await pathExists(lexicon)) ? lexicon : null,
      });
    }
  }
  return found;
}
