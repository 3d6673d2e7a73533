/**
 * The YAML shape of opening hours (opening-hours.ts reads them): the `hours` step spreads these
 * properties into its own. The schema checks the form of each field; what only the values
 * together can show (a period ending before it starts, overlaps, 2026-02-30) is
 * `parseHoursProblems`'s.
 */
import { Type, type TArray, type TOptional, type TString } from '@sinclair/typebox';
import { WEEKLY_KEYS, type WeeklyKey } from './opening-hours.js';
import { CANTONS } from './swiss-holidays.js';

/** One open period in local time; 24:00 ends it at midnight. */
const PERIOD = '^([01][0-9]|2[0-3]):[0-5][0-9]-(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$';

const Periods = (description: string): TArray<TString> =>
  Type.Array(Type.String({ pattern: PERIOD, description: 'HH:MM-HH:MM, Europe/Zurich time; the end may be 24:00' }), { maxItems: 24, description });

const DAY_NAMES: Readonly<Record<WeeklyKey, string>> = {
  'mon-fri': 'Monday to Friday (a day given on its own wins over this)',
  mon: 'Monday',
  tue: 'Tuesday',
  wed: 'Wednesday',
  thu: 'Thursday',
  fri: 'Friday',
  sat: 'Saturday',
  sun: 'Sunday',
};

const weeklyDays = Object.fromEntries(WEEKLY_KEYS.map((key) => [key, Type.Optional(Periods(`open periods on ${DAY_NAMES[key]}`))])) as Record<
  WeeklyKey,
  TOptional<TArray<TString>>
>;

/** Opening hours: the week, dated exceptions, and the canton whose public holidays close. */
export const OpeningHoursSchema = Type.Object(
  {
    weekly: Type.Object(weeklyDays, { additionalProperties: false, description: 'open periods by weekday; a day left out is closed' }),
    exceptions: Type.Optional(
      Type.Array(
        Type.Object(
          {
            date: Type.String({ pattern: '^\\d{4}-\\d{2}-\\d{2}$', description: 'the local date, YYYY-MM-DD' }),
            hours: Periods('open periods that day instead of the week and any holiday; [] closes the whole day'),
            name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'what the day is, for the log (e.g. Sechseläuten)' })),
          },
          { additionalProperties: false, description: 'a date with its own hours' },
        ),
        { maxItems: 1000, description: 'dates that differ from the week; they win over public holidays' },
      ),
    ),
    canton: Type.Optional(
      Type.Union(
        CANTONS.map((canton) => Type.Literal(canton)),
        { description: "closed on this canton's public holidays (two-letter code; a half holiday closes from 12:00)" },
      ),
    ),
  },
  { additionalProperties: false, description: 'when the hotline is open, in Europe/Zurich local time' },
);
