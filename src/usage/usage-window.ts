/**
 * The window of a usage report (spec 4.12): `from` and `to` as dates (`YYYY-MM-DD`, UTC) or
 * date-times. A date as `to` means the whole of that day. Without `from` the window starts at
 * the beginning of the current month (UTC); without `to` it ends now.
 */

/** Longest window a report covers: a year and a day (a day breakdown has a row per day). */
export const MAX_WINDOW_DAYS = 367;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

/** A report's window: `from` inclusive, `to` exclusive. */
export interface UsageWindow {
  readonly from: Date;
  readonly to: Date;
}

/** Why a window was refused: the text for the error's detail. */
export class InvalidWindowError extends Error {
  override readonly name = 'InvalidWindowError';
}

/** Midnight UTC at the start of a `YYYY-MM-DD` date, or null when it is not a real date. */
function startOfDate(text: string): Date | null {
  const match = DATE.exec(text);
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const at = new Date(Date.UTC(year, month - 1, day));
  // Date.UTC rolls 2026-02-30 over into March: a date that does not exist comes back changed.
  return at.getUTCFullYear() === year && at.getUTCMonth() === month - 1 && at.getUTCDate() === day ? at : null;
}

/** The moment `text` names; `endOfDay` turns a date into the end of that day. */
function parseMoment(text: string, name: string, endOfDay: boolean): Date {
  const date = startOfDate(text);
  if (date) return endOfDay ? new Date(date.getTime() + 86_400_000) : date;
  if (DATE.test(text)) throw new InvalidWindowError(`${name} ${JSON.stringify(text)} is not a date of the calendar`);
  const at = DATE_TIME.test(text) ? new Date(text) : null;
  if (!at || Number.isNaN(at.getTime())) {
    throw new InvalidWindowError(
      `${name} must be a date (2026-11-01) or a date-time with its offset (2026-11-01T08:00:00Z), not ${JSON.stringify(text.slice(0, 40))}`,
    );
  }
  return at;
}

/**
 * The window `from`/`to` name, seen at `now`.
 * @throws InvalidWindowError for a malformed or impossible date, `from` not before `to`, or a
 *   window longer than {@link MAX_WINDOW_DAYS} days.
 */
export function usageWindow(from: string | undefined, to: string | undefined, now: Date): UsageWindow {
  const start = from === undefined ? new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1)) : parseMoment(from, 'from', false);
  const end = to === undefined ? now : parseMoment(to, 'to', true);
  if (start.getTime() >= end.getTime()) {
    throw new InvalidWindowError(`from (${start.toISOString()}) must come before to (${end.toISOString()})`);
  }
  if (end.getTime() - start.getTime() > MAX_WINDOW_DAYS * 86_400_000) {
    throw new InvalidWindowError(`the window may span at most ${MAX_WINDOW_DAYS} days; ask for a year at a time`);
  }
  return { from: start, to: end };
}

/** The UTC days a window touches, `YYYY-MM-DD`, in order. */
export function daysOf(window: UsageWindow): string[] {
  const days: string[] = [];
  let at = Date.UTC(window.from.getUTCFullYear(), window.from.getUTCMonth(), window.from.getUTCDate());
  for (; at < window.to.getTime(); at += 86_400_000) days.push(new Date(at).toISOString().slice(0, 10));
  return days;
}
