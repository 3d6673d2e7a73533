import { cardinalDe, digitsDe, MONTHS_DE, ordinalDe, yearDe } from './numbers-de.js';
import { cardinalEn, digitsEn, MONTHS_EN, ordinalEn, yearEn } from './numbers-en.js';
import { cardinalFr, digitsFr, MONTHS_FR, ordinalFr } from './numbers-fr.js';
import { cardinalIt, digitsIt, MONTHS_IT, ordinalIt } from './numbers-it.js';

/** How one language says numbers, dates, times, money and its common abbreviations. */
export interface LanguageWords {
  readonly cardinal: (n: number) => string;
  /** An ordinal standing alone ("erste", "premier", "primo", "first"). */
  readonly ordinal: (n: number) => string;
  readonly year: (n: number) => string;
  readonly digits: (digits: string) => string;
  readonly months: readonly string[];
  /** A date: day, month (1–12), optional year. */
  readonly date: (day: number, month: number, year: number | null) => string;
  /** A time of day on the 24-hour clock. */
  readonly time: (hours: number, minutes: number) => string;
  /** A decimal number: whole part, then the digits after the separator as written. */
  readonly decimal: (whole: number, fraction: string) => string;
  readonly percent: string;
  readonly plus: string;
  /** Money: currency (`CHF`, `EUR`) with major and minor units. */
  readonly money: (currency: 'CHF' | 'EUR', major: number, minor: number) => string;
  /** Abbreviations to spell out, matched case-sensitively as whole words. */
  readonly abbreviations: Readonly<Record<string, string>>;
}

function fractionDigits(fraction: string, digits: (d: string) => string, cardinal: (n: number) => string): string {
  // Two-digit fractions read as a number ("Komma fünfundzwanzig"); longer ones digit by digit.
  return fraction.length <= 2 && !fraction.startsWith('0') ? cardinal(Number(fraction)) : digits(fraction);
}

const de: LanguageWords = {
  cardinal: cardinalDe,
  ordinal: (n) => ordinalDe(n),
  year: yearDe,
  digits: digitsDe,
  months: MONTHS_DE,
  date: (day, month, year) => `${ordinalDe(day, 'er')} ${MONTHS_DE[month - 1]}${year === null ? '' : ` ${yearDe(year)}`}`,
  time: (h, m) => (m === 0 ? `${cardinalDe(h)} Uhr` : `${cardinalDe(h)} Uhr ${cardinalDe(m)}`),
  decimal: (whole, fraction) => `${cardinalDe(whole)} Komma ${fractionDigits(fraction, digitsDe, cardinalDe)}`,
  percent: 'Prozent',
  plus: 'plus',
  money: (currency, major, minor) => {
    if (currency === 'EUR') return minor ? `${cardinalDe(major)} Euro ${cardinalDe(minor)}` : `${cardinalDe(major)} Euro`;
    if (major === 0) return `${cardinalDe(minor)} Rappen`;
    return minor ? `${cardinalDe(major)} Franken ${cardinalDe(minor)}` : `${cardinalDe(major)} Franken`;
  },
  abbreviations: {
    'z.B.': 'zum Beispiel',
    'z. B.': 'zum Beispiel',
    'd.h.': 'das heisst',
    'd. h.': 'das heisst',
    'bzw.': 'beziehungsweise',
    'usw.': 'und so weiter',
    'ca.': 'circa',
    'inkl.': 'inklusive',
    'exkl.': 'exklusive',
    'Nr.': 'Nummer',
    'Str.': 'Strasse',
    'Tel.': 'Telefon',
    'evtl.': 'eventuell',
    'ggf.': 'gegebenenfalls',
    'Mo.': 'Montag',
    'Di.': 'Dienstag',
    'Mi.': 'Mittwoch',
    'Do.': 'Donnerstag',
    'Fr.': 'Freitag',
    'Sa.': 'Samstag',
    'So.': 'Sonntag',
    'min.': 'Minuten',
    'Min.': 'Minuten',
    'Std.': 'Stunden',
  },
};

const fr: LanguageWords = {
  cardinal: cardinalFr,
  ordinal: ordinalFr,
  year: cardinalFr,
  digits: digitsFr,
  months: MONTHS_FR,
  date: (day, month, year) => `${day === 1 ? 'premier' : cardinalFr(day)} ${MONTHS_FR[month - 1]}${year === null ? '' : ` ${cardinalFr(year)}`}`,
  time: (h, m) => `${cardinalFr(h)} heure${h > 1 ? 's' : ''}${m ? ` ${cardinalFr(m)}` : ''}`,
  decimal: (whole, fraction) => `${cardinalFr(whole)} virgule ${fractionDigits(fraction, digitsFr, cardinalFr)}`,
  percent: 'pour cent',
  plus: 'plus',
  money: (currency, major, minor) => {
    const unit = currency === 'EUR' ? 'euro' : 'franc';
    if (major === 0 && currency === 'CHF') return `${cardinalFr(minor)} centime${minor > 1 ? 's' : ''}`;
    const head = `${cardinalFr(major)} ${unit}${major > 1 ? 's' : ''}`;
    return minor ? `${head} ${cardinalFr(minor)}` : head;
  },
  abbreviations: {
    'p. ex.': 'par exemple',
    'env.': 'environ',
    'M.': 'Monsieur',
    Mme: 'Madame',
    Mlle: 'Mademoiselle',
    'tél.': 'téléphone',
    'n°': 'numéro',
    'etc.': 'et cetera',
    'min.': 'minutes',
  },
};

const it: LanguageWords = {
  cardinal: cardinalIt,
  ordinal: ordinalIt,
  year: cardinalIt,
  digits: digitsIt,
  months: MONTHS_IT,
  date: (day, month, year) => `${day === 1 ? 'primo' : cardinalIt(day)} ${MONTHS_IT[month - 1]}${year === null ? '' : ` ${cardinalIt(year)}`}`,
  time: (h, m) => (m ? `${cardinalIt(h)} e ${cardinalIt(m)}` : `${cardinalIt(h)}`),
  decimal: (whole, fraction) => `${cardinalIt(whole)} virgola ${fractionDigits(fraction, digitsIt, cardinalIt)}`,
  percent: 'per cento',
  plus: 'più',
  money: (currency, major, minor) => {
    const unit = currency === 'EUR' ? 'euro' : major === 1 ? 'franco' : 'franchi';
    if (major === 0 && currency === 'CHF') return `${cardinalIt(minor)} centesimi`;
    const head = `${major === 1 ? 'un' : cardinalIt(major)} ${unit}`;
    return minor ? `${head} e ${cardinalIt(minor)}` : head;
  },
  abbreviations: { 'ecc.': 'eccetera', 'Sig.': 'Signor', 'Sig.ra': 'Signora', 'p.es.': 'per esempio', 'tel.': 'telefono', 'n.': 'numero', 'min.': 'minuti' },
};

const en: LanguageWords = {
  cardinal: cardinalEn,
  ordinal: ordinalEn,
  year: yearEn,
  digits: digitsEn,
  months: MONTHS_EN,
  date: (day, month, year) => `${MONTHS_EN[month - 1]} ${ordinalEn(day)}${year === null ? '' : `, ${yearEn(year)}`}`,
  time: (h, m) => (m === 0 ? `${cardinalEn(h)} o'clock` : `${cardinalEn(h)} ${m < 10 ? `oh ${cardinalEn(m)}` : cardinalEn(m)}`),
  decimal: (whole, fraction) => `${cardinalEn(whole)} point ${digitsEn(fraction)}`,
  percent: 'percent',
  plus: 'plus',
  money: (currency, major, minor) => {
    const unit = currency === 'EUR' ? (major === 1 ? 'euro' : 'euros') : major === 1 ? 'Swiss franc' : 'Swiss francs';
    if (major === 0 && currency === 'CHF') return `${cardinalEn(minor)} centimes`;
    const head = `${cardinalEn(major)} ${unit}`;
    return minor ? `${head} ${cardinalEn(minor)}` : head;
  },
  abbreviations: {
    'e.g.': 'for example',
    'i.e.': 'that is',
    'Mr.': 'Mister',
    'Mrs.': 'Missus',
    'Dr.': 'Doctor',
    'No.': 'number',
    'approx.': 'approximately',
    'etc.': 'et cetera',
    'min.': 'minutes',
    'St.': 'Street',
  },
};

const BY_LANGUAGE: Readonly<Record<string, LanguageWords>> = { de, fr, it, en };

/** The words of a language code's base language (`de-CH` → German); English when unknown. */
export function wordsFor(language: string): LanguageWords {
  return BY_LANGUAGE[language.slice(0, 2).toLowerCase()] ?? en;
}
