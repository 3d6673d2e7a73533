/**
 * How catalog voices and languages map onto eSpeak NG: a language voice per language code
 * (regional codes eSpeak lacks go to the nearest real voice) and, per named voice, a variant
 * with pitch and rate that make the voices easy to tell apart.
 */

/** eSpeak voice per language code, or per `<code>-<dialect>` where a dialect has its own. */
const LANGUAGE_VOICES: Readonly<Record<string, string>> = {
  'de-CH': 'gmw/de',
  de: 'gmw/de',
  'de-AT': 'gmw/de',
  'fr-CH': 'roa/fr-CH',
  'fr-CH-geneve': 'roa/fr-CH',
  fr: 'roa/fr',
  // eSpeak has no Canadian French voice: the French voice is the nearest.
  'fr-CA': 'roa/fr',
  'it-CH': 'roa/it',
  it: 'roa/it',
  en: 'gmw/en-US',
  'en-GB': 'gmw/en-GB-x-rp',
  'en-GB-scottish': 'gmw/en-GB-scotland',
  // eSpeak has no Indian English voice: British English is the nearest.
  'en-IN': 'gmw/en',
};

/** Delivery of a named voice on eSpeak. */
export interface EspeakVoiceStyle {
  /** eSpeak variant (voices/!v): sets the timbre and sex of the voice. */
  readonly variant: string;
  /** Base pitch 0–100 (eSpeak default 50). */
  readonly pitch: number;
  /** Pitch range 0–100 (eSpeak default 50): how much the melody moves. */
  readonly range: number;
  /** Speaking rate in words per minute at speed 1. */
  readonly wordsPerMinute: number;
}

/** Named voices; ids match the catalog (`src/catalog/voices.ts`, checked by a test). */
export const ESPEAK_VOICE_STYLES: Readonly<Record<string, EspeakVoiceStyle>> = {
  anna: { variant: 'f3', pitch: 55, range: 50, wordsPerMinute: 165 },
  lea: { variant: 'f2', pitch: 90, range: 60, wordsPerMinute: 180 },
  jonas: { variant: 'm2', pitch: 40, range: 45, wordsPerMinute: 160 },
  marco: { variant: 'm1', pitch: 48, range: 55, wordsPerMinute: 190 },
};

/** The eSpeak voice for a language and dialect, or `undefined` when there is none. */
export function espeakLanguageVoice(language: string, dialect: string | null): string | undefined {
  return (dialect && LANGUAGE_VOICES[`${language}-${dialect}`]) || LANGUAGE_VOICES[language];
}

/** Every eSpeak language voice in use, for warming them up at start. */
export function espeakLanguageVoices(): string[] {
  return [...new Set(Object.values(LANGUAGE_VOICES))];
}

/** Language codes the mapping covers. */
export function espeakLanguages(): string[] {
  return Object.keys(LANGUAGE_VOICES).filter((code) => !code.endsWith('-geneve') && !code.endsWith('-scottish'));
}
