import { wordsFor, type LanguageWords } from './language-words.js';

/** The `interpret-as` values of `<say-as>` (spec 2.8). */
export type SayAsKind = 'digits' | 'telephone' | 'characters' | 'ordinal' | 'date' | 'time' | 'currency' | 'number';

/** A text that `<say-as>` cannot read as the kind it names. */
export class SayAsError extends Error {
  override name = 'SayAsError';
}

const SWISS_PHONE = /(?<![\d+])(?:\+41|0041|0)\s?\(?0?\)?\s?(\d{2})[\s/.-]?(\d{3})[\s.-]?(\d{2})[\s.-]?(\d{2})(?!\d)/g;

/**
 * A Swiss phone number in 3-3-2-2 groups, groups separated by commas so engines pause:
 * "044 668 18 00" → "null vier vier, sechs sechs acht, eins acht, null null";
 * "+41 44 …" starts with "plus vier eins, vier vier, …".
 */
function phone(words: LanguageWords, international: boolean, area: string, a: string, b: string, c: string): string {
  const groups = international ? [`${words.plus} ${words.digits('41')}`, words.digits(area)] : [words.digits(`0${area}`)];
  return [...groups, words.digits(a), words.digits(b), words.digits(c)].join(', ');
}

function money(words: LanguageWords, currency: string, amount: string): string {
  const unit = /^(EUR|€)$/i.test(currency) ? 'EUR' : 'CHF';
  const [major, minor = ''] = amount.replace(/'/g, '').split(/[.,]/);
  const minorValue = /^\d{2}$/.test(minor) ? Number(minor) : 0;
  return words.money(unit, Number(major), minorValue);
}

/** Writes out numbers, dates, times, money, percentages, phone numbers and abbreviations. */
export function normaliseText(text: string, language: string): string {
  const words = wordsFor(language);
  const base = language.slice(0, 2).toLowerCase();
  let out = text;
  // Phone numbers first: their digits must not be read as one big number.
  out = out.replace(SWISS_PHONE, (match, area: string, a: string, b: string, c: string) => phone(words, /^(\+41|0041)/.test(match), area, a, b, c));
  // Money: "CHF 12.50", "Fr. 12.–", "12.50 Fr.", "EUR 10", "€ 10", "50 Rp.".
  out = out.replace(/(?<![\w.])(\d+)\s?(?:Rp\.|Rappen)(?!\w)/g, (_m, minor: string) => words.money('CHF', 0, Number(minor)));
  out = out.replace(
    /(?<![\w.])(CHF|SFr\.|Fr\.|EUR|€)\s?(\d{1,3}(?:'\d{3})+|\d+)(?:[.,](\d{2}|[–-]{1,2}))?(?!\d)/g,
    (_m, currency: string, major: string, minor?: string) => money(words, currency, `${major}.${minor && /\d/.test(minor) ? minor : ''}`),
  );
  out = out.replace(
    /(?<![\w.,'])(\d{1,3}(?:'\d{3})+|\d+)(?:[.,](\d{2}|[–-]{1,2}))?\s?(CHF|Fr\.|Franken|EUR|Euro|€)(?!\w)/g,
    (_m, major: string, minor: string | undefined, currency: string) =>
      money(words, /^(EUR|Euro|€)$/.test(currency) ? 'EUR' : 'CHF', `${major}.${minor && /\d/.test(minor) ? minor : ''}`),
  );
  // Dates: 21.11.2026, 21.11.26, and "21. November (2026)" in German.
  out = out.replace(/(?<![\d.])(\d{1,2})\.(\d{1,2})\.(\d{4}|\d{2})(?![\d])/g, (match, d: string, m: string, y: string, offset: number, whole: string) => {
    const day = Number(d);
    const month = Number(m);
    if (day < 1 || day > 31 || month < 1 || month > 12) return match;
    const date = words.date(day, month, y.length === 2 ? 2000 + Number(y) : Number(y));
    return base === 'de' ? germanDateCase(date, whole.slice(0, offset)) : date;
  });
  const monthNames = words.months.join('|');
  if (base === 'de') {
    out = out.replace(
      new RegExp(`(?<![\\d.])(\\d{1,2})\\.\\s?(${monthNames})(?:\\s(\\d{4}))?`, 'g'),
      (_m, d: string, month: string, y: string | undefined, offset: number, whole: string) =>
        germanDateCase(words.date(Number(d), words.months.indexOf(month) + 1, y ? Number(y) : null), whole.slice(0, offset)),
    );
  } else if (base === 'en') {
    out = out.replace(new RegExp(`(${monthNames})\\s(\\d{1,2})(?:st|nd|rd|th)?(?:,\\s?(\\d{4}))?`, 'g'), (_m, month: string, d: string, y?: string) =>
      words.date(Number(d), words.months.indexOf(month) + 1, y ? Number(y) : null),
    );
  } else {
    out = out.replace(new RegExp(`(?<![\\d.])(1er|\\d{1,2})\\s(${monthNames})(?:\\s(\\d{4}))?`, 'g'), (_m, d: string, month: string, y?: string) =>
      words.date(Number(d.replace('er', '')), words.months.indexOf(month) + 1, y ? Number(y) : null),
    );
  }
  // Times: 14:30, 14.30 Uhr, 8 Uhr, 14h30 / 14 h 30.
  out = out.replace(/(?<![\d.:])([01]?\d|2[0-3])[:.]([0-5]\d)(?:\s?Uhr)?(?![\d.:]\d)/g, (match, h: string, m: string) =>
    /\.\d\d$/.test(match) && !/Uhr$/.test(match) && base === 'de' ? match : words.time(Number(h), Number(m)),
  );
  out = out.replace(/(?<![\d.:])([01]?\d|2[0-3])\s?h\s?([0-5]\d)?(?![\w])/g, (_m, h: string, m?: string) => words.time(Number(h), m ? Number(m) : 0));
  if (base === 'de') out = out.replace(/(?<![\d.:])([01]?\d|2[0-3])\sUhr(?!\w)/g, (_m, h: string) => words.time(Number(h), 0));
  // Percentages.
  out = out.replace(/(\d+(?:[.,]\d+)?)\s?%/g, (_m, n: string) => `${n} ${words.percent}`);
  // Ordinals: German "am 3." after an article or preposition; 1er/2e, 1°, 1st/2nd/3rd/4th.
  if (base === 'de') {
    out = out.replace(
      /\b(?:(in|an|auf|aus|bei|mit|nach|von|zu|vor|hinter|über|unter|neben|seit|ab|bis)\s)?(der|die|das|den|dem|des|am|im|zum|zur|vom|beim)\s(\d{1,3})\.(?=\s)/gi,
      (_m, preposition: string | undefined, article: string, n: string) => {
        // Nominative after der/die/das alone ("der dritte"), dative or accusative otherwise ("in der dritten").
        const ending = !preposition && /^(der|die|das)$/i.test(article) ? 'e' : 'en';
        return `${preposition ? `${preposition} ` : ''}${article} ${wordsForOrdinalDe(Number(n), ending)}`;
      },
    );
  } else if (base === 'fr') {
    out = out.replace(/\b(\d{1,3})(?:er|re|e|ème)\b/g, (_m, n: string) => words.ordinal(Number(n)));
  } else if (base === 'it') {
    out = out.replace(/\b(\d{1,3})[°ºª]/g, (_m, n: string) => words.ordinal(Number(n)));
  } else {
    out = out.replace(/\b(\d{1,3})(?:st|nd|rd|th)\b/g, (_m, n: string) => words.ordinal(Number(n)));
  }
  // Years before 2000 are read in hundreds after the words that announce a year.
  const yearWords = base === 'de' ? 'Jahr|Jahre|im|seit|anno|von|bis' : base === 'en' ? 'in|since|year|from|until' : '';
  if (yearWords) {
    out = out.replace(new RegExp(`\\b(${yearWords})\\s(1[1-9]\\d\\d)(?!\\d)`, 'gi'), (_m, lead: string, year: string) => `${lead} ${words.year(Number(year))}`);
  }
  // German reads a bare 1100–1999 as a year too (Er wurde 1998 geboren, 1850 kam er, im März
  // 1850), unless a noun or a unit counts with it (1500 Franken, 1200 km, 8001 Zürich), it
  // starts a range of amounts (1500 bis 2000 Franken, whose end the money rule above has written out) or it is a number, a code or a PIN.
  if (base === 'de') {
    out = out.replace(
      /(?<![\d'’.,])(?<!(?:[Nn]ummer|Nr\.|[Cc]ode|PIN|Postfach|Zimmer|[Kk]onto|Linie|Gleis|Raum|Taste)\s)(1[1-9]\d\d)(?![\d'’]|[.,]\d)(?!\s*(?:%|‰|°|[-–]\s*(?:[\d']+|\p{Ll}+)\s+\p{Lu}))(?!\s+(?:\p{Lu}|(?:km|m|cm|mm|kg|g|t|l|ml|dl|ha|h|min|s|mal|x|pro|je)(?![\p{L}])))(?!\s+(?:bis|und|oder)\s+(?:[\d']+|\p{Ll}+)\s+\p{Lu})/gu,
      (_m, year: string) => words.year(Number(year)),
    );
  }
  // Decimals, thousands with apostrophes (1'000), then plain whole numbers.
  out = out.replace(/(?<![\d'])(\d+)[.,](\d+)(?![\d])/g, (_m, whole: string, fraction: string) => words.decimal(Number(whole), fraction));
  out = out.replace(/(?<!\d)(\d{1,3}(?:'\d{3})+)(?!\d)/g, (m) => words.cardinal(Number(m.replace(/'/g, ''))));
  out = out.replace(/(?<!\d)\d+(?!\d)/g, (m) => (m.length > 12 ? words.digits(m) : words.cardinal(Number(m))));
  for (const [pattern, expansion] of abbreviationPatterns(base, words)) out = out.replace(pattern, expansion);
  return out;
}

const abbreviationCache = new Map<string, Array<[RegExp, string]>>();

/** A language's abbreviations as patterns, longest first so "z. B." wins over "B."; built once. */
function abbreviationPatterns(base: string, words: LanguageWords): Array<[RegExp, string]> {
  let patterns = abbreviationCache.get(base);
  if (!patterns) {
    patterns = Object.entries(words.abbreviations)
      .sort((a, b) => b[0].length - a[0].length)
      .map(([abbreviation, expansion]) => [new RegExp(`(?<![\\p{L}])${escapeRegExp(abbreviation)}(?![\\p{L}])`, 'gu'), expansion]);
    abbreviationCache.set(base, patterns);
  }
  return patterns;
}

/** German dates take the dative after am/vom/zum/bis/seit ("am einundzwanzigsten November"). */
function germanDateCase(date: string, before: string): string {
  if (/\b(am|vom|zum|bis zum|ab dem|seit dem|bis am)\s*$/i.test(before)) return date.replace(/^(\S+)er\b/, '$1en');
  if (/\b(der|den)\s*$/i.test(before)) return date.replace(/^(\S+)er\b/, /den\s*$/i.test(before) ? '$1en' : '$1e');
  return date;
}

function wordsForOrdinalDe(n: number, ending: 'e' | 'en'): string {
  return wordsFor('de').ordinal(n).replace(/e$/, ending);
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/**
 * Rewrites the content of `<say-as interpret-as=kind>` into words (spec 2.8).
 * @throws SayAsError when the content does not fit the kind.
 */
export function sayAs(kind: SayAsKind, content: string, language: string): string {
  const words = wordsFor(language);
  const text = content.trim();
  const digitsOnly = text.replace(/[\s'./-]/g, '');
  switch (kind) {
    case 'digits':
      if (!/^\+?\d+$/.test(digitsOnly)) throw new SayAsError(`"${text}" holds other characters than digits`);
      return words.digits(digitsOnly);
    case 'telephone': {
      const phoneDigits = text.replace(/[\s()/.-]/g, '');
      const match = /^(\+41|0041|0)(\d{2})(\d{3})(\d{2})(\d{2})$/.exec(phoneDigits);
      if (match) return phone(words, match[1] !== '0', match[2]!, match[3]!, match[4]!, match[5]!);
      if (!/^\+?\d{3,15}$/.test(phoneDigits)) throw new SayAsError(`"${text}" is not a telephone number`);
      // Other numbers: groups of three, the last group of two to four.
      const bare = phoneDigits.replace('+', '');
      const groups = bare.match(/\d{1,3}/g)!;
      return `${phoneDigits.startsWith('+') ? `${words.plus} ` : ''}${groups.map((g) => words.digits(g)).join(', ')}`;
    }
    case 'characters':
      return [...text].filter((c) => c.trim() !== '').join(' ');
    case 'ordinal': {
      const n = Number(text.replace(/[.°ºª]|er|e|st|nd|rd|th/g, ''));
      if (!Number.isInteger(n) || n <= 0) throw new SayAsError(`"${text}" is not an ordinal number`);
      return words.ordinal(n);
    }
    case 'number': {
      const clean = text.replace(/'/g, '');
      if (/^-?\d+$/.test(clean)) return words.cardinal(Number(clean));
      const decimal = /^(-?\d+)[.,](\d+)$/.exec(clean);
      if (decimal) return words.decimal(Number(decimal[1]), decimal[2]!);
      throw new SayAsError(`"${text}" is not a number`);
    }
    case 'date': {
      const match = /^(\d{1,2})[./-](\d{1,2})[./-](\d{4}|\d{2})$/.exec(text) ?? /^(\d{1,2})[./-](\d{1,2})\.?$/.exec(text);
      const iso = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
      if (iso) return words.date(Number(iso[3]), Number(iso[2]), Number(iso[1]));
      if (!match) throw new SayAsError(`"${text}" is not a date; write it as 21.11.2026 or 2026-11-21`);
      const day = Number(match[1]);
      const month = Number(match[2]);
      if (day < 1 || day > 31 || month < 1 || month > 12) throw new SayAsError(`"${text}" is not a valid date`);
      const year = match[3] === undefined ? null : match[3].length === 2 ? 2000 + Number(match[3]) : Number(match[3]);
      return words.date(day, month, year);
    }
    case 'time': {
      const match = /^([01]?\d|2[0-3])[:.h]([0-5]\d)$/.exec(text.replace(/\s/g, ''));
      if (!match) throw new SayAsError(`"${text}" is not a time; write it as 14:30`);
      return words.time(Number(match[1]), Number(match[2]));
    }
    case 'currency': {
      const match = /^(CHF|SFr\.|Fr\.|EUR|€)?\s?(\d{1,3}(?:'\d{3})+|\d+)(?:[.,](\d{2}|[–-]{1,2}))?\s?(CHF|Fr\.|EUR|€)?$/.exec(text);
      if (!match || (!match[1] && !match[4])) throw new SayAsError(`"${text}" is not an amount with a currency; write it as CHF 12.50 or 10 EUR`);
      return money(words, match[1] ?? match[4]!, `${match[2]}.${match[3] && /\d/.test(match[3]) ? match[3] : ''}`);
    }
  }
}
