import { LANGUAGES } from './languages.js';

/** A named voice (spec 2.4 Voice). */
export interface Voice {
  readonly id: string;
  readonly name: string;
  readonly gender: 'female' | 'male' | 'neutral';
  readonly timbre: string;
  readonly pace: string;
  readonly description: string;
  readonly best_for: readonly string[];
  readonly languages: readonly string[];
}

const allLanguages = LANGUAGES.map((language) => language.code);

/**
 * The voices of this deployment. Each speaks every catalog language; the engine layer maps a
 * voice to an engine voice and variant per language.
 */
export const VOICES: readonly Voice[] = [
  {
    id: 'anna',
    name: 'Anna',
    gender: 'female',
    timbre: 'clear, mid-pitched',
    pace: 'moderate',
    description: 'A clear female voice at a moderate pace; the default voice.',
    best_for: ['ivr', 'announcements', 'general'],
    languages: allLanguages,
  },
  {
    id: 'lea',
    name: 'Lea',
    gender: 'female',
    timbre: 'bright, higher-pitched',
    pace: 'lively',
    description: 'A brighter, higher female voice with a slightly quicker delivery.',
    best_for: ['notifications', 'short prompts'],
    languages: allLanguages,
  },
  {
    id: 'jonas',
    name: 'Jonas',
    gender: 'male',
    timbre: 'low, steady',
    pace: 'unhurried',
    description: 'A low, steady male voice at an unhurried pace.',
    best_for: ['ivr', 'information lines'],
    languages: allLanguages,
  },
  {
    id: 'marco',
    name: 'Marco',
    gender: 'male',
    timbre: 'low, firm',
    pace: 'brisk',
    description: 'A firm male voice with a brisk pace, for dense information.',
    best_for: ['reading numbers', 'status updates'],
    languages: allLanguages,
  },
];

/** The voice used when a request names none (spec 2.1). */
export const DEFAULT_VOICE = 'anna';

/** Finds a voice by id (exact, case-sensitive as ids are stable identifiers). */
export function findVoice(id: string): Voice | undefined {
  return VOICES.find((voice) => voice.id === id);
}
