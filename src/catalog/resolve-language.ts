import { findLanguage, type Language } from './languages.js';

/** A language code resolved against the catalog. */
export interface ResolvedLanguage {
  readonly language: Language;
  /** The dialect id, or `null` when the code named none. */
  readonly dialect: string | null;
}

/**
 * Resolves a language code, including the compact `<language>-<dialect>` form
 * (`de-CH-zurich`, `en-GB-scottish`, spec 2.5). Returns `undefined` for anything the catalog
 * does not hold.
 */
export function resolveLanguageCode(code: string): ResolvedLanguage | undefined {
  const trimmed = code.trim();
  const exact = findLanguage(trimmed);
  if (exact) return { language: exact, dialect: null };
  const cut = trimmed.lastIndexOf('-');
  if (cut <= 0) return undefined;
  const language = findLanguage(trimmed.slice(0, cut));
  const dialectId = trimmed.slice(cut + 1).toLowerCase();
  if (!language || !language.dialects.some((d) => d.id === dialectId)) return undefined;
  return { language, dialect: dialectId };
}

/** Every code a client may send: plain codes and their compact dialect forms. */
export function acceptedLanguageCodes(languages: readonly Language[]): string[] {
  return languages.flatMap((language) => [language.code, ...language.dialects.filter((d) => d.id !== 'standard').map((d) => `${language.code}-${d.id}`)]);
}
