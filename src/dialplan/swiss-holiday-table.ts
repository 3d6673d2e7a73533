/**
 * The public holidays of the 26 cantons, as data: each holiday, the rule that dates it, and the
 * cantons that keep it. swiss-holidays.ts computes the dates of a year from it.
 *
 * Source of the facts: the Federal Office of Justice's list "Gesetzliche Feiertage der Kantone"
 * (Bundesamt für Justiz, kantonale Feiertage), and the cantons' own Ruhetags- and Feiertags-
 * gesetze and the holiday pages of their labour inspectorates (Art. 20a ArG: besides 1 August a
 * canton may make up to eight days equal to Sundays, and may differ by region or faith).
 *
 * A canton keeps a day here when it is one of its public holidays (equal to a Sunday) or a public
 * rest day its law or the BJ list names for the whole canton (a hotline is closed on both), such
 * as Berchtoldstag, Ostermontag or Stephanstag in central Switzerland. Days only a municipality,
 * a district or a parish keeps (patron saints, Sechseläuten, Knabenschiessen) are left out: a
 * dialplan adds them as exceptions. Where the law of a canton differs by municipality or by
 * faith, the table takes the cantonal law's rule for the canton as a whole, as the comments at
 * the cantons below say.
 *
 * Where one canton's rule is not one rule for the whole canton:
 * - AG: holidays are set per district (§ 6 EG ArR). Only Neujahr, Karfreitag, Auffahrt,
 *   1 August and Weihnachten hold everywhere; the table adds the rest days the reformed
 *   districts keep and most employers follow (Berchtoldstag, Ostermontag, Pfingstmontag,
 *   Stephanstag). Fronleichnam, Mariä Himmelfahrt, Allerheiligen and Mariä Empfängnis hold only
 *   in the catholic districts (Freiamt, Fricktal, Zurzach) and are left out. 1 May is no holiday.
 * - FR: the catholic rule is the cantonal one; the reformed municipalities (Murten/Morat,
 *   Kerzers, Vully …) keep Berchtoldstag, Ostermontag, Pfingstmontag and Stephanstag instead of
 *   the four catholic feasts. The table keeps both sets, as the canton's offices close on both.
 * - SO: Fronleichnam, Mariä Himmelfahrt and Allerheiligen hold everywhere except the district of
 *   Bucheggberg; 1 May is a holiday from noon.
 * - AI: Mariä Himmelfahrt, Allerheiligen, Mariä Empfängnis and (in the inner part of the canton,
 *   not in the district of Oberegg) St. Mauritius are rest days of cantonal law, not equal to
 *   Sundays; they are kept here as the canton keeps them closed.
 * - NE: Fronleichnam holds only in Le Landeron and Le Cerneux-Péquignot, and Ostermontag,
 *   Pfingstmontag and the Lundi du Jeûne are not legal holidays (many employers give them):
 *   left out.
 * - VS: Karfreitag, Ostermontag, Pfingstmontag and Stephanstag are not holidays in Valais
 *   (employers may give them): left out.
 * - GR, BE, BL, SG, TG, VD: catholic feasts hold only in single catholic municipalities; left out.
 */

/** The 26 cantons by their official two-letter codes. */
export const CANTONS = [
  'AG',
  'AI',
  'AR',
  'BE',
  'BL',
  'BS',
  'FR',
  'GE',
  'GL',
  'GR',
  'JU',
  'LU',
  'NE',
  'NW',
  'OW',
  'SG',
  'SH',
  'SO',
  'SZ',
  'TG',
  'TI',
  'UR',
  'VD',
  'VS',
  'ZG',
  'ZH',
] as const;

/** A canton by its official two-letter code. */
export type Canton = (typeof CANTONS)[number];

/** The languages the holiday names are given in. */
export type HolidayLanguage = 'de' | 'fr' | 'it';

/** The language a canton's holidays are named in: its official one, or the majority's where it has two. */
export const CANTON_LANGUAGE: Readonly<Record<Canton, HolidayLanguage>> = {
  AG: 'de',
  AI: 'de',
  AR: 'de',
  BE: 'de',
  BL: 'de',
  BS: 'de',
  FR: 'fr',
  GE: 'fr',
  GL: 'de',
  GR: 'de',
  JU: 'fr',
  LU: 'de',
  NE: 'fr',
  NW: 'de',
  OW: 'de',
  SG: 'de',
  SH: 'de',
  SO: 'de',
  SZ: 'de',
  TG: 'de',
  TI: 'it',
  UR: 'de',
  VD: 'fr',
  VS: 'fr',
  ZG: 'de',
  ZH: 'de',
};

/** Weekday numbers as `Date#getUTCDay` counts them. */
const SUNDAY = 0;
const THURSDAY = 4;

/** How a holiday's date follows from the year. */
export type DateRule =
  /** the same calendar day every year */
  | { readonly fixed: { readonly month: number; readonly day: number } }
  /** days after Easter Sunday (negative: before) */
  | { readonly easter: number }
  /**
   * the nth given weekday of a month, plus some days; `skipHolyWeek`: a date in Holy Week (Palm
   * Sunday to Holy Saturday) moves a week later
   */
  | {
      readonly nth: number;
      readonly weekday: number;
      readonly month: number;
      readonly plus: number;
      readonly skipHolyWeek?: boolean;
    };

/** How one canton keeps a holiday, where it is not simply the whole day every year. */
export interface CantonTerms {
  /**
   * `if-monday`: only when it falls on a Monday, i.e. when the holiday before it is a Sunday
   * (NE: "lorsque le 1er janvier / Noël tombe un dimanche"). `unless-tuesday-or-saturday`: not
   * when keeping it would make three rest days in a row (AI, AR, UR: Christmas on a Monday or a
   * Friday), which is exactly a Tuesday or a Saturday 26 December.
   */
  readonly only?: 'if-monday' | 'unless-tuesday-or-saturday';
  /** only the afternoon is free */
  readonly half?: 'afternoon';
}

/** One holiday: its names, its date rule, and the cantons that keep it. */
export interface HolidayEntry {
  readonly names: Readonly<Record<HolidayLanguage, string>>;
  readonly rule: DateRule;
  /** `all`, or each canton that keeps it: `true` for the whole day every year, or its terms */
  readonly cantons: 'all' | Readonly<Partial<Record<Canton, true | CantonTerms>>>;
}

const UNLESS_THIRD_REST_DAY: CantonTerms = { only: 'unless-tuesday-or-saturday' };
/** Every canton but the ones named, each keeping the whole day. */
function allBut(...left: Canton[]): Readonly<Partial<Record<Canton, true>>> {
  return Object.fromEntries(CANTONS.filter((canton) => !left.includes(canton)).map((canton) => [canton, true]));
}
const IF_MONDAY: CantonTerms = { only: 'if-monday' };

/** Every holiday any canton keeps, by id, in calendar order. */
export const HOLIDAY_TABLE = {
  neujahr: {
    names: { de: 'Neujahr', fr: 'Nouvel An', it: 'Capodanno' },
    rule: { fixed: { month: 1, day: 1 } },
    cantons: 'all',
  },
  berchtoldstag: {
    names: { de: 'Berchtoldstag', fr: 'Saint-Berchtold', it: 'San Berchtoldo' },
    rule: { fixed: { month: 1, day: 2 } },
    // A rest day rather than a holiday equal to Sunday in most of these (ZH, GL, SH, SO, OW, NW,
    // ZG), but one the cantons and nearly all employers keep closed.
    cantons: {
      AG: true,
      BE: true,
      FR: true,
      GL: true,
      JU: true,
      LU: true,
      NE: IF_MONDAY,
      NW: true,
      OW: true,
      SH: true,
      SO: true,
      TG: true,
      VD: true,
      ZG: true,
      ZH: true,
    },
  },
  dreikoenige: {
    names: { de: 'Heilige Drei Könige', fr: 'Épiphanie', it: 'Epifania' },
    rule: { fixed: { month: 1, day: 6 } },
    cantons: { SZ: true, TI: true, UR: true },
  },
  instauration: {
    names: { de: 'Ausrufung der Republik', fr: 'Instauration de la République', it: 'Instaurazione della Repubblica' },
    rule: { fixed: { month: 3, day: 1 } },
    cantons: { NE: true },
  },
  josefstag: {
    names: { de: 'Josefstag', fr: 'Saint-Joseph', it: 'San Giuseppe' },
    rule: { fixed: { month: 3, day: 19 } },
    cantons: { NW: true, SZ: true, TI: true, UR: true, VS: true },
  },
  naefelserFahrt: {
    names: { de: 'Näfelser Fahrt', fr: 'Näfelser Fahrt', it: 'Näfelser Fahrt' },
    // The first Thursday of April; when that is Maundy Thursday the Fahrt is held a week later
    // (so 2021-04-08, 2023-04-13, 2026-04-09), as the Glarus government announces each year.
    rule: { nth: 1, weekday: THURSDAY, month: 4, plus: 0, skipHolyWeek: true },
    cantons: { GL: true },
  },
  karfreitag: {
    names: { de: 'Karfreitag', fr: 'Vendredi saint', it: 'Venerdì santo' },
    rule: { easter: -2 },
    // Not in TI and VS, the two cantons where Good Friday is a working day.
    cantons: allBut('TI', 'VS'),
  },
  ostermontag: {
    names: { de: 'Ostermontag', fr: 'Lundi de Pâques', it: 'Lunedì di Pasqua' },
    rule: { easter: 1 },
    // Not a legal holiday in NE and VS (see the top of this file).
    cantons: allBut('NE', 'VS'),
  },
  tagDerArbeit: {
    names: { de: 'Tag der Arbeit', fr: 'Fête du travail', it: 'Festa del lavoro' },
    rule: { fixed: { month: 5, day: 1 } },
    // SO: "1. Mai Nachmittag". AG's administration closes at noon too, but by custom, not law.
    cantons: { BL: true, BS: true, JU: true, NE: true, SH: true, SO: { half: 'afternoon' }, TG: true, TI: true, ZH: true },
  },
  auffahrt: {
    names: { de: 'Auffahrt', fr: 'Ascension', it: 'Ascensione' },
    rule: { easter: 39 },
    cantons: 'all',
  },
  pfingstmontag: {
    names: { de: 'Pfingstmontag', fr: 'Lundi de Pentecôte', it: 'Lunedì di Pentecoste' },
    rule: { easter: 50 },
    // Not a legal holiday in NE and VS (see the top of this file).
    cantons: allBut('NE', 'VS'),
  },
  fronleichnam: {
    names: { de: 'Fronleichnam', fr: 'Fête-Dieu', it: 'Corpus Domini' },
    rule: { easter: 60 },
    cantons: { AI: true, FR: true, JU: true, LU: true, NW: true, OW: true, SO: true, SZ: true, TI: true, UR: true, VS: true, ZG: true },
  },
  independanceJurassienne: {
    names: { de: 'Fest der Unabhängigkeit', fr: "Fête de l'Indépendance jurassienne", it: "Festa dell'indipendenza giurassiana" },
    rule: { fixed: { month: 6, day: 23 } },
    cantons: { JU: true },
  },
  peterUndPaul: {
    names: { de: 'Peter und Paul', fr: 'Saints Pierre et Paul', it: 'Santi Pietro e Paolo' },
    rule: { fixed: { month: 6, day: 29 } },
    cantons: { TI: true },
  },
  bundesfeiertag: {
    names: { de: 'Bundesfeiertag', fr: 'Fête nationale', it: 'Festa nazionale' },
    // The one holiday of federal law (Art. 110 para. 3 BV).
    rule: { fixed: { month: 8, day: 1 } },
    cantons: 'all',
  },
  mariaeHimmelfahrt: {
    names: { de: 'Mariä Himmelfahrt', fr: 'Assomption', it: 'Assunzione' },
    rule: { fixed: { month: 8, day: 15 } },
    cantons: { AI: true, FR: true, JU: true, LU: true, NW: true, OW: true, SO: true, SZ: true, TI: true, UR: true, VS: true, ZG: true },
  },
  jeuneGenevois: {
    names: { de: 'Genfer Bettag', fr: 'Jeûne genevois', it: 'Digiuno ginevrino' },
    // The Thursday after the first Sunday of September.
    rule: { nth: 1, weekday: SUNDAY, month: 9, plus: 4 },
    cantons: { GE: true },
  },
  lundiDuJeune: {
    names: { de: 'Bettagsmontag', fr: 'Lundi du Jeûne', it: 'Lunedì del Digiuno federale' },
    // The Monday after the Federal Day of Thanksgiving, the third Sunday of September.
    rule: { nth: 3, weekday: SUNDAY, month: 9, plus: 1 },
    cantons: { VD: true },
  },
  mauritius: {
    names: { de: 'Mauritiustag', fr: 'Saint-Maurice', it: 'San Maurizio' },
    rule: { fixed: { month: 9, day: 22 } },
    // AI's inner part only; the district of Oberegg works (see the top of this file).
    cantons: { AI: true },
  },
  bruderKlaus: {
    names: { de: 'Bruder Klaus', fr: 'Saint Nicolas de Flüe', it: 'San Nicolao della Flüe' },
    rule: { fixed: { month: 9, day: 25 } },
    cantons: { OW: true },
  },
  allerheiligen: {
    names: { de: 'Allerheiligen', fr: 'Toussaint', it: 'Ognissanti' },
    rule: { fixed: { month: 11, day: 1 } },
    cantons: { AI: true, FR: true, GL: true, JU: true, LU: true, NW: true, OW: true, SG: true, SO: true, SZ: true, TI: true, UR: true, VS: true, ZG: true },
  },
  mariaeEmpfaengnis: {
    names: { de: 'Mariä Empfängnis', fr: 'Immaculée Conception', it: 'Immacolata Concezione' },
    rule: { fixed: { month: 12, day: 8 } },
    cantons: { AI: true, FR: true, LU: true, NW: true, OW: true, SZ: true, TI: true, UR: true, VS: true, ZG: true },
  },
  weihnachten: {
    names: { de: 'Weihnachten', fr: 'Noël', it: 'Natale' },
    rule: { fixed: { month: 12, day: 25 } },
    cantons: 'all',
  },
  stephanstag: {
    names: { de: 'Stephanstag', fr: 'Saint-Étienne', it: 'Santo Stefano' },
    rule: { fixed: { month: 12, day: 26 } },
    // Not in GE, JU, VD and VS.
    cantons: {
      ...allBut('GE', 'JU', 'VD', 'VS'),
      AI: UNLESS_THIRD_REST_DAY,
      AR: UNLESS_THIRD_REST_DAY,
      NE: IF_MONDAY,
      UR: UNLESS_THIRD_REST_DAY,
    },
  },
  restauration: {
    names: { de: 'Wiederherstellung der Republik', fr: 'Restauration de la République', it: 'Restaurazione della Repubblica' },
    // 31 December (the end of French rule in 1813); the Escalade on 12 December is no holiday.
    rule: { fixed: { month: 12, day: 31 } },
    cantons: { GE: true },
  },
} as const satisfies Readonly<Record<string, HolidayEntry>>;
