import type { RegionData } from './region-data.js';

const TENS = ['zwanzig', 'dreissig', 'vierzig', 'fünfzig', 'sechzig', 'siebzig', 'achtzig', 'neunzig'];
const COMPOUND_BELOW_HUNDRED = new RegExp(`^(ein|zwei|drei|vier|fünf|sechs|sieben|acht|neun)und(${TENS.join('|')})$`, 'u');

/**
 * A German number word below a hundred in the region's words: "sieben" → "sibe",
 * "einundzwanzig" → "einezwänzg" (the ones take their linking -e, DIALECTS.md).
 */
export function dialectBelowHundred(german: string, data: RegionData): string | null {
  const direct = data.numbers.get(german);
  if (direct !== undefined) return direct;
  if (german === 'ein') return data.numbers.get('eins') ?? null;
  const compound = COMPOUND_BELOW_HUNDRED.exec(german);
  if (!compound) return null;
  const [, ones, tens] = compound as unknown as [string, string, string];
  return (data.compoundOnes.get(ones) ?? `${ones}e`) + (data.numbers.get(tens) ?? tens);
}

/**
 * A number word built on a scale word ("hundert", "tausend"): the count before it (none or
 * "ein" is said bare, as Swiss German does: "hundert", "tuusig") and the rest after it, each
 * said by `below`; the whole word without the scale word goes to `below` alone.
 */
function withScale(german: string, scale: string, below: (part: string) => string | null, data: RegionData): string | null {
  const at = german.indexOf(scale);
  if (at < 0) return below(german);
  const count = german.slice(0, at);
  const rest = german.slice(at + scale.length);
  const multiplier = count === '' || count === 'ein' ? '' : below(count);
  const remainder = rest === '' ? '' : below(rest);
  if (multiplier === null || remainder === null) return null;
  return `${multiplier}${data.numbers.get(scale) ?? scale}${remainder}`;
}

/** Below a thousand: "zweihundertfünfzig" → "zweihundertfüfzg"; "neunzehnhundert" (years) counts with a teen. */
function dialectBelowThousand(german: string, data: RegionData): string | null {
  return withScale(german, 'hundert', (part) => dialectBelowHundred(part, data), data);
}

/**
 * A German cardinal word of any size below a million in the region's words, or null when the
 * word is not one: "zweitausendsechsundzwanzig" → "zweituusigsächsezwänzg",
 * "neunzehnhundertneunzig" → "nüünzäähundertnünzg".
 */
export function dialectCardinal(german: string, data: RegionData): string | null {
  return withScale(german, 'tausend', (part) => dialectBelowThousand(part, data), data);
}
