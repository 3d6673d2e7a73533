/**
 * Languages and dialects the service accepts (spec 2.4, 2.5).
 *
 * Status is `verified` only where the service's own speech has been measured: English, whose
 * synthesised IVR commands a recogniser understands word for word (docs/engines.md, "Intelligibility, measured"). Every
 * other language is `supported` until it has such a figure.
 */

/** A variety inside one language (spec 2.4 Dialect). */
export interface Dialect {
  readonly id: string;
  readonly name: string;
  readonly region: string | null;
}

/** A language code with its dialects (spec 2.4 Language). */
export interface Language {
  readonly code: string;
  readonly name: string;
  readonly status: 'verified' | 'supported';
  readonly dialects: readonly Dialect[];
  readonly default_dialect: string | null;
}

const standard = (name: string, region: string | null = null): Dialect => ({ id: 'standard', name, region });

/** Every language of this deployment; the first dialect of each is its default. */
export const LANGUAGES: readonly Language[] = [
  {
    code: 'de-CH',
    name: 'German (Switzerland)',
    status: 'supported',
    default_dialect: 'standard',
    dialects: [
      standard('Swiss German, supra-regional', 'Switzerland'),
      { id: 'zurich', name: 'Züritüütsch', region: 'Zürich' },
      { id: 'bern', name: 'Bärndütsch', region: 'Bern' },
      { id: 'basel', name: 'Baseldytsch', region: 'Basel' },
      { id: 'luzern', name: 'Luzärnerdütsch', region: 'Luzern' },
      { id: 'stgallen', name: 'Sanggallerdütsch', region: 'St. Gallen' },
      { id: 'aargau', name: 'Aargauerdütsch', region: 'Aargau' },
      { id: 'graubuenden', name: 'Bündnerdütsch', region: 'Graubünden' },
      { id: 'wallis', name: 'Walliserdütsch', region: 'Wallis' },
      { id: 'hochdeutsch', name: 'Swiss High German (word for word)', region: 'Switzerland' },
    ],
  },
  { code: 'de', name: 'German', status: 'supported', default_dialect: 'standard', dialects: [standard('Standard German')] },
  { code: 'de-AT', name: 'German (Austria)', status: 'supported', default_dialect: 'standard', dialects: [standard('Austrian Standard German', 'Austria')] },
  {
    code: 'fr-CH',
    name: 'French (Switzerland)',
    status: 'supported',
    default_dialect: 'standard',
    dialects: [standard('Swiss French', 'Romandie'), { id: 'geneve', name: 'Genevan French', region: 'Genève' }],
  },
  { code: 'fr', name: 'French', status: 'supported', default_dialect: 'standard', dialects: [standard('Standard French')] },
  { code: 'fr-CA', name: 'French (Canada)', status: 'supported', default_dialect: 'standard', dialects: [standard('Canadian French', 'Canada')] },
  { code: 'it-CH', name: 'Italian (Switzerland)', status: 'supported', default_dialect: 'standard', dialects: [standard('Swiss Italian', 'Ticino')] },
  { code: 'it', name: 'Italian', status: 'supported', default_dialect: 'standard', dialects: [standard('Standard Italian')] },
  { code: 'en', name: 'English', status: 'verified', default_dialect: 'standard', dialects: [standard('General English')] },
  {
    code: 'en-GB',
    name: 'English (United Kingdom)',
    status: 'supported',
    default_dialect: 'standard',
    dialects: [standard('British English', 'United Kingdom'), { id: 'scottish', name: 'Scottish English', region: 'Scotland' }],
  },
  { code: 'en-IN', name: 'English (India)', status: 'supported', default_dialect: 'standard', dialects: [standard('Indian English', 'India')] },
];

/** Default synthesis and recognition language (spec 2.1, 4.5). */
export const DEFAULT_LANGUAGE = 'de-CH';

/** What `lang=auto` stands for in recognition (spec 4.5). */
export const AUTO_LANGUAGE_CANDIDATES: readonly string[] = ['de-CH', 'fr-CH', 'it', 'en'];

const byCode = new Map(LANGUAGES.map((language) => [language.code.toLowerCase(), language]));

/** Finds a language by code, ignoring case. */
export function findLanguage(code: string): Language | undefined {
  return byCode.get(code.toLowerCase());
}
