/**
 * Opening hours of a hotline in Europe/Zurich local time: a week of periods, dated exceptions,
 * and a canton's public holidays. Pure (the instant is an argument) and cheap, since the `hours`
 * step asks on every call: the opening hours are read once per object, a year's holidays once per
 * canton, and the Zurich UTC offset once per hour of time.
 */
import { CANTONS, swissHolidayOn, type Canton, type Holiday } from './swiss-holidays.js';

/** A day of the week, as the `weekly` keys name it. */
export type Weekday = 'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun';

/** The days of the week from Monday. */
export const WEEKDAYS: readonly Weekday[] = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];

/** A key of `weekly`: a day, or `mon-fri` for Monday to Friday (a day's own key wins over it). */
export type WeeklyKey = Weekday | 'mon-fri';

/** The keys of `weekly`, the shorthand first. */
export const WEEKLY_KEYS: readonly WeeklyKey[] = ['mon-fri', ...WEEKDAYS];

/** When a hotline is open, as a dialplan's `hours` step gives it. */
export interface OpeningHours {
  /** per weekday, periods "HH:MM-HH:MM" (end may be 24:00); a missing day is closed */
  readonly weekly: Partial<Record<WeeklyKey, readonly string[]>>;
  /** dates that differ from the week: `hours` [] means closed all day; `name` is logged */
  readonly exceptions?: ReadonlyArray<{ readonly date: string; readonly hours: readonly string[]; readonly name?: string }>;
  /** observe the public holidays of this canton (closed; a half holiday closes from 12:00) */
  readonly canton?: Canton;
}

/** Open, closed, or closed for a public holiday (with its name). */
export type HoursState = { state: 'open' } | { state: 'closed' } | { state: 'holiday'; holiday: string };

const MINUTE_MS = 60_000;
const HOUR_MS = 3_600_000;
const DAY_MS = 86_400_000;
/** A half holiday is free from noon. */
const NOON = 12 * 60;
/** How far `nextOpening` looks ahead. */
const LOOKAHEAD_DAYS = 14;

const PERIOD = /^(?:([01]\d|2[0-3]):([0-5]\d)-(?:([01]\d|2[0-3]):([0-5]\d)|(24):(00)))$/;

/**
 * Whether the hotline is open at an instant. An exception for the local date wins over a holiday
 * and the week (to open on a holiday, or close early); a holiday closes the day (a half holiday
 * from 12:00, periods before noon still count); otherwise the week's periods count, each from its
 * start up to but not including its end. Periods that do not parse are ignored
 * (`parseHoursProblems` reports them when the dialplan loads). `local` is the Zurich date
 * (YYYY-MM-DD), time (HH:MM) and weekday the answer was found for, for the log.
 * @throws RangeError for an invalid Date
 */
export function hoursAt(hours: OpeningHours, at: Date): HoursState & { local: { date: string; time: string; weekday: Weekday } } {
  const now = zurichLocal(at.getTime());
  const day = dayPlan(compiled(hours), now.date, now.weekday);
  const local = { date: now.date, time: `${pad(Math.floor(now.minutes / 60))}:${pad(now.minutes % 60)}`, weekday: WEEK_FROM_SUNDAY[now.weekday]! };
  if (within(day.periods, now.minutes)) return { state: 'open', local };
  if (day.holiday && (day.holiday.half === undefined || now.minutes >= NOON)) return { state: 'holiday', holiday: day.holiday.name, local };
  return { state: 'closed', local };
}

/**
 * The first instant at or after `at`, within the next 14 days, when the hotline is open: `at`
 * itself while open, else the start of the next open period (Friday evening → Monday 08:00, or
 * Tuesday after a holiday Monday). Null when it stays closed that long.
 * @throws RangeError for an invalid Date
 */
export function nextOpening(hours: OpeningHours, at: Date): Date | null {
  const from = at.getTime();
  const now = zurichLocal(from);
  const plan = compiled(hours);
  for (let offset = 0; offset <= LOOKAHEAD_DAYS; offset++) {
    const day = now.day + offset;
    for (const [start, end] of dayPlan(plan, isoDate(day), (now.weekday + offset) % 7).periods) {
      if (offset === 0 && end <= now.minutes) continue;
      if (offset === 0 && start <= now.minutes) return new Date(from);
      const opens = zurichInstant(day * DAY_MS + start * MINUTE_MS, from);
      return opens - from <= LOOKAHEAD_DAYS * DAY_MS ? new Date(opens) : null;
    }
  }
  return null;
}

/**
 * What is wrong with opening hours, one human message each (empty when nothing is): periods not
 * of the form HH:MM-HH:MM, ending before they start or empty, overlapping periods of one day,
 * exception dates that are no calendar date or come twice, an unknown canton. The dialplan loader
 * reports them at the step's file, line and column.
 */
export function parseHoursProblems(hours: OpeningHours): string[] {
  const problems: string[] = [];
  for (const key of WEEKLY_KEYS) {
    const periods = hours.weekly[key];
    if (periods) periodProblems(key, periods, problems);
  }
  const dates = new Set<string>();
  for (const exception of hours.exceptions ?? []) {
    const label = `exception ${exception.date}`;
    if (!isCalendarDate(exception.date)) problems.push(`exception date ${JSON.stringify(exception.date)} is not a calendar date (YYYY-MM-DD)`);
    else if (dates.has(exception.date)) problems.push(`${label} is given twice`);
    dates.add(exception.date);
    periodProblems(label, exception.hours, problems);
  }
  if (hours.canton !== undefined && !(CANTONS as readonly string[]).includes(hours.canton))
    problems.push(`unknown canton ${JSON.stringify(hours.canton)} (one of ${CANTONS.join(', ')})`);
  return problems;
}

/** Minutes of the local day, [start, end). */
type Period = readonly [start: number, end: number];

interface CompiledHours {
  /** by Date#getUTCDay: 0 = Sunday */
  readonly week: ReadonlyArray<readonly Period[]>;
  readonly exceptions: ReadonlyMap<string, readonly Period[]>;
  readonly canton: Canton | undefined;
}

/** One local day's open periods, and the holiday that closes the rest of it. */
interface DayPlan {
  readonly periods: readonly Period[];
  readonly holiday?: Holiday;
}

const WEEK_FROM_SUNDAY: readonly Weekday[] = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];
const WORKDAYS: ReadonlySet<Weekday> = new Set(['mon', 'tue', 'wed', 'thu', 'fri']);

/** Opening hours come from a loaded dialplan and live as long as it, so each is read once. */
const compiledHours = new WeakMap<OpeningHours, CompiledHours>();

function compiled(hours: OpeningHours): CompiledHours {
  let plan = compiledHours.get(hours);
  if (!plan) {
    plan = compile(hours);
    compiledHours.set(hours, plan);
  }
  return plan;
}

function compile(hours: OpeningHours): CompiledHours {
  const week = WEEK_FROM_SUNDAY.map((weekday) => {
    const own = hours.weekly[weekday];
    return parsePeriods(own ?? (WORKDAYS.has(weekday) ? hours.weekly['mon-fri'] : undefined) ?? []);
  });
  // The first exception of a date counts, as the loader reports the second as a problem.
  const exceptions = new Map<string, readonly Period[]>();
  for (const exception of hours.exceptions ?? []) if (!exceptions.has(exception.date)) exceptions.set(exception.date, parsePeriods(exception.hours));
  return { week, exceptions, canton: hours.canton };
}

function dayPlan(plan: CompiledHours, date: string, weekday: number): DayPlan {
  const exception = plan.exceptions.get(date);
  if (exception) return { periods: exception };
  const periods = plan.week[weekday]!;
  const holiday = plan.canton === undefined ? undefined : swissHolidayOn(date, plan.canton);
  if (!holiday) return { periods };
  if (holiday.half === undefined) return { periods: [], holiday };
  const morning = periods.filter(([start]) => start < NOON).map(([start, end]): Period => [start, Math.min(end, NOON)]);
  return { periods: morning, holiday };
}

function within(periods: readonly Period[], minutes: number): boolean {
  return periods.some(([start, end]) => start <= minutes && minutes < end);
}

function parsePeriod(text: string): Period | undefined {
  const match = PERIOD.exec(text);
  if (!match) return undefined;
  const start = Number(match[1]) * 60 + Number(match[2]);
  const end = match[5] === undefined ? Number(match[3]) * 60 + Number(match[4]) : 24 * 60;
  return [start, end];
}

/** The periods that parse and are not empty, by start. */
function parsePeriods(texts: readonly string[]): Period[] {
  return texts
    .map(parsePeriod)
    .filter((period): period is Period => period !== undefined && period[0] < period[1])
    .sort((a, b) => a[0] - b[0]);
}

function periodProblems(label: string, texts: readonly string[], problems: string[]): void {
  const good: Array<{ period: Period; text: string }> = [];
  for (const text of texts) {
    const period = parsePeriod(text);
    if (!period) problems.push(`${label}: ${JSON.stringify(text)} is not HH:MM-HH:MM`);
    else if (period[1] < period[0]) problems.push(`${label}: ${JSON.stringify(text)} ends before it starts`);
    else if (period[1] === period[0]) problems.push(`${label}: ${JSON.stringify(text)} is empty`);
    else good.push({ period, text });
  }
  good.sort((a, b) => a.period[0] - b.period[0]);
  for (let index = 1; index < good.length; index++) {
    const before = good[index - 1]!;
    const after = good[index]!;
    if (after.period[0] < before.period[1]) problems.push(`${label}: ${JSON.stringify(before.text)} and ${JSON.stringify(after.text)} overlap`);
  }
}

function isCalendarDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const time = Date.parse(`${text}T00:00:00Z`);
  return !Number.isNaN(time) && new Date(time).toISOString().startsWith(text);
}

/** Zurich wall time of an instant: its date (and as days since 1970), minutes of the day, weekday (0 = Sunday). */
function zurichLocal(time: number): { date: string; day: number; minutes: number; weekday: number } {
  if (!Number.isFinite(time)) throw new RangeError('opening hours need a valid date');
  const wall = time + zurichOffset(time);
  const local = new Date(wall);
  return {
    date: `${local.getUTCFullYear()}-${pad(local.getUTCMonth() + 1)}-${pad(local.getUTCDate())}`,
    day: Math.floor(wall / DAY_MS),
    minutes: local.getUTCHours() * 60 + local.getUTCMinutes(),
    weekday: local.getUTCDay(),
  };
}

const ZURICH = new Intl.DateTimeFormat('en-US', {
  timeZone: 'Europe/Zurich',
  hourCycle: 'h23',
  year: 'numeric',
  month: 'numeric',
  day: 'numeric',
  hour: 'numeric',
  minute: 'numeric',
  second: 'numeric',
});

/**
 * Offsets by UTC hour. Europe/Zurich has changed its offset only on whole UTC hours (summer time
 * starts and ends at 01:00 UTC), so one Intl lookup serves the whole hour; formatToParts costs
 * microseconds, a Map lookup next to nothing.
 */
const offsets = new Map<number, number>();
const MAX_CACHED_HOURS = 4096;

/** Milliseconds to add to an instant for Zurich wall time (1 or 2 hours). */
function zurichOffset(time: number): number {
  const hour = Math.floor(time / HOUR_MS);
  let offset = offsets.get(hour);
  if (offset === undefined) {
    offset = intlOffset(hour * HOUR_MS);
    if (offsets.size >= MAX_CACHED_HOURS) offsets.clear();
    offsets.set(hour, offset);
  }
  return offset;
}

function intlOffset(time: number): number {
  const part: Partial<Record<Intl.DateTimeFormatPartTypes, number>> = {};
  for (const { type, value } of ZURICH.formatToParts(time)) part[type] = Number(value);
  return Date.UTC(part.year!, part.month! - 1, part.day!, part.hour!, part.minute!, part.second!) - time;
}

/**
 * The instant of a Zurich wall time (given as if it were UTC), not before `notBefore`. In the
 * autumn hour that comes twice it is the first such; in the spring hour that is skipped, the
 * moment the clocks jump (the first instant whose wall time is not earlier).
 */
function zurichInstant(wall: number, notBefore: number): number {
  // The offsets half a day either side are the ones in force before and after any change.
  const candidates = [wall - zurichOffset(wall - 12 * HOUR_MS), wall - zurichOffset(wall + 12 * HOUR_MS)];
  const valid = candidates.filter((time) => time >= notBefore && time + zurichOffset(time) === wall);
  if (valid.length > 0) return Math.min(...valid);
  return Math.floor(Math.max(...candidates) / HOUR_MS) * HOUR_MS;
}

function isoDate(day: number): string {
  return new Date(day * DAY_MS).toISOString().slice(0, 10);
}

function pad(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}
