/**
 * Swiss public holidays by canton, for any year, from the table in swiss-holiday-table.ts
 * (which says what each canton keeps and where the facts come from). Pure: no clock, no I/O.
 * The `hours` step asks for one date on every call, so a year's list is computed once per
 * canton and kept.
 */
import { CANTON_LANGUAGE, CANTONS, HOLIDAY_TABLE, type Canton, type CantonTerms, type DateRule, type HolidayEntry } from './swiss-holiday-table.js';

export { CANTONS, type Canton } from './swiss-holiday-table.js';

/** A public holiday of one canton on one date. */
export interface Holiday {
  /** YYYY-MM-DD */
  readonly date: string;
  /** in the canton's language (German, French or Italian) */
  readonly name: string;
  /** only the afternoon is free */
  readonly half?: 'afternoon';
}

const DAY_MS = 86_400_000;
/** The Gregorian calendar (and so its Easter rule) starts in October 1582. */
const FIRST_YEAR = 1583;
const LAST_YEAR = 9999;

/**
 * Easter Sunday of a Gregorian year, by the anonymous Gregorian computus (Meeus/Jones/Butcher),
 * which needs no tables: 2026 → 5 April, 2027 → 28 March.
 * @throws RangeError for a year that is not an integer from 1583 to 9999
 */
export function easterSunday(year: number): { month: number; day: number } {
  checkYear(year);
  const golden = year % 19;
  const century = Math.floor(year / 100);
  const yearOfCentury = year % 100;
  const leapCenturies = Math.floor(century / 4);
  const centuryRest = century % 4;
  const moonCorrection = Math.floor((century + 8) / 25);
  const solarCorrection = Math.floor((century - moonCorrection + 1) / 3);
  const epact = (19 * golden + century - leapCenturies - solarCorrection + 15) % 30;
  const leapYears = Math.floor(yearOfCentury / 4);
  const yearRest = yearOfCentury % 4;
  const toSunday = (32 + 2 * centuryRest + 2 * leapYears - epact - yearRest) % 7;
  const lateCorrection = Math.floor((golden + 11 * epact + 22 * toSunday) / 451);
  const count = epact + toSunday - 7 * lateCorrection + 114;
  return { month: Math.floor(count / 31), day: (count % 31) + 1 };
}

/**
 * The public holidays of a canton in a year, sorted by date (see swiss-holiday-table.ts for what
 * counts). Two holidays on one date (Auffahrt on 1 May) are both listed.
 * @throws RangeError for an unknown canton or a year that is not an integer from 1583 to 9999
 */
export function swissHolidays(year: number, canton: Canton): Holiday[] {
  return [...holidayYear(year, canton).list];
}

/**
 * The canton's holiday on a date (YYYY-MM-DD), or undefined on a working day. Two holidays on one
 * date come back as one, named "A / B", and a whole day wins over a half. Cheap after the first
 * date of a year: the `hours` step calls it on every call.
 * @throws RangeError for an unknown canton or a year that is not an integer from 1583 to 9999
 */
export function swissHolidayOn(date: string, canton: Canton): Holiday | undefined {
  return holidayYear(Number(date.slice(0, 4)), canton).byDate.get(date);
}

interface HolidayYear {
  readonly list: readonly Holiday[];
  readonly byDate: ReadonlyMap<string, Holiday>;
}

/** Computed years by `${canton}${year}`; a long-running gateway asks for few. */
const years = new Map<string, HolidayYear>();
const MAX_CACHED_YEARS = 512;

function holidayYear(year: number, canton: Canton): HolidayYear {
  const key = `${canton}${year}`;
  const cached = years.get(key);
  if (cached) return cached;
  if (!(CANTONS as readonly string[]).includes(canton)) throw new RangeError(`unknown canton ${JSON.stringify(canton)}`);
  checkYear(year);
  const computed = computeYear(year, canton);
  if (years.size >= MAX_CACHED_YEARS) years.clear();
  years.set(key, computed);
  return computed;
}

function computeYear(year: number, canton: Canton): HolidayYear {
  const easter = easterSunday(year);
  const easterDay = dayNumber(year, easter.month, easter.day);
  const language = CANTON_LANGUAGE[canton];
  const found: Array<{ day: number; holiday: Holiday }> = [];
  for (const entry of Object.values(HOLIDAY_TABLE) as HolidayEntry[]) {
    const terms = termsOf(entry, canton);
    if (!terms) continue;
    const day = ruleDay(entry.rule, year, easterDay);
    if (!keptOn(day, terms)) continue;
    const half = terms === true ? undefined : terms.half;
    found.push({ day, holiday: Object.freeze({ date: isoDate(day), name: entry.names[language], ...(half ? { half } : {}) }) });
  }
  // Array#sort is stable, so holidays on one date keep the table's order.
  found.sort((a, b) => a.day - b.day);
  const list = Object.freeze(found.map((item) => item.holiday));
  const byDate = new Map<string, Holiday>();
  for (const holiday of list) {
    const other = byDate.get(holiday.date);
    byDate.set(holiday.date, other ? mergeHolidays(other, holiday) : holiday);
  }
  return { list, byDate };
}

function termsOf(entry: HolidayEntry, canton: Canton): true | CantonTerms | undefined {
  return entry.cantons === 'all' ? true : entry.cantons[canton];
}

function keptOn(day: number, terms: true | CantonTerms): boolean {
  if (terms === true || terms.only === undefined) return true;
  const weekday = weekdayOf(day);
  if (terms.only === 'if-monday') return weekday === 1;
  return weekday !== 2 && weekday !== 6;
}

function mergeHolidays(first: Holiday, second: Holiday): Holiday {
  const half = first.half && second.half ? first.half : undefined;
  return Object.freeze({ date: first.date, name: `${first.name} / ${second.name}`, ...(half ? { half } : {}) });
}

/** The day (days since 1970-01-01) a rule gives in a year. */
function ruleDay(rule: DateRule, year: number, easterDay: number): number {
  if ('fixed' in rule) return dayNumber(year, rule.fixed.month, rule.fixed.day);
  if ('easter' in rule) return easterDay + rule.easter;
  const first = dayNumber(year, rule.month, 1);
  const day = first + ((rule.weekday - weekdayOf(first) + 7) % 7) + (rule.nth - 1) * 7 + rule.plus;
  const inHolyWeek = day >= easterDay - 7 && day < easterDay;
  return rule.skipHolyWeek && inHolyWeek ? day + 7 : day;
}

function checkYear(year: number): void {
  if (!Number.isInteger(year) || year < FIRST_YEAR || year > LAST_YEAR)
    throw new RangeError(`year ${year} is not a Gregorian year from ${FIRST_YEAR} to ${LAST_YEAR}`);
}

function dayNumber(year: number, month: number, day: number): number {
  return Date.UTC(year, month - 1, day) / DAY_MS;
}

/** 0 = Sunday, as Date#getUTCDay; 1970-01-01 was a Thursday. */
function weekdayOf(day: number): number {
  return (((day + 4) % 7) + 7) % 7;
}

function isoDate(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}
