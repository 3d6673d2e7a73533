import { execFile } from 'node:child_process';
import fs from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Debian's US English acoustic model and dictionary (packages pocketsphinx, pocketsphinx-en-us). */
const MODEL = '/usr/share/pocketsphinx/model/en-us/en-us';
const DICTIONARY = '/usr/share/pocketsphinx/model/en-us/cmudict-en-us.dict';

/** Fails with the install command when Debian's recogniser is missing. */
export async function assertPocketsphinx(): Promise<void> {
  try {
    await fs.access(MODEL);
    await run('pocketsphinx_continuous', ['-h'], { timeout: 10_000 }).catch((error: { code?: string }) => {
      if (error.code === 'ENOENT') throw error;
    });
  } catch {
    throw new Error('pocketsphinx is missing: apt-get install pocketsphinx pocketsphinx-en-us (npm run system-deps)');
  }
}

/**
 * Recognises a 16 kHz mono WAV file with pocketsphinx, constrained to a JSGF grammar whose
 * sentences are exactly the given phrases (how an IVR menu listens). Returns the hypothesis.
 */
export async function recogniseCommand(wav: Uint8Array, phrases: readonly string[]): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'sprachrohr-ps-'));
  try {
    const audio = path.join(dir, 'input.wav');
    const grammar = path.join(dir, 'commands.gram');
    await fs.writeFile(audio, wav);
    await fs.writeFile(grammar, `#JSGF V1.0;\ngrammar commands;\npublic <command> = ${phrases.join(' | ')};\n`);
    const { stdout } = await run('pocketsphinx_continuous', ['-infile', audio, '-jsgf', grammar, '-hmm', MODEL, '-dict', DICTIONARY, '-logfn', '/dev/null'], {
      timeout: 60_000,
    });
    return stdout.trim().replace(/\s+/g, ' ');
  } finally {
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** Word errors between a reference and a hypothesis (Levenshtein over words). */
export function wordErrors(reference: string, hypothesis: string): number {
  const a = reference.split(' ').filter(Boolean);
  const b = hypothesis.split(' ').filter(Boolean);
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const row = [i];
    for (let j = 1; j <= b.length; j++) row[j] = Math.min(previous[j]! + 1, row[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = row;
  }
  return previous[b.length]!;
}

/** IVR commands a menu would listen for: the round trip's test set. */
export const IVR_COMMANDS = [
  'press one for billing',
  'press two for support',
  'speak to an agent',
  'repeat the main menu',
  'account balance please',
  'yes',
  'no',
  'cancel payment',
  'thank you goodbye',
  'operator please',
  'check my order status',
  'talk to customer service',
  'report a power outage',
  'pay my bill',
  'open a new account',
] as const;

/** How well the recogniser heard one voice's commands. */
export interface CommandScore {
  readonly errors: number;
  readonly words: number;
  readonly exact: number;
}

/**
 * Synthesises every IVR command with `synthesise` (the live API) and scores what pocketsphinx
 * hears; `prepare` can turn the audio into the 16 kHz WAV the recogniser needs.
 */
export async function scoreCommands(
  synthesise: (command: string) => Promise<Buffer>,
  prepare: (wav: Buffer) => Promise<Buffer> = async (wav) => wav,
): Promise<CommandScore> {
  let errors = 0;
  let words = 0;
  let exact = 0;
  for (const command of IVR_COMMANDS) {
    const heard = await recogniseCommand(await prepare(await synthesise(command)), IVR_COMMANDS);
    const wrong = wordErrors(command, heard);
    errors += wrong;
    words += command.split(' ').length;
    if (wrong === 0) exact++;
  }
  return { errors, words, exact };
}
