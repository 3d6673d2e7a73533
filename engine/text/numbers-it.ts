/** Italian number words. */

import { numberScales } from './number-scales.js';

const ONES = [
  'zero',
  'uno',
  'due',
  'tre',
  'quattro',
  'cinque',
  'sei',
  'sette',
  'otto',
  'nove',
  'dieci',
  'undici',
  'dodici',
  'tredici',
  'quattordici',
  'quindici',
  'sedici',
  'diciassette',
  'diciotto',
  'diciannove',
];
const TENS = ['', '', 'venti', 'trenta', 'quaranta', 'cinquanta', 'sessanta', 'settanta', 'ottanta', 'novanta'];

function below100(n: number): string {
  if (n < 20) return ONES[n]!;
  let tens = TENS[Math.floor(n / 10)]!;
  const ones = n % 10;
  // The tens drop their last vowel before uno and otto: ventuno, trentotto.
  if (ones === 1 || ones === 8) tens = tens.slice(0, -1);
  return ones === 0 ? tens : `${tens}${ones === 3 ? 'tré' : ONES[ones]}`;
}

function below1000(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const head = hundreds === 0 ? '' : hundreds === 1 ? 'cento' : `${ONES[hundreds]}cento`;
  if (rest === 0) return head;
  const tail = below100(rest);
  // "cento" keeps its o before most numbers but not before otto/ottanta: centottanta.
  return head && tail.startsWith('ott') ? head.slice(0, -1) + tail : head + tail;
}

/** A whole number in Italian words. */
export function cardinalIt(n: number): string {
  if (n < 0) return `meno ${cardinalIt(-n)}`;
  if (n === 0) return 'zero';
  if (n >= 1e12) return digitsIt(String(n));
  const parts: string[] = [];
  const { billions, millions, thousands, rest } = numberScales(n);
  if (billions) parts.push(billions === 1 ? 'un miliardo' : `${below1000(billions)} miliardi`);
  if (millions) parts.push(millions === 1 ? 'un milione' : `${below1000(millions)} milioni`);
  let tail = '';
  if (thousands) tail += thousands === 1 ? 'mille' : `${below1000(thousands)}mila`;
  if (rest) tail += below1000(rest);
  if (tail) parts.push(tail);
  return parts.join(' ');
}

const ORDINALS = ['', 'primo', 'secondo', 'terzo', 'quarto', 'quinto', 'sesto', 'settimo', 'ottavo', 'nono', 'decimo'];

/** An ordinal ("primo", "undicesimo", "ventitreesimo"). */
export function ordinalIt(n: number): string {
  if (n <= 10) return ORDINALS[n]!;
  const word = cardinalIt(n);
  if (word.endsWith('tré')) return `${word.slice(0, -1)}eesimo`;
  if (word.endsWith('sei')) return `${word}esimo`;
  return `${word.slice(0, -1)}esimo`;
}

const DIGITS = ['zero', 'uno', 'due', 'tre', 'quattro', 'cinque', 'sei', 'sette', 'otto', 'nove'];

/** Digits one by one. */
export function digitsIt(digits: string): string {
  return [...digits]
    .filter((c) => c >= '0' && c <= '9')
    .map((c) => DIGITS[Number(c)])
    .join(' ');
}

export const MONTHS_IT = ['gennaio', 'febbraio', 'marzo', 'aprile', 'maggio', 'giugno', 'luglio', 'agosto', 'settembre', 'ottobre', 'novembre', 'dicembre'];
