/**
 * A caller's vocabulary (words and phrases to expect, spec 4.5) as a JSGF grammar: the
 * utterance is one of the phrases. Phrases with a word the dictionary lacks are left
 * out, since pocketsphinx cannot listen for a word it cannot pronounce.
 */
import { phraseWords } from '../stt/phrases.js';

/**
 * The grammar for the phrases whose words `knows` accepts, and the phrases left out; `grammar`
 * is `null` when no phrase remains.
 */
export function vocabularyGrammar(phrases: readonly string[], knows: (word: string) => boolean): { grammar: string | null; leftOut: string[] } {
  const kept = new Set<string>();
  const leftOut: string[] = [];
  for (const phrase of phrases) {
    const words = phraseWords(phrase);
    // JSGF tokens: plain words only, so nothing in a phrase can break the grammar's syntax.
    if (words.length > 0 && words.every((word) => /^[\p{L}\p{N}']+$/u.test(word) && knows(word))) kept.add(words.join(' '));
    else leftOut.push(phrase);
  }
  if (kept.size === 0) return { grammar: null, leftOut };
  return { grammar: `#JSGF V1.0;\ngrammar vocabulary;\npublic <vocabulary> = ${[...kept].join(' | ')};\n`, leftOut };
}
