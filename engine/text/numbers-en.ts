/** English number words. */
const ONES = [
  'zero',
  'one',
  'two',
  'three',
  'four',
  'five',
  'six',
  'seven',
  'eight',
  'nine',
  'ten',
  'eleven',
  'twelve',
  'thirteen',
  'fourteen',
  'fifteen',
  'sixteen',
  'seventeen',
  'eighteen',
  'nineteen',
];
const TENS = ['', '', 'twenty', 'thirty', 'forty', 'fifty', 'sixty', 'seventy', 'eighty', 'ninety'];

function below100(n: number): string {
  if (n < 20) return ONES[n]!;
  const ones = n % 10;
  return ones === 0 ? TENS[Math.floor(n / 10)]! : `${TENS[Math.floor(n / 10)]}-${ONES[ones]}`;
}

function below1000(n: number): string {
  const hundreds = Math.floor(n / 100);
  const rest = n % 100;
  const head = hundreds ? `${ONES[hundreds]} hundred` : '';
  if (!rest) return head;
  return head ? `${head} and ${below100(rest)}` : below100(rest);
}

/** A whole number in English words (British "and": "one hundred and five"). */
export function cardinalEn(n: number): string {
  if (n < 0) return `minus ${cardinalEn(-n)}`;
  if (n === 0) return 'zero';
  if (n >= 1e12) return digitsEn(String(n));
  const parts: string[] = [];
  const scales: Array<[number, string]> = [
    [1e9, 'billion'],
    [1e6, 'million'],
    [1e3, 'thousand'],
  ];
  let rest = n;
  for (const [size, name] of scales) {
    const count = Math.floor(rest / size);
    if (count) parts.push(`${below1000(count)} ${name}`);
    rest %= size;
  }
  if (rest) parts.push(parts.length > 0 && rest < 100 ? `and ${below100(rest)}` : below1000(rest));
  return parts.join(' ');
}

const IRREGULAR: Record<string, string> = { one: 'first', two: 'second', three: 'third', five: 'fifth', eight: 'eighth', nine: 'ninth', twelve: 'twelfth' };

/** An ordinal ("first", "twenty-third", "one hundredth"). */
export function ordinalEn(n: number): string {
  const word = cardinalEn(n);
  const match = /([a-z]+)$/.exec(word)!;
  const last = match[1]!;
  const head = word.slice(0, word.length - last.length);
  if (IRREGULAR[last]) return head + IRREGULAR[last];
  if (last.endsWith('y')) return `${head}${last.slice(0, -1)}ieth`;
  return `${head}${last}th`;
}

/** A year as spoken ("nineteen ninety-nine", "twenty twenty-six", "two thousand and five"). */
export function yearEn(n: number): string {
  if (n >= 2000 && n < 2010) return cardinalEn(n);
  if (n >= 1100 && n < 10000 && n % 100 !== 0) return `${below100(Math.floor(n / 100))} ${n % 100 < 10 ? `oh ${ONES[n % 100]}` : below100(n % 100)}`;
  if (n >= 1100 && n < 10000) return `${below100(n / 100)} hundred`;
  return cardinalEn(n);
}

const DIGITS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine'];

/** Digits one by one. */
export function digitsEn(digits: string): string {
  return [...digits]
    .filter((c) => c >= '0' && c <= '9')
    .map((c) => DIGITS[Number(c)])
    .join(' ');
}

export const MONTHS_EN = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
