/** Swiss public holidays: the Easter computus, Zürich's list exactly, and the cantons' own days and rules. */
import { describe, expect, it } from 'vitest';
import { CANTONS, easterSunday, swissHolidayOn, swissHolidays, type Canton } from '../../src/dialplan/swiss-holidays.js';

const dates = (year: number, canton: Canton) => swissHolidays(year, canton).map((holiday) => holiday.date);
const named = (year: number, canton: Canton, name: string) => swissHolidays(year, canton).filter((holiday) => holiday.name === name);

describe('easterSunday', () => {
  it.each([
    [2024, 3, 31],
    [2025, 4, 20],
    [2026, 4, 5],
    [2027, 3, 28],
    [2028, 4, 16],
    [2029, 4, 1],
    [2030, 4, 21],
  ])('%i: %i-%i', (year, month, day) => {
    expect(easterSunday(year)).toEqual({ month, day });
  });

  it('reaches the earliest and latest possible dates and the century years', () => {
    expect(easterSunday(1818)).toEqual({ month: 3, day: 22 });
    expect(easterSunday(2285)).toEqual({ month: 3, day: 22 });
    expect(easterSunday(1943)).toEqual({ month: 4, day: 25 });
    expect(easterSunday(2038)).toEqual({ month: 4, day: 25 });
    expect(easterSunday(2000)).toEqual({ month: 4, day: 23 });
    expect(easterSunday(2100)).toEqual({ month: 3, day: 28 });
  });

  it('refuses years outside the Gregorian calendar and fractions', () => {
    expect(() => easterSunday(1582)).toThrow(RangeError);
    expect(() => easterSunday(2026.5)).toThrow(RangeError);
  });
});

describe('swissHolidays: Zürich', () => {
  it('2026: exactly the ten days, named', () => {
    expect(swissHolidays(2026, 'ZH')).toEqual([
      { date: '2026-01-01', name: 'Neujahr' },
      { date: '2026-01-02', name: 'Berchtoldstag' },
      { date: '2026-04-03', name: 'Karfreitag' },
      { date: '2026-04-06', name: 'Ostermontag' },
      { date: '2026-05-01', name: 'Tag der Arbeit' },
      { date: '2026-05-14', name: 'Auffahrt' },
      { date: '2026-05-25', name: 'Pfingstmontag' },
      { date: '2026-08-01', name: 'Bundesfeiertag' },
      { date: '2026-12-25', name: 'Weihnachten' },
      { date: '2026-12-26', name: 'Stephanstag' },
    ]);
  });

  it('2027 (Easter 28 March): Karfreitag 26.3, Ostermontag 29.3, Auffahrt 6.5, Pfingstmontag 17.5', () => {
    expect(dates(2027, 'ZH')).toEqual([
      '2027-01-01',
      '2027-01-02',
      '2027-03-26',
      '2027-03-29',
      '2027-05-01',
      '2027-05-06',
      '2027-05-17',
      '2027-08-01',
      '2027-12-25',
      '2027-12-26',
    ]);
  });

  it('knows neither Sechseläuten nor Knabenschiessen (half days a dialplan adds itself)', () => {
    expect(swissHolidayOn('2026-04-20', 'ZH')).toBeUndefined();
    expect(swissHolidayOn('2026-09-14', 'ZH')).toBeUndefined();
  });
});

describe('swissHolidays: the cantons', () => {
  it('Geneva: Jeûne genevois on the Thursday after the first Sunday of September, Restauration on 31 December', () => {
    expect(named(2026, 'GE', 'Jeûne genevois').map((holiday) => holiday.date)).toEqual(['2026-09-10']);
    expect(named(2024, 'GE', 'Jeûne genevois').map((holiday) => holiday.date)).toEqual(['2024-09-05']);
    expect(swissHolidayOn('2026-12-31', 'GE')?.name).toBe('Restauration de la République');
    expect(swissHolidayOn('2026-12-26', 'GE')).toBeUndefined();
  });

  it('Vaud: Lundi du Jeûne, the Monday after the third Sunday of September', () => {
    expect(named(2026, 'VD', 'Lundi du Jeûne').map((holiday) => holiday.date)).toEqual(['2026-09-21']);
    expect(named(2027, 'VD', 'Lundi du Jeûne').map((holiday) => holiday.date)).toEqual(['2027-09-20']);
  });

  it('Glarus: Näfelser Fahrt on the first Thursday of April, a week later when that is Maundy Thursday', () => {
    expect(named(2027, 'GL', 'Näfelser Fahrt').map((holiday) => holiday.date)).toEqual(['2027-04-01']);
    // 2026-04-02 is the Thursday before Easter (5 April): the Fahrt moves to 9 April, as in 2021 and 2023.
    expect(named(2026, 'GL', 'Näfelser Fahrt').map((holiday) => holiday.date)).toEqual(['2026-04-09']);
    expect(named(2021, 'GL', 'Näfelser Fahrt').map((holiday) => holiday.date)).toEqual(['2021-04-08']);
    expect(named(2023, 'GL', 'Näfelser Fahrt').map((holiday) => holiday.date)).toEqual(['2023-04-13']);
  });

  it('Fronleichnam, 60 days after Easter, in Lucerne and (as Corpus Domini) in Ticino, but not in Zürich', () => {
    expect(swissHolidayOn('2026-06-04', 'LU')?.name).toBe('Fronleichnam');
    expect(swissHolidayOn('2026-06-04', 'TI')?.name).toBe('Corpus Domini');
    expect(swissHolidayOn('2026-06-04', 'ZH')).toBeUndefined();
  });

  it('the days of one canton: Neuchâtel 1 March, Jura 23 June, Ticino 29 June, Obwalden Bruder Klaus', () => {
    expect(swissHolidayOn('2026-03-01', 'NE')?.name).toBe('Instauration de la République');
    expect(swissHolidayOn('2026-06-23', 'JU')?.name).toBe("Fête de l'Indépendance jurassienne");
    expect(swissHolidayOn('2026-06-29', 'TI')?.name).toBe('Santi Pietro e Paolo');
    expect(swissHolidayOn('2026-09-25', 'OW')?.name).toBe('Bruder Klaus');
  });

  it('Solothurn: 1 May is free from noon only', () => {
    expect(swissHolidayOn('2026-05-01', 'SO')).toEqual({ date: '2026-05-01', name: 'Tag der Arbeit', half: 'afternoon' });
    expect(swissHolidayOn('2026-05-01', 'AG')).toBeUndefined();
  });

  it('Neuchâtel: 2 January and 26 December only when the holiday before is a Sunday', () => {
    expect(swissHolidayOn('2023-01-02', 'NE')?.name).toBe('Saint-Berchtold');
    expect(swissHolidayOn('2026-01-02', 'NE')).toBeUndefined();
    expect(swissHolidayOn('2022-12-26', 'NE')?.name).toBe('Saint-Étienne');
    expect(swissHolidayOn('2025-12-26', 'NE')).toBeUndefined();
  });

  it('Appenzell and Uri: no Stephanstag that would make three rest days in a row (a Tuesday or Saturday)', () => {
    for (const canton of ['AI', 'AR', 'UR'] as const) {
      expect(swissHolidayOn('2025-12-26', canton)?.name).toBe('Stephanstag'); // Friday
      expect(swissHolidayOn('2023-12-26', canton)).toBeUndefined(); // Tuesday
      expect(swissHolidayOn('2026-12-26', canton)).toBeUndefined(); // Saturday
    }
    expect(swissHolidayOn('2023-12-26', 'ZH')?.name).toBe('Stephanstag');
  });

  it('Ticino and Valais work on Good Friday', () => {
    expect(swissHolidayOn('2026-04-03', 'TI')).toBeUndefined();
    expect(swissHolidayOn('2026-04-03', 'VS')).toBeUndefined();
    expect(swissHolidayOn('2026-04-03', 'BE')?.name).toBe('Karfreitag');
  });

  it('every canton, every year: the four nationwide days, dates sorted and real', () => {
    for (const canton of CANTONS)
      for (let year = 2024; year <= 2035; year++) {
        const holidays = swissHolidays(year, canton);
        const days = holidays.map((holiday) => holiday.date);
        expect(days).toEqual([...days].sort());
        for (const day of [`${year}-01-01`, `${year}-08-01`, `${year}-12-25`]) expect(days).toContain(day);
        const easter = easterSunday(year);
        const ascension = new Date(Date.UTC(year, easter.month - 1, easter.day + 39)).toISOString().slice(0, 10);
        expect(days).toContain(ascension);
        for (const day of days) expect(new Date(`${day}T00:00:00Z`).toISOString().slice(0, 10)).toBe(day);
      }
  });

  it('two holidays on one date are both listed, and looked up as one (2008: Auffahrt on 1 May)', () => {
    expect(named(2008, 'ZH', 'Auffahrt').map((holiday) => holiday.date)).toEqual(['2008-05-01']);
    expect(dates(2008, 'ZH').filter((day) => day === '2008-05-01')).toHaveLength(2);
    expect(swissHolidayOn('2008-05-01', 'ZH')).toEqual({ date: '2008-05-01', name: 'Tag der Arbeit / Auffahrt' });
    // A whole holiday wins over Solothurn's half one.
    expect(swissHolidayOn('2008-05-01', 'SO')).toEqual({ date: '2008-05-01', name: 'Tag der Arbeit / Auffahrt' });
  });

  it('hands out a copy: a caller changing the list changes nothing for the next', () => {
    swissHolidays(2026, 'BE').splice(0);
    expect(swissHolidays(2026, 'BE')).toHaveLength(9);
  });

  it('refuses an unknown canton', () => {
    expect(() => swissHolidays(2026, 'XX' as Canton)).toThrow(/unknown canton "XX"/);
  });
});
