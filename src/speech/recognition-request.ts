import { AUTO_LANGUAGE_CANDIDATES, DEFAULT_LANGUAGE } from '../catalog/languages.js';
import { LIMITS } from '../catalog/limits.js';
import { resolveLanguageCode } from '../catalog/resolve-language.js';
import { ApiError } from '../api/errors.js';

/** Most candidate languages in one request. */
const MAX_CANDIDATES = 10;

/**
 * Parses `lang` of a recognition request (spec 4.5, 2.3): one code, comma-separated
 * candidates, or `auto`. Candidates are kept exactly as given (a dialect stays on), because
 * the transcript reports the detected candidate back unchanged.
 * @throws ApiError `stt.invalid_request` naming the code at fault.
 */
export function parseLanguageCandidates(value: string | undefined): string[] {
  const raw = value === undefined || value.trim() === '' ? DEFAULT_LANGUAGE : value.trim();
  if (raw.toLowerCase() === 'auto') return [...AUTO_LANGUAGE_CANDIDATES];
  const candidates = raw.split(',').map((code) => code.trim());
  if (candidates.some((code) => code === '')) throw new ApiError('stt.invalid_request', `lang "${raw}" has an empty candidate`);
  if (candidates.length > MAX_CANDIDATES)
    throw new ApiError('stt.invalid_request', `lang names ${candidates.length} candidates; at most ${MAX_CANDIDATES} are accepted`);
  for (const code of candidates) {
    if (code.toLowerCase() === 'auto') throw new ApiError('stt.invalid_request', 'auto cannot be combined with other candidates');
    if (!resolveLanguageCode(code)) throw new ApiError('stt.invalid_request', `lang "${code}" is not a supported language; see GET /v1/capabilities`);
  }
  return [...new Set(candidates)];
}

/**
 * Parses `vocabulary` (spec 4.5): a JSON array of strings or a comma-separated list; at most
 * 200 terms of 100 characters each.
 * @throws ApiError `stt.invalid_request` explaining what is wrong.
 */
export function parseVocabulary(value: string | undefined): string[] {
  if (value === undefined || value.trim() === '') return [];
  const trimmed = value.trim();
  let terms: string[];
  // A value that starts like JSON is JSON or nothing: `{not json` or `["a",` taken as a comma
  // list would hand the recogniser brackets and quotes as words.
  if (trimmed.startsWith('[') || trimmed.startsWith('{')) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(trimmed);
    } catch {
      throw new ApiError(
        'stt.invalid_request',
        `vocabulary starts with ${trimmed[0]} but is not valid JSON; send a JSON array of strings or a comma-separated list`,
      );
    }
    if (!Array.isArray(parsed) || !parsed.every((term) => typeof term === 'string')) {
      throw new ApiError('stt.invalid_request', 'vocabulary in JSON must be an array of strings');
    }
    terms = parsed.map((term: string) => term.trim());
  } else {
    terms = trimmed.split(',').map((term) => term.trim());
  }
  return checkVocabularyTerms(terms);
}

/**
 * Checks vocabulary terms given as a list (the realtime `config` frame): empty terms dropped,
 * at most 200 terms of 100 characters each.
 * @throws ApiError `stt.invalid_request` explaining what is wrong.
 */
export function checkVocabularyTerms(given: readonly string[]): string[] {
  const terms = given.map((term) => term.trim()).filter((term) => term !== '');
  if (terms.length > LIMITS.sttMaxVocabularyTerms) {
    throw new ApiError('stt.invalid_request', `vocabulary has ${terms.length} terms; at most ${LIMITS.sttMaxVocabularyTerms} are accepted`);
  }
  const long = terms.find((term) => [...term].length > LIMITS.sttMaxVocabularyTermCharacters);
  if (long !== undefined) {
    throw new ApiError('stt.invalid_request', `vocabulary term "${long.slice(0, 40)}…" is longer than ${LIMITS.sttMaxVocabularyTermCharacters} characters`);
  }
  return terms;
}
