/** German number words, in Swiss spelling (ss for ß: "dreissig"). */

import { numberScales } from './number-scales.js';

const ONES = [
  'null',
  'eins',
  'zwei',
  'drei',
  'vier',
  'fünf',
  'sechs',
  'sieben',
  'acht',
  'neun',
  'zehn',
  'elf',
  'zwölf',
  'dreizehn',
  'vierzehn',
  'fünfzehn',
  'sechzehn',
  'siebzehn',
  'achtzehn',
  'neunzehn',
];
const TENS = ['', '', 'zwanzig', 'dreissig', 'vierzig', 'fünfzig', 'sechzig', 'siebzig', 'achtzig', 'neunzig'];

/** 1–999 as used inside a compound ("ein" before hundert/tausend and "-und-"). */
function below1000(n: number, final: boolean): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  let out = hundreds > 0 ? `${hundreds === 1 ? 'ein' : ONES[hundreds]}hundert` : '';
  if (rest === 0) return out;
  if (rest < 20) return out + (rest === 1 ? (final ? 'eins' : 'ein') : ONES[rest]);
  const ones = rest % 10;
  const tens = TENS[Math.floor(rest / 10)]!;
  out += ones === 0 ? tens : `${ones === 1 ? 'ein' : ONES[ones]}und${tens}`;
  return out;
}

/** A whole number as German words ("zweitausendsechsundzwanzig", "eine Million"). */
export function cardinalDe(n: number): string {
  if (!Number.isInteger(n)) throw new RangeError(`not an integer: ${n}`);
  if (n < 0) return `minus ${cardinalDe(-n)}`;
  if (n === 0) return 'null';
  if (n >= 1e12) return digitsDe(String(n));
  const parts: string[] = [];
  const { billions, millions, thousands, rest } = numberScales(n);
  if (billions) parts.push(billions === 1 ? 'eine Milliarde' : `${below1000(billions, true)} Milliarden`);
  if (millions) parts.push(millions === 1 ? 'eine Million' : `${below1000(millions, true)} Millionen`);
  let tail = '';
  if (thousands) tail += `${below1000(thousands, false)}tausend`;
  if (rest) tail += below1000(rest, true);
  if (tail) parts.push(tail);
  return parts.join(' ');
}

/** An ordinal in the form used after "der"/"am" ("erste", "dritte", "zwanzigste"). */
export function ordinalDe(n: number, ending: 'e' | 'en' | 'er' = 'e'): string {
  const special: Record<number, string> = { 1: 'erst', 3: 'dritt', 7: 'siebt', 8: 'acht' };
  let stem: string;
  if (special[n]) stem = special[n]!;
  else if (n < 20) stem = `${cardinalDe(n)}t`;
  else {
    const rest = n % 100;
    if (rest > 0 && rest < 20) stem = `${cardinalDe(n - rest)}${special[rest] ? special[rest] : `${below1000(rest, true)}t`}`;
    else stem = `${cardinalDe(n)}st`;
  }
  return stem + ending;
}

/** A year as spoken ("neunzehnhundertneunundneunzig", "zweitausendsechsundzwanzig"). */
export function yearDe(n: number): string {
  if (n >= 1100 && n < 2000) return `${below1000(Math.floor(n / 100), true)}hundert${n % 100 ? below1000(n % 100, true) : ''}`;
  return cardinalDe(n);
}

const DIGITS = ['null', 'eins', 'zwei', 'drei', 'vier', 'fünf', 'sechs', 'sieben', 'acht', 'neun'];

/** Digits one by one ("null vier vier"). */
export function digitsDe(digits: string): string {
  return [...digits]
    .filter((c) => c >= '0' && c <= '9')
    .map((c) => DIGITS[Number(c)])
    .join(' ');
}

export const MONTHS_DE = ['Januar', 'Februar', 'März', 'April', 'Mai', 'Juni', 'Juli', 'August', 'September', 'Oktober', 'November', 'Dezember'];
