import type { EmphasisLevel, Prosody } from '../../engine/types.js';

/** SSML's named rates as multipliers. */
const RATES: Record<string, number> = { 'x-slow': 0.5, slow: 0.75, medium: 1, default: 1, fast: 1.25, 'x-fast': 1.6 };
/** SSML's named pitches as multipliers of the voice's pitch. */
const PITCHES: Record<string, number> = { 'x-low': 0.75, low: 0.88, medium: 1, default: 1, high: 1.14, 'x-high': 1.3 };
/** SSML's named volumes in decibels (the values SSML 1.1 suggests). */
const VOLUMES: Record<string, number> = { silent: -Infinity, 'x-soft': -12, soft: -6, medium: 0, default: 0, loud: 6, 'x-loud': 12 };

/** Bounds that keep nested prosody speakable. */
const RATE_BOUNDS = [0.25, 4] as const;
const PITCH_BOUNDS = [0.5, 2] as const;
const VOLUME_MAX_DB = 20;

const clamp = (value: number, [low, high]: readonly [number, number]) => Math.min(high, Math.max(low, value));

/** `rate` of `<prosody>`: a name or a percentage of the current rate. */
export function parseRate(value: string): number {
  if (value in RATES) return RATES[value]!;
  return Number(value.replace('%', '')) / 100;
}

/** `pitch` of `<prosody>`: a name, ±N % or ±N semitones relative to the current pitch. */
export function parsePitch(value: string): number {
  if (value in PITCHES) return PITCHES[value]!;
  if (value.endsWith('st')) return 2 ** (Number(value.slice(0, -2)) / 12);
  return 1 + Number(value.replace('%', '')) / 100;
}

/** `volume` of `<prosody>`: a name or ±N dB relative to the current volume. */
export function parseVolumeDb(value: string): number {
  if (value in VOLUMES) return VOLUMES[value]!;
  return Number(value.replace('dB', ''));
}

/** Applies one `<prosody>` element's attributes on top of the prosody around it. */
export function nestProsody(outer: Prosody, attributes: Readonly<Record<string, string>>): Prosody {
  const rate = attributes['rate'] === undefined ? outer.rate : clamp(outer.rate * parseRate(attributes['rate']), RATE_BOUNDS);
  const pitch = attributes['pitch'] === undefined ? outer.pitch : clamp(outer.pitch * parsePitch(attributes['pitch']), PITCH_BOUNDS);
  const volumeDb = attributes['volume'] === undefined ? outer.volumeDb : Math.min(VOLUME_MAX_DB, outer.volumeDb + parseVolumeDb(attributes['volume']));
  return { ...outer, rate, pitch, volumeDb };
}

/** Applies `<emphasis level>` on top of the prosody around it. */
export function withEmphasis(outer: Prosody, level: EmphasisLevel): Prosody {
  return { ...outer, emphasis: level };
}
