/**
 * Opening hours in Europe/Zurich time: the edges of a period, weekends, Zürich's holidays, dated
 * exceptions, half holidays, both summer-time changes of 2026 and 2027, the next opening, the
 * problems the loader reports, the schema, and the cost of one answer.
 */
import { Value } from '@sinclair/typebox/value';
import { describe, expect, it } from 'vitest';
import { OpeningHoursSchema } from '../../src/dialplan/opening-hours-schema.js';
import { hoursAt, nextOpening, parseHoursProblems, type OpeningHours } from '../../src/dialplan/opening-hours.js';

/** Monday to Friday 08:00-17:30, Zürich's holidays. */
const OFFICE: OpeningHours = { canton: 'ZH', weekly: { 'mon-fri': ['08:00-17:30'] } };

const stateAt = (hours: OpeningHours, instant: string) => hoursAt(hours, new Date(instant)).state;
const next = (hours: OpeningHours, instant: string) => nextOpening(hours, new Date(instant))?.toISOString() ?? null;
const iso = (instant: string) => new Date(instant).toISOString();

describe('hoursAt', () => {
  it('opens at 08:00 sharp and closes at 17:30 sharp, local time (Wednesday 4 March 2026, CET)', () => {
    expect(stateAt(OFFICE, '2026-03-04T07:59:59+01:00')).toBe('closed');
    expect(stateAt(OFFICE, '2026-03-04T08:00:00+01:00')).toBe('open');
    expect(stateAt(OFFICE, '2026-03-04T17:29:00+01:00')).toBe('open');
    expect(stateAt(OFFICE, '2026-03-04T17:29:59+01:00')).toBe('open');
    expect(stateAt(OFFICE, '2026-03-04T17:30:00+01:00')).toBe('closed');
  });

  it('says which local date, time and weekday it looked at', () => {
    expect(hoursAt(OFFICE, new Date('2026-03-04T06:59:59Z'))).toEqual({ state: 'closed', local: { date: '2026-03-04', time: '07:59', weekday: 'wed' } });
    expect(hoursAt(OFFICE, new Date('2026-12-31T23:30:00Z')).local).toEqual({ date: '2027-01-01', time: '00:30', weekday: 'fri' });
  });

  it('is closed at the weekend', () => {
    expect(stateAt(OFFICE, '2026-03-07T10:00:00+01:00')).toBe('closed');
    expect(stateAt(OFFICE, '2026-03-08T10:00:00+01:00')).toBe('closed');
  });

  it("is on holiday, named, on Zürich's holidays, all day", () => {
    expect(hoursAt(OFFICE, new Date('2026-04-03T10:00:00+02:00'))).toMatchObject({ state: 'holiday', holiday: 'Karfreitag' });
    expect(hoursAt(OFFICE, new Date('2026-05-25T07:00:00+02:00'))).toMatchObject({ state: 'holiday', holiday: 'Pfingstmontag' });
    expect(hoursAt(OFFICE, new Date('2026-05-01T20:00:00+02:00'))).toMatchObject({ state: 'holiday', holiday: 'Tag der Arbeit' });
    expect(hoursAt(OFFICE, new Date('2026-01-02T09:00:00+01:00'))).toMatchObject({ state: 'holiday', holiday: 'Berchtoldstag' });
  });

  it('knows no holidays without a canton', () => {
    expect(stateAt({ weekly: OFFICE.weekly }, '2026-04-03T10:00:00+02:00')).toBe('open');
  });

  it('an exception wins: Sechseläuten closes at noon, Heiligabend closes in the afternoon', () => {
    const hotline: OpeningHours = {
      ...OFFICE,
      exceptions: [
        { date: '2026-04-20', hours: ['08:00-12:00'], name: 'Sechseläuten' },
        { date: '2026-12-24', hours: ['08:00-12:00'], name: 'Heiligabend' },
      ],
    };
    expect(stateAt(hotline, '2026-04-20T11:59:00+02:00')).toBe('open');
    expect(stateAt(hotline, '2026-04-20T12:00:00+02:00')).toBe('closed');
    expect(stateAt(hotline, '2026-12-24T09:00:00+01:00')).toBe('open');
    expect(stateAt(hotline, '2026-12-24T14:00:00+01:00')).toBe('closed');
    expect(stateAt(hotline, '2026-12-23T14:00:00+01:00')).toBe('open');
  });

  it('an exception opens a holiday, or closes a whole working day', () => {
    const hotline: OpeningHours = {
      ...OFFICE,
      exceptions: [
        { date: '2026-05-25', hours: ['09:00-12:00'] },
        { date: '2026-03-11', hours: [], name: 'Betriebsausflug' },
      ],
    };
    expect(stateAt(hotline, '2026-05-25T10:00:00+02:00')).toBe('open');
    expect(stateAt(hotline, '2026-05-25T13:00:00+02:00')).toBe('closed');
    expect(stateAt(hotline, '2026-03-11T10:00:00+01:00')).toBe('closed');
  });

  it('a half holiday (Solothurn, 1 May): periods before noon count, from noon it is a holiday', () => {
    const solothurn: OpeningHours = { canton: 'SO', weekly: { 'mon-fri': ['07:30-17:00'] } };
    expect(stateAt(solothurn, '2026-05-01T07:00:00+02:00')).toBe('closed');
    expect(stateAt(solothurn, '2026-05-01T11:59:00+02:00')).toBe('open');
    expect(hoursAt(solothurn, new Date('2026-05-01T12:00:00+02:00'))).toMatchObject({ state: 'holiday', holiday: 'Tag der Arbeit' });
    expect(stateAt(solothurn, '2026-05-04T12:00:00+02:00')).toBe('open');
  });

  it("mon-fri is a shorthand that a day's own key overrides", () => {
    const hours: OpeningHours = { weekly: { 'mon-fri': ['08:00-17:30'], fri: ['08:00-12:00'], wed: [], sat: ['09:00-12:00'] } };
    expect(stateAt(hours, '2026-03-02T15:00:00+01:00')).toBe('open');
    expect(stateAt(hours, '2026-03-04T10:00:00+01:00')).toBe('closed');
    expect(stateAt(hours, '2026-03-06T11:00:00+01:00')).toBe('open');
    expect(stateAt(hours, '2026-03-06T15:00:00+01:00')).toBe('closed');
    expect(stateAt(hours, '2026-03-07T10:00:00+01:00')).toBe('open');
    expect(stateAt(hours, '2026-03-08T10:00:00+01:00')).toBe('closed');
  });

  it('a period may end at 24:00, and several periods make a day', () => {
    const hours: OpeningHours = { weekly: { sat: ['20:00-24:00'], sun: ['00:00-02:00', '10:00-12:00'] } };
    expect(stateAt(hours, '2026-03-07T23:59:59+01:00')).toBe('open');
    expect(stateAt(hours, '2026-03-08T01:00:00+01:00')).toBe('open');
    expect(stateAt(hours, '2026-03-08T05:00:00+01:00')).toBe('closed');
    expect(stateAt(hours, '2026-03-08T11:00:00+01:00')).toBe('open');
  });

  it('summer time 2026: the week before and after 29 March and 25 October', () => {
    expect(hoursAt(OFFICE, new Date('2026-03-27T06:30:00Z'))).toMatchObject({ state: 'closed', local: { time: '07:30' } });
    expect(hoursAt(OFFICE, new Date('2026-03-27T07:00:00Z'))).toMatchObject({ state: 'open', local: { time: '08:00' } });
    expect(hoursAt(OFFICE, new Date('2026-03-30T05:59:00Z'))).toMatchObject({ state: 'closed', local: { time: '07:59' } });
    expect(hoursAt(OFFICE, new Date('2026-03-30T06:30:00Z'))).toMatchObject({ state: 'open', local: { time: '08:30' } });
    expect(hoursAt(OFFICE, new Date('2026-10-23T06:00:00Z'))).toMatchObject({ state: 'open', local: { time: '08:00' } });
    expect(hoursAt(OFFICE, new Date('2026-10-26T06:30:00Z'))).toMatchObject({ state: 'closed', local: { time: '07:30' } });
    expect(hoursAt(OFFICE, new Date('2026-10-26T07:30:00Z'))).toMatchObject({ state: 'open', local: { time: '08:30' } });
  });

  it('summer time 2026: the clocks jump at 01:00 UTC (02:00 → 03:00, then 03:00 → 02:00)', () => {
    const local = (instant: string) => hoursAt(OFFICE, new Date(instant)).local.time;
    expect(local('2026-03-29T00:59:00Z')).toBe('01:59');
    expect(local('2026-03-29T01:00:00Z')).toBe('03:00');
    expect(local('2026-10-25T00:30:00Z')).toBe('02:30');
    expect(local('2026-10-25T01:00:00Z')).toBe('02:00');
    expect(local('2026-10-25T01:30:00Z')).toBe('02:30');
  });

  it('summer time 2027: 28 March and 31 October', () => {
    const local = (instant: string) => hoursAt(OFFICE, new Date(instant)).local.time;
    expect(local('2027-03-28T00:59:00Z')).toBe('01:59');
    expect(local('2027-03-28T01:00:00Z')).toBe('03:00');
    expect(local('2027-10-31T00:30:00Z')).toBe('02:30');
    expect(local('2027-10-31T01:30:00Z')).toBe('02:30');
    expect(stateAt(OFFICE, '2027-03-25T06:30:00Z')).toBe('closed'); // Thursday, 07:30 CET
    expect(stateAt(OFFICE, '2027-03-25T07:00:00Z')).toBe('open'); // 08:00 CET
    expect(stateAt(OFFICE, '2027-03-30T05:59:00Z')).toBe('closed'); // Tuesday after Easter Monday, 07:59 CEST
    expect(stateAt(OFFICE, '2027-03-30T06:30:00Z')).toBe('open'); // 08:30 CEST
    expect(stateAt(OFFICE, '2027-10-29T06:00:00Z')).toBe('open'); // Friday, 08:00 CEST
    expect(stateAt(OFFICE, '2027-11-01T06:59:00Z')).toBe('closed'); // Monday, 07:59 CET
    expect(stateAt(OFFICE, '2027-11-01T07:00:00Z')).toBe('open'); // 08:00 CET
  });

  it('refuses an invalid date', () => {
    expect(() => hoursAt(OFFICE, new Date(Number.NaN))).toThrow(RangeError);
  });

  it('costs well under 20 µs a call once the year is known', () => {
    const hours: OpeningHours = { ...OFFICE, exceptions: [{ date: '2026-04-20', hours: ['08:00-12:00'] }] };
    const start = Date.parse('2026-03-02T00:00:00Z');
    const instants = Array.from({ length: 1000 }, (_, index) => new Date(start + index * 997_000));
    for (const at of instants) hoursAt(hours, at);
    const calls = 50_000;
    const began = process.hrtime.bigint();
    for (let index = 0; index < calls; index++) hoursAt(hours, instants[index % instants.length]!);
    const microseconds = Number(process.hrtime.bigint() - began) / 1000 / calls;
    expect(microseconds).toBeLessThan(20);
  });
});

describe('nextOpening', () => {
  it('Friday evening → Monday 08:00', () => {
    expect(next(OFFICE, '2026-03-06T18:00:00+01:00')).toBe(iso('2026-03-09T08:00:00+01:00'));
  });

  it('across a holiday Monday (Pfingstmontag) → Tuesday 08:00', () => {
    expect(next(OFFICE, '2026-05-22T18:00:00+02:00')).toBe(iso('2026-05-26T08:00:00+02:00'));
  });

  it('across the change to summer time → Monday 08:00 CEST', () => {
    expect(next(OFFICE, '2026-03-27T18:00:00+01:00')).toBe(iso('2026-03-30T08:00:00+02:00'));
  });

  it('the same instant while open, and 08:00 the same day before it', () => {
    expect(next(OFFICE, '2026-03-04T10:15:30+01:00')).toBe(iso('2026-03-04T10:15:30+01:00'));
    expect(next(OFFICE, '2026-03-04T06:00:00+01:00')).toBe(iso('2026-03-04T08:00:00+01:00'));
  });

  it('after a half day: Heiligabend afternoon → Monday 28 December', () => {
    const hotline: OpeningHours = { ...OFFICE, exceptions: [{ date: '2026-12-24', hours: ['08:00-12:00'], name: 'Heiligabend' }] };
    expect(next(hotline, '2026-12-24T13:00:00+01:00')).toBe(iso('2026-12-28T08:00:00+01:00'));
    const solothurn: OpeningHours = { canton: 'SO', weekly: { 'mon-fri': ['08:00-17:30'] } };
    expect(next(solothurn, '2026-05-01T12:30:00+02:00')).toBe(iso('2026-05-04T08:00:00+02:00'));
  });

  it('a period starting in the skipped hour opens when the clocks jump; in the doubled hour, the first time', () => {
    const night: OpeningHours = { weekly: { sun: ['02:30-05:00'] } };
    expect(next(night, '2026-03-28T12:00:00Z')).toBe('2026-03-29T01:00:00.000Z');
    expect(next(night, '2026-10-24T12:00:00Z')).toBe('2026-10-25T00:30:00.000Z');
  });

  it('null when closed for the next 14 days', () => {
    expect(next({ weekly: {} }, '2026-03-04T10:00:00+01:00')).toBeNull();
    const later: OpeningHours = { weekly: {}, exceptions: [{ date: '2026-03-24', hours: ['09:00-10:00'] }] };
    expect(next(later, '2026-03-04T10:00:00+01:00')).toBeNull();
    expect(next(later, '2026-03-14T10:00:00+01:00')).toBe(iso('2026-03-24T09:00:00+01:00'));
  });
});

describe('parseHoursProblems', () => {
  it('finds nothing wrong with good hours', () => {
    const hours: OpeningHours = {
      canton: 'ZH',
      weekly: { 'mon-fri': ['08:00-12:00', '13:30-17:30'], sat: ['09:00-12:00'], sun: ['20:00-24:00'] },
      exceptions: [
        { date: '2026-04-20', hours: ['08:00-12:00'], name: 'Sechseläuten' },
        { date: '2028-02-29', hours: [] },
      ],
    };
    expect(parseHoursProblems(hours)).toEqual([]);
  });

  it.each([
    ['a period not of the form', { mon: ['8:00-17:00'] }, 'mon: "8:00-17:00" is not HH:MM-HH:MM'],
    ['an hour past 23', { tue: ['08:00-25:00'] }, 'tue: "08:00-25:00" is not HH:MM-HH:MM'],
    ['a start at 24:00', { wed: ['24:00-24:00'] }, 'wed: "24:00-24:00" is not HH:MM-HH:MM'],
    ['an end before the start', { fri: ['17:00-08:00'] }, 'fri: "17:00-08:00" ends before it starts'],
    ['an empty period', { sat: ['08:00-08:00'] }, 'sat: "08:00-08:00" is empty'],
    ['overlapping periods', { 'mon-fri': ['13:00-17:00', '08:00-13:30'] }, 'mon-fri: "08:00-13:30" and "13:00-17:00" overlap'],
  ])('%s', (_, weekly, message) => {
    expect(parseHoursProblems({ weekly })).toEqual([message]);
  });

  it('periods that only touch do not overlap', () => {
    expect(parseHoursProblems({ weekly: { mon: ['08:00-12:00', '12:00-17:00'] } })).toEqual([]);
  });

  it('exception dates that are no calendar date, or come twice, and bad exception periods', () => {
    const hours: OpeningHours = {
      weekly: {},
      exceptions: [
        { date: '2026-02-30', hours: [] },
        { date: '2027-02-29', hours: [] },
        { date: '2026-13-01', hours: [] },
        { date: '2026-12-24', hours: ['08:00-12:00'] },
        { date: '2026-12-24', hours: ['8-12'] },
      ],
    };
    expect(parseHoursProblems(hours)).toEqual([
      'exception date "2026-02-30" is not a calendar date (YYYY-MM-DD)',
      'exception date "2027-02-29" is not a calendar date (YYYY-MM-DD)',
      'exception date "2026-13-01" is not a calendar date (YYYY-MM-DD)',
      'exception 2026-12-24 is given twice',
      'exception 2026-12-24: "8-12" is not HH:MM-HH:MM',
    ]);
  });

  it('an unknown canton', () => {
    expect(parseHoursProblems({ weekly: {}, canton: 'XX' as OpeningHours['canton'] })).toEqual([expect.stringMatching(/^unknown canton "XX"/)]);
  });
});

describe('OpeningHoursSchema', () => {
  it('takes the shape a dialplan writes, with the mon-fri shorthand', () => {
    expect(
      Value.Check(OpeningHoursSchema, {
        canton: 'ZH',
        weekly: { 'mon-fri': ['08:00-17:30'], sat: ['09:00-12:00'], sun: ['18:00-24:00'] },
        exceptions: [
          { date: '2026-04-20', hours: ['08:00-12:00'], name: 'Sechseläuten' },
          { date: '2026-12-24', hours: [] },
        ],
      }),
    ).toBe(true);
  });

  it.each([
    ['a period of another form', { weekly: { mon: ['8:00-17:00'] } }],
    ['an end past 24:00', { weekly: { mon: ['08:00-24:30'] } }],
    ['an unknown day', { weekly: { monday: ['08:00-17:00'] } }],
    ['an unknown field', { weekly: {}, timezone: 'Europe/Zurich' }],
    ['an unknown canton', { weekly: {}, canton: 'XX' }],
    ['a date of another form', { weekly: {}, exceptions: [{ date: '24.12.2026', hours: [] }] }],
    ['an exception without hours', { weekly: {}, exceptions: [{ date: '2026-12-24' }] }],
    ['no week', {}],
  ])('refuses %s', (_, value) => {
    expect(Value.Check(OpeningHoursSchema, value)).toBe(false);
  });

  it('describes every field', () => {
    const undescribed: string[] = [];
    const walk = (schema: Record<string, any>, path: string): void => {
      if (path && typeof schema['description'] !== 'string') undescribed.push(path);
      for (const [key, property] of Object.entries(schema['properties'] ?? {})) walk(property as Record<string, any>, `${path}.${key}`);
      if (schema['items']) walk(schema['items'], `${path}[]`);
    };
    walk(OpeningHoursSchema, '');
    expect(undescribed).toEqual([]);
  });
});
