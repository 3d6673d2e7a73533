import { cardinalDe } from '../text/numbers-de.js';
import type { RegionTime } from './region-data.js';

const HOUR_WORDS = ['eins', 'zwei', 'drei', 'vier', 'fünf', 'sechs', 'sieben', 'acht', 'neun', 'zehn', 'elf', 'zwölf'];

/** The hour as said on the twelve-hour clock ("föifi" for 5 and for 17). */
function hourWord(time: RegionTime, hours24: number): string {
  return time.hours[((hours24 % 12) + 11) % 12]!;
}

/**
 * A clock time as Swiss German speakers say it: twelve-hour, "halbi" counting towards the next
 * hour, quarters, and minutes "ab" (past) or "vor" (to) the hour or the half hour. Minute numbers
 * come out as German words, which the renderer's number words turn into the dialect.
 */
export function sayTime(time: RegionTime, hours: number, minutes: number): string {
  const now = hourWord(time, hours);
  const next = hourWord(time, hours + 1);
  const count = (n: number) => cardinalDe(n);
  if (minutes === 0) return now;
  if (minutes === 15) return `${time.quarterPast} ${now}`;
  if (minutes === 30) return `${time.half} ${next}`;
  if (minutes === 45) return `${time.quarterTo} ${next}`;
  if (minutes < 25) return `${count(minutes)} ${time.past} ${now}`;
  if (minutes < 30) return `${count(30 - minutes)} ${time.to} ${time.half} ${next}`;
  if (minutes <= 35) return `${count(minutes - 30)} ${time.past} ${time.half} ${next}`;
  return `${count(60 - minutes)} ${time.to} ${next}`;
}

/**
 * Rewrites the clock times of a German text the Swiss German way before general normalisation:
 * "17:30 Uhr", "um 10 Uhr", "von 8 bis 17 Uhr", "zwischen 9 und 11 Uhr", "halb drei".
 */
export function sayTimesIn(text: string, time: RegionTime): string {
  const valid = (h: number, m = 0) => h >= 0 && h <= 24 && m >= 0 && m < 60;
  return text
    .replace(/(?<![\d.:])(\d{1,2})[:.](\d{2})(?:\s?Uhr)?(?![\d.:]\d)/g, (match, h: string, m: string) => {
      // "14.30" without "Uhr" may be an amount; only a colon or "Uhr" makes it a time.
      if (!match.includes(':') && !/Uhr$/.test(match)) return match;
      return valid(Number(h), Number(m)) ? sayTime(time, Number(h), Number(m)) : match;
    })
    .replace(/(?<![\d.:])(\d{1,2})\s(bis|und)\s(\d{1,2})\sUhr(?!\w)/g, (match, a: string, link: string, b: string) =>
      valid(Number(a)) && valid(Number(b)) ? `${sayTime(time, Number(a), 0)} ${link} ${sayTime(time, Number(b), 0)}` : match,
    )
    .replace(/(?<![\d.:])(\d{1,2})\sUhr(?!\w)/g, (match, h: string) => (valid(Number(h)) ? sayTime(time, Number(h), 0) : match))
    .replace(
      new RegExp(`\\bhalb\\s(${HOUR_WORDS.join('|')})\\b`, 'gi'),
      (_match, hour: string) => `${time.half} ${hourWord(time, HOUR_WORDS.indexOf(hour.toLowerCase()) + 1)}`,
    );
}
