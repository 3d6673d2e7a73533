/**
 * A strict reader of the Prometheus text exposition format (0.0.4), as a scraper reads it:
 * every family's TYPE, every sample's name, labels and value. A line it cannot read fails the
 * test, so a malformed exposition cannot pass.
 */

/** One sample line. */
export interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** A parsed exposition. */
export interface Exposition {
  /** Family name → type (`counter`, `gauge`, `histogram` …). */
  readonly types: ReadonlyMap<string, string>;
  readonly samples: readonly Sample[];
  /** The value of the sample with this name and exactly these labels, or undefined. */
  value(name: string, labels?: Readonly<Record<string, string>>): number | undefined;
}

const NAME = '[a-zA-Z_:][a-zA-Z0-9_:]*';
const SAMPLE = new RegExp(`^(${NAME})(?:\\{(.*)\\})? (\\S+)(?: \\d+)?$`);
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?/gy;

/** @throws Error naming the first line that is not valid exposition text */
export function parsePrometheusText(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) continue;
    const type = /^# TYPE (\S+) (counter|gauge|histogram|summary|untyped)$/.exec(line);
    if (type) {
      if (types.has(type[1]!)) throw new Error(`TYPE given twice for ${type[1]}`);
      types.set(type[1]!, type[2]!);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (!match) throw new Error(`not an exposition line: ${JSON.stringify(line)}`);
    const labels: Record<string, string> = {};
    const labelText = match[2] ?? '';
    LABEL.lastIndex = 0;
    while (LABEL.lastIndex < labelText.length) {
      const label = LABEL.exec(labelText);
      if (!label) throw new Error(`bad labels in ${JSON.stringify(line)}`);
      labels[label[1]!] = label[2]!.replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
    }
    const raw = match[3]!;
    const value = raw === '+Inf' ? Infinity : raw === '-Inf' ? -Infinity : Number(raw);
    if (Number.isNaN(value) && raw !== 'NaN') throw new Error(`bad value in ${JSON.stringify(line)}`);
    samples.push({ name: match[1]!, labels, value });
  }
  const same = (a: Readonly<Record<string, string>>, b: Readonly<Record<string, string>>): boolean =>
    Object.keys(a).length === Object.keys(b).length && Object.entries(a).every(([key, value]) => b[key] === value);
  return {
    types,
    samples,
    value: (name, labels = {}) => samples.find((sample) => sample.name === name && same(sample.labels, labels))?.value,
  };
}
