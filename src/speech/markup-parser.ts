import { SaxesParser, type SaxesTagPlain } from 'saxes';
import { NEUTRAL_PROSODY, type EmphasisLevel, type Passage, type Prosody, type SpeechDocument, type SpeechItem } from '../../engine/types.js';
import { resolveLanguageCode } from '../catalog/resolve-language.js';
import { sameProsody } from '../../engine/delivery.js';
import { sayAs, SayAsError, type SayAsKind } from '../../engine/text/normaliser.js';
import { nestProsody, withEmphasis } from './prosody.js';

/** A markup document that cannot be rendered; `message` is the detail a client sees. */
export class MarkupError extends Error {
  override name = 'MarkupError';
}

/** A parsed document and what it costs: spoken characters and separately rendered passages. */
export interface ParsedSpeech {
  readonly document: SpeechDocument;
  readonly characters: number;
  readonly passages: number;
  readonly markNames: readonly string[];
}

/** Language and dialect a document starts in. */
export interface SpeechDefaults {
  readonly language: string;
  readonly dialect: string | null;
}

/** Deepest element nesting accepted; real documents stay far below. */
const MAX_DEPTH = 32;
/** Most elements in one document. */
const MAX_ELEMENTS = 2000;
/** Longest `<break>`. */
const MAX_BREAK_MS = 10_000;
/** Pause after a paragraph and after a sentence. */
const PARAGRAPH_PAUSE_MS = 600;
const SENTENCE_PAUSE_MS = 300;
const BREAK_STRENGTH_MS: Record<string, number> = { none: 0, 'x-weak': 100, weak: 200, medium: 400, strong: 700, 'x-strong': 1000 };

const SAY_AS_VALUES = ['digits', 'telephone', 'characters', 'ordinal', 'date', 'time', 'currency', 'number'];
const EMPHASIS_LEVELS = ['strong', 'moderate', 'reduced', 'none'];
const PROSODY_PATTERNS: Record<string, RegExp> = {
  rate: /^(x-slow|slow|medium|fast|x-fast|default|\d{1,3}(\.\d+)?%)$/,
  pitch: /^(x-low|low|medium|high|x-high|default|[+-]\d{1,3}(\.\d+)?(%|st))$/,
  volume: /^(silent|x-soft|soft|medium|loud|x-loud|default|[+-]\d{1,2}(\.\d+)?dB)$/,
};
const SUPPORTED = ['speak', 'break', 'say-as', 'sub', 'prosody', 'emphasis', 'lang', 'mark', 'p', 's'];
const REFUSED_WITH_REASON: Record<string, string> = {
  audio: '<audio> is refused: the service does not fetch or play recordings. Speak the words instead.',
  phoneme: '<phoneme> is refused: phonetic alphabets differ between engines and dialects. Respell the word with <sub alias="...">.',
};

/** True when a text is a markup document (its first element is `<speak>`, spec 2.1). */
export function isMarkup(text: string): boolean {
  return /^\s*(<\?xml[^>]*\?>\s*)?<speak[\s>/]/.test(text);
}

interface Frame {
  readonly name: string;
  readonly language: string;
  readonly dialect: string | null;
  /** Inside `<sub>`: the alias is spoken, the content is not. */
  readonly silenced: boolean;
  /** Inside `<say-as>`: the kind, and the content collected until the element closes. */
  readonly sayAs?: { readonly kind: SayAsKind; content: string };
  readonly prosody: Prosody;
}

/**
 * Parses a `<speak>` document (spec 2.8) with a real XML parser into passages. Every element
 * of the specification is accepted and checked; anything else is refused by name.
 * @throws MarkupError with a detail naming the element, attribute or position at fault.
 */
export function parseMarkup(text: string, defaults: SpeechDefaults): ParsedSpeech {
  const parser = new SaxesParser<{ xmlns: false; position: true }>({ xmlns: false, position: true });
  const passages: Array<{ language: string; dialect: string | null; items: SpeechItem[] }> = [];
  const stack: Frame[] = [];
  const markNames: string[] = [];
  let elements = 0;
  let failure: MarkupError | undefined;

  const fail = (message: string): never => {
    throw new MarkupError(message);
  };
  const where = (): string => `line ${parser.line}, column ${parser.column}`;
  const current = (): Frame => stack[stack.length - 1]!;
  const passageFor = (frame: Frame) => {
    const last = passages[passages.length - 1];
    if (last && last.language === frame.language && last.dialect === frame.dialect) return last;
    const passage = { language: frame.language, dialect: frame.dialect, items: [] as SpeechItem[] };
    passages.push(passage);
    return passage;
  };
  const push = (item: SpeechItem): void => {
    const items = passageFor(current()).items;
    const previous = items[items.length - 1];
    if (item.type === 'text' && previous?.type === 'text' && sameProsody(previous.prosody, item.prosody)) {
      items[items.length - 1] = { ...previous, text: previous.text + item.text };
    } else {
      items.push(item);
    }
  };

  parser.on('doctype', () => fail(`a DOCTYPE is not allowed in markup (${where()})`));
  parser.on('processinginstruction', (pi) => {
    if (pi.target !== 'xml') fail(`processing instructions are not allowed (${where()})`);
  });
  parser.on('opentag', (tag: SaxesTagPlain) => {
    elements++;
    if (elements > MAX_ELEMENTS) fail(`the document has more than ${MAX_ELEMENTS} elements`);
    if (stack.length >= MAX_DEPTH) fail(`elements are nested more than ${MAX_DEPTH} deep (${where()})`);
    const name = tag.name;
    if (stack.length === 0 && name !== 'speak') fail(`the root element must be <speak>, not <${name}>`);
    if (stack.length > 0 && name === 'speak') fail(`<speak> may only be the root element (${where()})`);
    if (REFUSED_WITH_REASON[name]) fail(REFUSED_WITH_REASON[name]!);
    if (!SUPPORTED.includes(name)) fail(`<${name}> is not supported (${where()}); supported elements: ${SUPPORTED.join(', ')}`);
    const outer = stack[stack.length - 1] ?? { name: '', language: defaults.language, dialect: defaults.dialect, silenced: false, prosody: NEUTRAL_PROSODY };
    if (outer.silenced) fail(`<${outer.name}> may contain only text, not <${name}> (${where()})`);
    const attribute = (key: string): string | undefined => tag.attributes[key];
    let frame: Frame = { name, language: outer.language, dialect: outer.dialect, silenced: false, prosody: outer.prosody };
    switch (name) {
      case 'speak':
      case 'lang': {
        const code = attribute('xml:lang');
        if (name === 'lang' && code === undefined) fail(`<lang> needs an xml:lang attribute (${where()})`);
        if (code !== undefined) {
          const resolved = resolveLanguageCode(code);
          if (!resolved) fail(`<${name} xml:lang="${code}">: the language is not supported; see GET /v1/capabilities`);
          frame = { ...frame, language: resolved!.language.code, dialect: resolved!.dialect ?? resolved!.language.default_dialect };
        }
        break;
      }
      case 'break': {
        const time = attribute('time');
        const strength = attribute('strength');
        let milliseconds: number;
        if (time !== undefined) {
          const match = /^(\d+(?:\.\d+)?)(ms|s)$/.exec(time.trim());
          if (!match) fail(`<break time="${time}">: write the time as milliseconds or seconds, for example 500ms or 1.5s`);
          milliseconds = Math.round(Number(match![1]) * (match![2] === 's' ? 1000 : 1));
        } else if (strength !== undefined) {
          if (!(strength in BREAK_STRENGTH_MS)) fail(`<break strength="${strength}">: use one of ${Object.keys(BREAK_STRENGTH_MS).join(', ')}`);
          milliseconds = BREAK_STRENGTH_MS[strength]!;
        } else {
          milliseconds = BREAK_STRENGTH_MS['medium']!;
        }
        if (milliseconds > MAX_BREAK_MS) fail(`<break time="${time}">: a break may last at most ${MAX_BREAK_MS} ms`);
        push({ type: 'break', milliseconds });
        break;
      }
      case 'say-as': {
        const value = attribute('interpret-as');
        if (!value || !SAY_AS_VALUES.includes(value)) {
          fail(`<say-as interpret-as="${value ?? ''}">: use one of ${SAY_AS_VALUES.join(', ')}`);
        }
        // The content is collected and rewritten into words when the element closes.
        frame = { ...frame, silenced: true, sayAs: { kind: value as SayAsKind, content: '' } };
        break;
      }
      case 'sub': {
        const alias = attribute('alias');
        if (alias === undefined || alias.trim() === '') fail(`<sub> needs a non-empty alias attribute (${where()})`);
        push(spoken(` ${alias} `, outer.prosody));
        frame = { ...frame, silenced: true };
        break;
      }
      case 'prosody': {
        const given = Object.keys(tag.attributes);
        if (given.length === 0) fail(`<prosody> needs at least one of rate, pitch, volume (${where()})`);
        for (const key of given) {
          const pattern = PROSODY_PATTERNS[key];
          if (!pattern) fail(`<prosody ${key}="…">: the attribute is not supported; use rate, pitch or volume`);
          if (!pattern!.test(tag.attributes[key]!)) fail(`<prosody ${key}="${tag.attributes[key]}">: the value is not valid`);
        }
        frame = { ...frame, prosody: nestProsody(outer.prosody, tag.attributes) };
        break;
      }
      case 'emphasis': {
        const level = attribute('level') ?? 'moderate';
        if (!EMPHASIS_LEVELS.includes(level)) fail(`<emphasis level="${level}">: use one of ${EMPHASIS_LEVELS.join(', ')}`);
        frame = { ...frame, prosody: withEmphasis(outer.prosody, level as EmphasisLevel) };
        break;
      }
      case 'mark': {
        const markName = attribute('name');
        if (markName === undefined || markName.trim() === '' || markName.length > 100) fail(`<mark> needs a name of 1 to 100 characters (${where()})`);
        markNames.push(markName!);
        push({ type: 'mark', name: markName! });
        break;
      }
    }
    stack.push(frame);
  });
  parser.on('text', (value) => {
    if (stack.length === 0) {
      if (value.trim() !== '') fail(`text outside <speak> is not allowed (${where()})`);
      return;
    }
    const frame = current();
    if (frame.sayAs) frame.sayAs.content += value;
    else if (!frame.silenced) push(spoken(value, frame.prosody));
  });
  parser.on('closetag', (tag) => {
    const closed = stack.pop();
    if (stack.length === 0) return;
    if (closed?.sayAs) {
      try {
        push(spoken(` ${sayAs(closed.sayAs.kind, closed.sayAs.content, closed.language)} `, closed.prosody));
      } catch (error) {
        if (error instanceof SayAsError) fail(`<say-as interpret-as="${closed.sayAs.kind}">: ${error.message}`);
        throw error;
      }
    }
    if (tag.name === 'p') push({ type: 'break', milliseconds: PARAGRAPH_PAUSE_MS });
    if (tag.name === 's') push({ type: 'break', milliseconds: SENTENCE_PAUSE_MS });
  });
  parser.on('error', (error) => {
    failure ??= new MarkupError(`the markup is not well-formed XML: ${error.message}`);
  });

  try {
    parser.write(text).close();
  } catch (error) {
    if (error instanceof MarkupError) throw error;
    throw failure ?? new MarkupError(`the markup is not well-formed XML: ${(error as Error).message}`);
  }
  if (failure) throw failure;
  return finish(passages, markNames);
}

/** A text item; neutral delivery is left implicit. */
function spoken(text: string, prosody: Prosody): SpeechItem {
  return sameProsody(prosody, NEUTRAL_PROSODY) ? { type: 'text', text } : { type: 'text', text, prosody };
}

/** Wraps plain text as a one-passage document. */
export function plainTextDocument(text: string, defaults: SpeechDefaults): ParsedSpeech {
  return finish([{ language: defaults.language, dialect: defaults.dialect, items: [{ type: 'text', text }] }], []);
}

function finish(raw: Array<{ language: string; dialect: string | null; items: SpeechItem[] }>, markNames: string[]): ParsedSpeech {
  const passages: Passage[] = [];
  const spokenTexts: string[] = [];
  for (const passage of raw) {
    const items = passage.items
      .map((item): SpeechItem => (item.type === 'text' ? { ...item, text: item.text.replace(/\s+/g, ' ') } : item))
      .filter((item) => item.type !== 'text' || item.text.trim() !== '');
    for (const item of items) if (item.type === 'text') spokenTexts.push(item.text);
    if (items.length > 0) passages.push({ language: passage.language, dialect: passage.dialect, items });
  }
  // Spoken characters: the words as one text, whitespace between them counted once.
  const characters = spokenTexts.join(' ').replace(/\s+/g, ' ').trim().length;
  const spoken = passages.filter((p) => p.items.some((item) => item.type === 'text')).length;
  return { document: { passages }, characters, passages: Math.max(spoken, passages.length > 0 ? 1 : 0), markNames };
}
