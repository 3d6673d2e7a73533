import type { RegionData } from './region-data.js';

const ONES = ['ein', 'eins', 'zwei', 'drei', 'vier', 'fünf', 'sechs', 'sieben', 'acht', 'neun'];
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

/** Below a thousand: "zweihundertfünfzig" → "zweihundertfüfzg"; "einhundert" → "hundert". */
function dialectBelowThousand(german: string, data: RegionData): string | null {
  const at = german.indexOf('hundert');
  if (at < 0) return dialectBelowHundred(german, data);
  const count = german.slice(0, at);
  const rest = german.slice(at + 'hundert'.length);
  // "neunzehnhundert" (years) counts hundreds with a teen.
  const multiplier = count === '' || count === 'ein' ? '' : dialectBelowHundred(count, data);
  const remainder = rest === '' ? '' : dialectBelowHundred(rest, data);
  if (multiplier === null || remainder === null) return null;
  return `${multiplier}${data.numbers.get('hundert') ?? 'hundert'}${remainder}`;
}

/**
 * A German cardinal word of any size below a million in the region's words, or null when the
 * word is not one: "zweitausendsechsundzwanzig" → "zweituusigsächsezwänzg",
 * "neunzehnhundertneunzig" → "nüünzäähundertnünzg". Swiss German says "tuusig" and "hundert"
 * without a leading "ein".
 */
export function dialectCardinal(german: string, data: RegionData): string | null {
  if (!ONES.some((one) => german.includes(one)) && !/zehn|elf|zwölf|zig|ssig|hundert|tausend/u.test(german)) return null;
  const at = german.indexOf('tausend');
  if (at < 0) return dialectBelowThousand(german, data);
  const count = german.slice(0, at);
  const rest = german.slice(at + 'tausend'.length);
  const multiplier = count === '' || count === 'ein' ? '' : dialectBelowThousand(count, data);
  const remainder = rest === '' ? '' : dialectBelowThousand(rest, data);
  if (multiplier === null || remainder === null) return null;
  return `${multiplier}${data.numbers.get('tausend') ?? 'tausend'}${remainder}`;
}
