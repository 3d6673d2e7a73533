/**
 * Checks a Vosk model folder before libvosk sees it. Kaldi ends the whole process when a file
 * it expects is missing in some places (an assertion, not an error), so the layout is checked
 * here and a folder that lacks a part is refused with the part's name.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathExists } from '../path-exists.js';

/** What the adapter needs to know about a model folder. */
export interface VoskModelLayout {
  readonly folder: string;
  /** Rate of the audio the model's features expect (from `conf/mfcc.conf`). */
  readonly sampleRateHz: number;
  /** A lookahead graph (`HCLr.fst` + `Gr.fst`): grammars can be built per stream. */
  readonly dynamicGraph: boolean;
}

/** A folder that is not a usable Vosk model; the message names the folder and the part. */
export class VoskModelError extends Error {
  override name = 'VoskModelError';
}

/** Files every model has, whichever graph it uses. */
const REQUIRED = ['am/final.mdl', 'conf/mfcc.conf', 'conf/model.conf', 'graph/words.txt'];
/** The i-vector extractor's files; all or none. */
const IVECTOR = ['ivector/final.ie', 'ivector/final.dubm', 'ivector/final.mat', 'ivector/global_cmvn.stats', 'ivector/online_cmvn.conf', 'ivector/splice.conf'];

/**
 * Reads a model folder's layout (the one of every model on alphacephei.com/vosk/models:
 * `am/`, `conf/`, `graph/`, optional `ivector/`).
 * @throws VoskModelError naming what is missing or malformed.
 */
export async function readVoskModelLayout(folder: string): Promise<VoskModelLayout> {
  for (const part of REQUIRED) {
    if (!(await pathExists(join(folder, part)))) throw new VoskModelError(`${folder} is not a Vosk model: ${part} is missing`);
  }
  const staticGraph = await pathExists(join(folder, 'graph/HCLG.fst'));
  const dynamicGraph = (await pathExists(join(folder, 'graph/HCLr.fst'))) && (await pathExists(join(folder, 'graph/Gr.fst')));
  if (!staticGraph && !dynamicGraph)
    throw new VoskModelError(`${folder} is not a Vosk model: it has neither graph/HCLG.fst nor graph/HCLr.fst with graph/Gr.fst`);
  if (!staticGraph && !(await pathExists(join(folder, 'graph/disambig_tid.int')))) {
    throw new VoskModelError(`${folder} is not a Vosk model: its lookahead graph needs graph/disambig_tid.int`);
  }
  if (await pathExists(join(folder, 'ivector'))) {
    for (const part of IVECTOR) {
      if (!(await pathExists(join(folder, part)))) throw new VoskModelError(`${folder}: the i-vector extractor is incomplete (${part} is missing)`);
    }
  }
  const mfcc = await readFile(join(folder, 'conf/mfcc.conf'), 'utf8');
  const rate = /^--sample-frequency=(\d+(?:\.\d+)?)\s*$/m.exec(mfcc);
  // Kaldi's default when the file does not set it.
  const sampleRateHz = rate ? Number(rate[1]) : 16000;
  if (!Number.isInteger(sampleRateHz) || sampleRateHz < 8000 || sampleRateHz > 48000) {
    throw new VoskModelError(`${folder}: conf/mfcc.conf sets a sample frequency Vosk cannot use (${rate?.[1]})`);
  }
  return { folder, sampleRateHz, dynamicGraph: dynamicGraph && !staticGraph };
}
