/**
 * What the schema cannot see in a step: catalog voices, languages and dialects, regular
 * expressions that do not compile, menu options that cannot be chosen, opening hours that make
 * no sense. Each problem names the field it is in, so the loader can point at its line.
 */
import { findLanguage } from '../catalog/languages.js';
import { findVoice } from '../catalog/voices.js';
import type { DialplanRoute, DialplanStep } from './dialplan-schema.js';
import { parseHoursProblems } from './opening-hours.js';

/** A problem in a step, at a field path below the step. */
export interface StepProblem {
  readonly field: ReadonlyArray<string | number>;
  readonly message: string;
}

/** The problems of one step of a route (empty when it is good). */
export function stepProblems(step: DialplanStep, route: DialplanRoute): StepProblem[] {
  const problems: StepProblem[] = [];
  const add = (message: string, ...field: Array<string | number>): void => void problems.push({ field, message });
  const voiced = (kind: string, fields: { voice?: string; language?: string; dialect?: string; dialect_text?: boolean }): void => {
    if (fields.voice !== undefined && !findVoice(fields.voice)) add(`unknown voice ${JSON.stringify(fields.voice)}`, kind, 'voice');
    const language = findLanguage(fields.language ?? route.language);
    if (fields.language !== undefined && !language) add(`unknown language ${JSON.stringify(fields.language)}`, kind, 'language');
    if (language && fields.dialect !== undefined && !language.dialects.some((dialect) => dialect.id === fields.dialect))
      add(`${language.code} has no dialect ${JSON.stringify(fields.dialect)} (it has ${language.dialects.map((d) => d.id).join(', ')})`, kind, 'dialect');
    const problem = fields.dialect_text
      ? dialectTextProblem(language?.code, fields.dialect ?? (fields.language === undefined ? route.dialect : undefined))
      : null;
    if (problem) add(problem, kind, 'dialect_text');
  };
  const regex = (pattern: string, ...field: Array<string | number>): void => {
    try {
      new RegExp(pattern, 'u');
    } catch (error) {
      add(`not a regular expression: ${(error as Error).message}`, ...field);
    }
  };
  if ('say' in step) voiced('say', step.say);
  if ('listen' in step) voiced('listen', { ...(step.listen.language !== undefined ? { language: step.listen.language } : {}) });
  if ('gather' in step) {
    voiced('gather', step.gather);
    if (step.gather.pattern !== undefined) regex(step.gather.pattern, 'gather', 'pattern');
    if ((step.gather.min_digits ?? 1) > (step.gather.max_digits ?? 32)) add('min_digits is more than max_digits', 'gather', 'min_digits');
  }
  if ('menu' in step) {
    voiced('menu', step.menu);
    const keys = new Set<string>();
    step.menu.options.forEach((option, index) => {
      if (option.key === undefined && option.words === undefined) add('an option needs a key, words or both', 'menu', 'options', index);
      if (option.key !== undefined && keys.has(option.key)) add(`key ${option.key} chooses two options`, 'menu', 'options', index, 'key');
      if (option.key !== undefined) keys.add(option.key);
      if (option.words && !Array.isArray(option.words))
        for (const code of Object.keys(option.words))
          if (!findLanguage(code)) add(`unknown language ${JSON.stringify(code)}`, 'menu', 'options', index, 'words', code);
    });
  }
  if ('transfer' in step && step.transfer.trunk !== undefined && step.transfer.mode === 'refer')
    add('a transfer through a trunk is a bridged call: mode refer cannot take a trunk', 'transfer', 'mode');
  if ('language' in step) {
    if (!findLanguage(step.language.language)) add(`unknown language ${JSON.stringify(step.language.language)}`, 'language', 'language');
    else voiced('language', step.language);
  }
  if ('branch' in step)
    step.branch.forEach((branchCase, index) => {
      for (const [name, test] of Object.entries(branchCase.if ?? {}))
        if (typeof test === 'object' && test.matches !== undefined) regex(test.matches, 'branch', index, 'if', name, 'matches');
    });
  if ('hours' in step) for (const message of parseHoursProblems(step.hours)) add(message, 'hours');
  return problems;
}

/**
 * Why `dialect_text` cannot apply to a prompt in this language and dialect, or null when it
 * can: it is for text written in a Swiss German dialect (planSynthesis refuses the rest too).
 */
export function dialectTextProblem(language: string | undefined, dialect: string | undefined): string | null {
  if (language !== undefined && language !== 'de-CH') return `dialect_text is for text written in a Swiss German dialect (de-CH), not ${language}`;
  if (dialect === 'hochdeutsch') return 'dialect_text is for text written in a Swiss German dialect; hochdeutsch is read as written';
  return null;
}
