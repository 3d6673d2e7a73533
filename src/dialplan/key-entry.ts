/**
 * Keys a caller typed ahead (during a prompt, or several at once) taken by the listen that
 * comes next: up to its number of keys, stopping at its finishing key, which ends the entry
 * and is not part of it. What is left waits for the listen after.
 */

/** The keys a listen takes, whether they complete it, and the keys left over. */
export interface TakenKeys {
  readonly digits: string;
  /** The finishing key was among them. */
  readonly finished: boolean;
  /** The listen needs no more keys (finished, or `maxDigits` reached). */
  readonly complete: boolean;
  readonly rest: string;
}

/** Takes keys from `pending` for a listen of `maxDigits` keys and an optional finishing key. */
export function takeKeys(pending: string, maxDigits: number, finishOnKey?: string): TakenKeys {
  let digits = '';
  for (let index = 0; index < pending.length; index++) {
    const key = pending[index]!;
    if (finishOnKey !== undefined && key === finishOnKey) return { digits, finished: true, complete: true, rest: pending.slice(index + 1) };
    digits += key;
    if (digits.length >= maxDigits) return { digits, finished: false, complete: true, rest: pending.slice(index + 1) };
  }
  return { digits, finished: false, complete: false, rest: '' };
}
