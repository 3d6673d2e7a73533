/**
 * sherpa-onnx results (tokens with start times, optional log-probabilities) as words with
 * start, end and confidence.
 */
import type { Hypothesis, RecognisedWord } from '../types.js';

/** What the recognisers report about one decoded stretch. */
export interface SherpaResult {
  readonly text: string;
  readonly tokens: readonly string[];
  /** Start of each token, seconds from the start of the audio decoded. */
  readonly timestamps: readonly number[];
  /** Natural-log probability of each token, where the model reports it. */
  readonly logProbabilities?: readonly number[];
}

/** How long a word's last token is taken to last when the next word does not say (seconds). */
const LAST_TOKEN_SECONDS = 0.3;

function round(value: number): number {
  return Math.round(value * 1000) / 1000;
}

/** Recognisers of English spell in capitals; the API answers in lower case like the others. */
function normaliseCase(word: string): string {
  return word === word.toUpperCase() && word !== word.toLowerCase() ? word.toLowerCase() : word;
}

/**
 * The words of a result. A token that begins with a space (sherpa-onnx writes BPE's `▁` as one)
 * starts a word. A word ends where the next begins, the last one `LAST_TOKEN_SECONDS` after its
 * last token (at most `audioSeconds`). Confidence is the mean token probability, 0 where the
 * model reports none. Results without token times (Whisper) spread their words evenly.
 */
export function resultWords(result: SherpaResult, audioSeconds: number): Hypothesis {
  const text = result.text.trim();
  if (text === '') return { text: '', words: [] };
  if (result.tokens.length === 0 || result.timestamps.length !== result.tokens.length) {
    const list = text.split(/\s+/).map(normaliseCase);
    const words = list.map((w, i) => ({ w, start: round((audioSeconds * i) / list.length), end: round((audioSeconds * (i + 1)) / list.length), conf: 0 }));
    return { text: list.join(' '), words };
  }
  const groups: Array<{ text: string; start: number; lastToken: number; logProbabilities: number[] }> = [];
  result.tokens.forEach((token, index) => {
    const time = result.timestamps[index]!;
    const logProbability = result.logProbabilities?.[index];
    const startsWord = groups.length === 0 || /^[\s▁]/.test(token);
    const piece = token.replace(/^[\s▁]+/, '');
    if (startsWord && piece !== '') groups.push({ text: piece, start: time, lastToken: time, logProbabilities: [] });
    else if (groups.length > 0) {
      const group = groups.at(-1)!;
      group.text += piece;
      group.lastToken = time;
    }
    if (logProbability !== undefined && groups.length > 0) groups.at(-1)!.logProbabilities.push(logProbability);
  });
  const words: RecognisedWord[] = groups.map((group, index) => {
    const next = groups[index + 1];
    const end = next ? next.start : Math.min(audioSeconds, group.lastToken + LAST_TOKEN_SECONDS);
    const mean = group.logProbabilities.length > 0 ? group.logProbabilities.reduce((sum, value) => sum + value, 0) / group.logProbabilities.length : null;
    return {
      w: normaliseCase(group.text),
      start: round(group.start),
      end: round(Math.max(group.start, end)),
      conf: mean === null ? 0 : round(Math.min(1, Math.exp(mean))),
    };
  });
  return { text: words.map((word) => word.w).join(' '), words };
}
