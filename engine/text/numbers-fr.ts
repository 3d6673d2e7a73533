/** French number words (Swiss usage: septante, huitante, nonante). */

import { numberScales } from './number-scales.js';

const ONES = [
  'zéro',
  'un',
  'deux',
  'trois',
  'quatre',
  'cinq',
  'six',
  'sept',
  'huit',
  'neuf',
  'dix',
  'onze',
  'douze',
  'treize',
  'quatorze',
  'quinze',
  'seize',
  'dix-sept',
  'dix-huit',
  'dix-neuf',
];
const TENS = ['', '', 'vingt', 'trente', 'quarante', 'cinquante', 'soixante', 'septante', 'huitante', 'nonante'];

function below100(n: number): string {
  if (n < 20) return ONES[n]!;
  const tens = TENS[Math.floor(n / 10)]!;
  const ones = n % 10;
  if (ones === 0) return tens;
  return ones === 1 ? `${tens} et un` : `${tens}-${ONES[ones]}`;
}

function below1000(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const head = hundreds === 0 ? '' : hundreds === 1 ? 'cent' : `${ONES[hundreds]} cent${rest === 0 ? 's' : ''}`;
  if (rest === 0) return head;
  return head ? `${head} ${below100(rest)}` : below100(rest);
}

/** A whole number in Swiss French words. */
export function cardinalFr(n: number): string {
  if (n < 0) return `moins ${cardinalFr(-n)}`;
  if (n === 0) return 'zéro';
  if (n >= 1e12) return digitsFr(String(n));
  const parts: string[] = [];
  const { billions, millions, thousands, rest } = numberScales(n);
  if (billions) parts.push(`${below1000(billions)} milliard${billions > 1 ? 's' : ''}`);
  if (millions) parts.push(`${below1000(millions)} million${millions > 1 ? 's' : ''}`);
  if (thousands) parts.push(thousands === 1 ? 'mille' : `${below1000(thousands)} mille`);
  if (rest) parts.push(below1000(rest));
  return parts.join(' ');
}

/** An ordinal ("premier", "deuxième", "vingt et unième"). */
export function ordinalFr(n: number): string {
  if (n === 1) return 'premier';
  const word = cardinalFr(n);
  if (word.endsWith('cinq')) return `${word}uième`;
  if (word.endsWith('neuf')) return `${word.slice(0, -1)}vième`;
  if (word.endsWith('e')) return `${word.slice(0, -1)}ième`;
  return `${word}ième`;
}

const DIGITS = ['zéro', 'un', 'deux', 'trois', 'quatre', 'cinq', 'six', 'sept', 'huit', 'neuf'];

/** Digits one by one. */
export function digitsFr(digits: string): string {
  return [...digits]
    .filter((c) => c >= '0' && c <= '9')
    .map((c) => DIGITS[Number(c)])
    .join(' ');
}

export const MONTHS_FR = ['janvier', 'février', 'mars', 'avril', 'mai', 'juin', 'juillet', 'août', 'septembre', 'octobre', 'novembre', 'décembre'];
