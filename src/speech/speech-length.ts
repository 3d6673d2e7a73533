import type { SpeechDocument } from '../../engine/types.js';
import { LIMITS } from '../catalog/limits.js';

/**
 * Characters per second faster than any voice speaks at rate 1 (eSpeak NG reads about 14–17,
 * the neural voices fewer): dividing by it never overestimates how long a text lasts.
 */
export const BRISK_CHARACTERS_PER_SECOND = 25;

/**
 * The least audio a document can make at a speed: its breaks exactly, its text at a rate no
 * voice reaches, slowed by each item's own prosody. Used to refuse a request whose audio
 * would certainly be too long before any synthesis runs; a request under this figure may
 * still grow past a limit, which the running synthesis checks.
 */
export function shortestSpeechSeconds(document: SpeechDocument, speed: number): number {
  let seconds = 0;
  for (const passage of document.passages) {
    for (const item of passage.items) {
      if (item.type === 'break') seconds += item.milliseconds / 1000;
      else if (item.type === 'text') seconds += item.text.length / (BRISK_CHARACTERS_PER_SECOND * speed * (item.prosody?.rate ?? 1));
    }
  }
  return seconds;
}

/**
 * Audio to claim of a shared budget before synthesising a document: three times its shortest
 * reading and half a minute more (a slow voice, breaks, prosody), at most what one request may
 * make. A fast engine can draw a whole synthesis before a claim topped up in the background comes
 * back, so this much is claimed before the synthesis starts.
 */
export function synthesisClaimSeconds(document: SpeechDocument, speed: number): number {
  return Math.min(LIMITS.ttsMaxAudioSeconds, 3 * shortestSpeechSeconds(document, speed) + 30);
}
