/**
 * Loads the deployment lexicon: `lexicon.yaml` (or `lexicon.yml`) in the dialplan folder, or
 * the file `SPRACHROHR_LEXICON_FILE` names. Its syntax and schema, then what a schema cannot
 * say: regions the catalog has, German written once, pronunciations the Swiss pronunciation
 * can speak (IPA over `engine/dialect/swiss-phones.ts`, one word per spoken word). Every
 * problem names the file, line and column.
 */
import fs from 'node:fs/promises';
import path from 'node:path';
import { Ajv } from 'ajv';
import { DeploymentLexicon, ipaProblem, ipaWords, spokenForm, spokenKey, spokenWords, type LexiconEntry } from '../../engine/dialect/deployment-lexicon.js';
import { findLanguage } from '../catalog/languages.js';
import type { Env } from '../config-values.js';
import { DialplanError, readYamlFile, type YamlPath } from '../dialplan/yaml-file.js';
import { LexiconEntrySchema, LexiconFileSchema, type LexiconEntryFields } from './lexicon-schema.js';

/** The names the lexicon may have in the dialplan folder; the dialplan loader leaves them alone. */
export const LEXICON_FILE_NAMES = ['lexicon.yaml', 'lexicon.yml'] as const;

/** Whether a file (by its name) is a lexicon rather than a dialplan. */
export function isLexiconFile(file: string): boolean {
  return (LEXICON_FILE_NAMES as readonly string[]).includes(path.basename(file));
}

/** The Swiss German dialects (regions) of the catalog; `hochdeutsch` among them. */
export const LEXICON_REGIONS: readonly string[] = findLanguage('de-CH')!.dialects.map((dialect) => dialect.id);
const HOCHDEUTSCH = 'hochdeutsch';

/** Where the lexicon is looked for. */
export interface LexiconLocation {
  /** The file `SPRACHROHR_LEXICON_FILE` names: it must exist. */
  readonly file: string | null;
  /** Otherwise `lexicon.yaml` or `lexicon.yml` here, if there is one. */
  readonly directory: string;
}

/** The lexicon's place from the environment: `SPRACHROHR_LEXICON_FILE`, else beside the dialplans. */
export function lexiconLocation(env: Env, dialplansDir: string): LexiconLocation {
  const file = env['SPRACHROHR_LEXICON_FILE'];
  return { file: file ? path.resolve(file) : null, directory: dialplansDir };
}

/** A loaded lexicon and the file it came from. */
export interface LoadedLexicon {
  readonly file: string;
  readonly lexicon: DeploymentLexicon;
}

/**
 * The lexicon at a location, checked; `null` when there is none (no file named, none in the folder).
 * @throws DialplanError at the first problem (also when the named file cannot be read)
 */
export async function loadLexicon(location: LexiconLocation): Promise<LoadedLexicon | null> {
  const candidates = location.file ? [location.file] : LEXICON_FILE_NAMES.map((name) => path.join(location.directory, name));
  for (const file of candidates) {
    let text: string;
    try {
      text = await fs.readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT' && !location.file) continue;
      throw new DialplanError(file, 0, 0, `cannot be read: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
    }
    return { file, lexicon: checkLexicon(file, text) };
  }
  return null;
}

const ajv = new Ajv({ allErrors: false, strict: false });
const validateFile = ajv.compile(LexiconFileSchema);
const validateEntry = ajv.compile(LexiconEntrySchema);

/** A word or phrase begins and ends with a letter or digit: it is matched as whole words. */
const WHOLE_WORDS = /^[\p{L}\p{N}](?:[^\n\r]*[\p{L}\p{N}])?$/u;

/**
 * Parses and checks a lexicon's text.
 * @throws DialplanError at the first problem
 */
export function checkLexicon(file: string, text: string): DeploymentLexicon {
  const { data, at, where: whereOf, failure } = readYamlFile(file, text);
  if (data === null || typeof data !== 'object' || Array.isArray(data)) throw at([], 'a lexicon is a mapping with the list entries');
  const fileProblem = failure(validateFile, data, []);
  if (fileProblem) throw fileProblem;
  const seen = new Map<string, string>();
  /** Spoken word → its IPA and where it was given, for words pronounced two ways. */
  const sounds = new Map<string, { ipa: string; where: string }>();
  const entries = (data as { entries: unknown[] }).entries.map((raw, index): LexiconEntry => {
    const base: YamlPath = ['entries', index];
    const problemAt = (field: YamlPath, message: string): DialplanError => at([...base, ...field], message);
    const pronunciation = raw !== null && typeof raw === 'object' ? (raw as { pronunciation?: unknown }).pronunciation : undefined;
    if (pronunciation !== null && typeof pronunciation === 'object' && 'espeak' in pronunciation)
      throw problemAt(
        ['pronunciation', 'espeak'],
        'pronunciation takes ipa only: the Swiss pronunciation works on IPA phones, which every engine maps; eSpeak phoneme strings would bypass it (write the IPA, e.g. ipa: "ˈdyːbəndɔrf")',
      );
    const problem = failure(validateEntry, raw, base);
    if (problem) throw problem;
    const fields = raw as LexiconEntryFields;
    const where = whereOf(base);
    const german = fields.german.trim().replace(/\s+/gu, ' ').replace(/ß/g, 'ss').replace(/ẞ/g, 'SS');
    if (!WHOLE_WORDS.test(german))
      throw problemAt(['german'], 'german must begin and end with a letter or digit and be one line: it is matched as whole words');
    if (fields.dialect === undefined && fields.regions === undefined && fields.pronunciation === undefined)
      throw problemAt(['german'], 'an entry needs dialect, regions or pronunciation (or several)');
    const earlier = seen.get(german.toLowerCase());
    if (earlier) throw problemAt(['german'], `${JSON.stringify(german)} is in the lexicon twice (also at ${earlier})`);
    seen.set(german.toLowerCase(), where);
    const regions = new Map<string, string>();
    for (const [region, form] of Object.entries(fields.regions ?? {})) {
      if (region === HOCHDEUTSCH)
        throw problemAt(['regions', region], 'hochdeutsch keeps the German words: give no form for it (a pronunciation alone applies there)');
      if (!LEXICON_REGIONS.includes(region))
        throw problemAt(
          ['regions', region],
          `de-CH has no dialect ${JSON.stringify(region)} (it has ${LEXICON_REGIONS.filter((id) => id !== HOCHDEUTSCH).join(', ')})`,
        );
      regions.set(region, form.trim());
    }
    let ipa: string[] | null = null;
    if (fields.pronunciation) {
      const ipaAt = (message: string) => problemAt(['pronunciation', 'ipa'], message);
      ipa = ipaWords(fields.pronunciation.ipa);
      if (ipa.length === 0) throw ipaAt('ipa holds no sounds');
      for (const word of ipa) {
        const problem = ipaProblem(word);
        if (problem !== null) throw ipaAt(`ipa ${JSON.stringify(fields.pronunciation.ipa)}: ${problem}`);
      }
    }
    const entry: LexiconEntry = { german, dialect: fields.dialect?.trim() ?? null, regions, ipa, where };
    if (ipa) {
      // Each spoken form has as many words as the IPA: word i is said as IPA word i.
      const forms = new Set(LEXICON_REGIONS.map((region) => spokenForm(entry, region)?.spoken).filter((form) => form !== undefined));
      for (const form of forms) {
        const words = spokenWords(form);
        if (words.length !== ipa.length)
          throw problemAt(
            ['pronunciation', 'ipa'],
            `ipa has ${ipa.length} word${ipa.length === 1 ? '' : 's'} but ${JSON.stringify(form)} has ${words.length}: give one IPA word per spoken word`,
          );
        words.forEach((word, wordIndex) => {
          const key = spokenKey(word);
          const known = sounds.get(key);
          if (known && known.ipa !== ipa![wordIndex])
            throw problemAt(['pronunciation', 'ipa'], `${JSON.stringify(word)} is pronounced /${known.ipa}/ at ${known.where} and /${ipa![wordIndex]}/ here`);
          sounds.set(key, { ipa: ipa![wordIndex]!, where });
        });
      }
    }
    return entry;
  });
  return new DeploymentLexicon(entries, LEXICON_REGIONS);
}
