import { describe, expect, it } from 'vitest';
import { cardinalDe, ordinalDe, yearDe } from '../../engine/text/numbers-de.js';
import { cardinalEn, ordinalEn, yearEn } from '../../engine/text/numbers-en.js';
import { cardinalFr, ordinalFr } from '../../engine/text/numbers-fr.js';
import { cardinalIt, ordinalIt } from '../../engine/text/numbers-it.js';
import { normaliseText, sayAs } from '../../engine/text/normaliser.js';

describe('number words', () => {
  it('German', () => {
    expect([0, 1, 16, 21, 30, 101, 999, 1000, 1001, 2026, 21_000, 1_000_000, 3_500_000].map(cardinalDe)).toEqual([
      'null',
      'eins',
      'sechzehn',
      'einundzwanzig',
      'dreissig',
      'einhunderteins',
      'neunhundertneunundneunzig',
      'eintausend',
      'eintausendeins',
      'zweitausendsechsundzwanzig',
      'einundzwanzigtausend',
      'eine Million',
      'drei Millionen fünfhunderttausend',
    ]);
    expect([1, 3, 7, 8, 19, 20, 21, 100, 103].map((n) => ordinalDe(n))).toEqual([
      'erste',
      'dritte',
      'siebte',
      'achte',
      'neunzehnte',
      'zwanzigste',
      'einundzwanzigste',
      'einhundertste',
      'einhundertdritte',
    ]);
    expect([1291, 1999, 2026].map(yearDe)).toEqual(['zwölfhunderteinundneunzig', 'neunzehnhundertneunundneunzig', 'zweitausendsechsundzwanzig']);
  });

  it('Swiss French', () => {
    expect([21, 71, 80, 91, 99, 100, 200, 201, 1000, 2026].map(cardinalFr)).toEqual([
      'vingt et un',
      'septante et un',
      'huitante',
      'nonante et un',
      'nonante-neuf',
      'cent',
      'deux cents',
      'deux cent un',
      'mille',
      'deux mille vingt-six',
    ]);
    expect([1, 2, 5, 9, 21].map(ordinalFr)).toEqual(['premier', 'deuxième', 'cinquième', 'neuvième', 'vingt et unième']);
  });

  it('Italian', () => {
    expect([1, 21, 23, 28, 100, 180, 1000, 1381, 2026].map(cardinalIt)).toEqual([
      'uno',
      'ventuno',
      'ventitré',
      'ventotto',
      'cento',
      'centottanta',
      'mille',
      'milletrecentottantuno',
      'duemilaventisei',
    ]);
    expect([1, 3, 11, 23].map(ordinalIt)).toEqual(['primo', 'terzo', 'undicesimo', 'ventitreesimo']);
  });

  it('English', () => {
    expect([21, 105, 1000, 2026].map(cardinalEn)).toEqual(['twenty-one', 'one hundred and five', 'one thousand', 'two thousand and twenty-six']);
    expect([1, 2, 3, 12, 20, 21].map(ordinalEn)).toEqual(['first', 'second', 'third', 'twelfth', 'twentieth', 'twenty-first']);
    expect([1999, 2005, 2026, 1900].map(yearEn)).toEqual(['nineteen ninety-nine', 'two thousand and five', 'twenty twenty-six', 'nineteen hundred']);
  });
});

describe('plain-text normalisation', () => {
  const cases: Array<[string, string, string]> = [
    ['de-CH', 'Rufen Sie 044 668 18 00 an.', 'Rufen Sie null vier vier, sechs sechs acht, eins acht, null null an.'],
    ['de-CH', 'Hotline: +41 79 123 45 67', 'Hotline: plus vier eins, sieben neun, eins zwei drei, vier fünf, sechs sieben'],
    ['de-CH', 'Nummer 0791234567.', 'Nummer null sieben neun, eins zwei drei, vier fünf, sechs sieben.'],
    ['de-CH', 'Das kostet CHF 12.50.', 'Das kostet zwölf Franken fünfzig.'],
    ['de-CH', "Nur 9.– Fr. statt Fr. 1'200.–", 'Nur neun Franken statt eintausendzweihundert Franken'],
    ['de-CH', 'Zuschlag 50 Rp. oder 10 €', 'Zuschlag fünfzig Rappen oder zehn Euro'],
    ['de-CH', 'Am 21.11.2026 um 14:30 Uhr', 'Am einundzwanzigsten November zweitausendsechsundzwanzig um vierzehn Uhr dreissig'],
    ['de-CH', 'ab 8 Uhr, am 1. August', 'ab acht Uhr, am ersten August'],
    ['de-CH', 'Zins 1,5 % auf 3 Jahre', 'Zins eins Komma fünf Prozent auf drei Jahre'],
    ['de-CH', 'In der 3. Etage, z. B. Nr. 21', 'In der dritten Etage, zum Beispiel Nummer einundzwanzig'],
    ['de-CH', 'Gegründet im Jahr 1291.', 'Gegründet im Jahr zwölfhunderteinundneunzig.'],
    ['de-CH', '1998 kam er, 1850 war es anders.', 'neunzehnhundertachtundneunzig kam er, achtzehnhundertfünfzig war es anders.'],
    ['de-CH', 'Im März 1850 und von 1914–1918.', 'Im März achtzehnhundertfünfzig und von neunzehnhundertvierzehn–neunzehnhundertachtzehn.'],
    [
      'de-CH',
      '1500 Franken, 1200 km, 8001 Zürich, Nr. 1234, 1500 bis 2000 Leute',
      'eintausendfünfhundert Franken, eintausendzweihundert km, achttausendeins Zürich, Nummer eintausendzweihundertvierunddreissig, eintausendfünfhundert bis zweitausend Leute',
    ],
    [
      'fr-CH',
      'Le 1er janvier à 14h30: CHF 72.50, 99 %.',
      'Le premier janvier à quatorze heures trente: septante-deux francs cinquante, nonante-neuf pour cent.',
    ],
    ['fr-CH', 'Appelez le 022 345 67 89.', 'Appelez le zéro deux deux, trois quatre cinq, six sept, huit neuf.'],
    ['it-CH', 'Il 21 novembre alle 18:45, 3° piano.', 'Il ventuno novembre alle diciotto e quarantacinque, terzo piano.'],
    ['en-GB', 'On November 21st, 2026 at 9:05, e.g. 78%.', 'On November twenty-first, twenty twenty-six at nine oh five, for example seventy-eight percent.'],
    ['en', 'It costs CHF 21.30 for the 2nd floor.', 'It costs twenty-one Swiss francs thirty for the second floor.'],
  ];
  for (const [language, input, output] of cases) {
    it(`${language}: ${input}`, () => expect(normaliseText(input, language)).toBe(output));
  }

  it('leaves text without numbers or abbreviations alone', () => {
    expect(normaliseText('Grüezi mitenand, wie chan ich hälfe?', 'de-CH')).toBe('Grüezi mitenand, wie chan ich hälfe?');
  });
});

describe('say-as', () => {
  it('reads each kind in each language', () => {
    expect(sayAs('telephone', '0446681800', 'de-CH')).toBe('null vier vier, sechs sechs acht, eins acht, null null');
    expect(sayAs('telephone', '+41 44 668 18 00', 'fr-CH')).toBe('plus quatre un, quatre quatre, six six huit, un huit, zéro zéro');
    expect(sayAs('digits', '4711', 'it')).toBe('quattro sette uno uno');
    expect(sayAs('characters', 'AB1', 'de')).toBe('A B 1');
    expect(sayAs('ordinal', '21.', 'de-CH')).toBe('einundzwanzigste');
    expect(sayAs('ordinal', '3', 'en')).toBe('third');
    expect(sayAs('date', '21.11.2026', 'de-CH')).toBe('einundzwanzigster November zweitausendsechsundzwanzig');
    expect(sayAs('date', '2026-11-01', 'fr-CH')).toBe('premier novembre deux mille vingt-six');
    expect(sayAs('time', '07:05', 'en')).toBe('seven oh five');
    expect(sayAs('currency', "CHF 1'234.05", 'de-CH')).toBe('eintausendzweihundertvierunddreissig Franken fünf');
    expect(sayAs('currency', '10 EUR', 'it')).toBe('dieci euro');
    expect(sayAs('number', '3,75', 'de')).toBe('drei Komma fünfundsiebzig');
  });

  it('refuses content that does not fit the kind', () => {
    expect(() => sayAs('date', 'morgen', 'de')).toThrow(/not a date/);
    expect(() => sayAs('time', '25:00', 'de')).toThrow(/not a time/);
    expect(() => sayAs('digits', '12a', 'de')).toThrow(/other characters than digits/);
    expect(() => sayAs('currency', '12.50', 'de')).toThrow(/with a currency/);
    expect(() => sayAs('number', 'viele', 'de')).toThrow(/not a number/);
  });
});
