import { sorryPrompts } from '../dialplan-defaults.js';
import type { CallVoice, StepContext } from './step-context.js';

/** One try of a menu or gather: what it got, or why it got nothing usable. */
export type Attempt<T> = { readonly got: T } | { readonly miss: 'no_input' | 'no_match' } | { readonly ended: true };

/** The retry fields a menu or gather step shares. */
export interface RetryFields {
  readonly retries?: number;
  readonly no_input?: string;
  readonly no_match?: string;
}

/**
 * Tries up to `1 + retries` times; between tries says the step's "sorry" prompt for no input or
 * no match (the language's default when the step gives none). Resolves with what a try got,
 * `ended` when the caller left, or `exhausted` after the last try.
 */
export async function withRetries<T>(
  context: StepContext,
  voice: CallVoice,
  fields: RetryFields,
  defaultRetries: number,
  attempt: () => Promise<Attempt<T>>,
): Promise<{ readonly got: T } | 'ended' | 'exhausted'> {
  const retries = fields.retries ?? defaultRetries;
  const sorry = sorryPrompts(voice.language);
  for (let tried = 0; tried <= retries; tried++) {
    const result = await attempt();
    if ('ended' in result || context.signal.aborted) return 'ended';
    if ('got' in result) return result;
    context.logger.info({ miss: result.miss, try: tried + 1, of: retries + 1 }, 'no usable answer');
    if (tried === retries) break;
    const own = result.miss === 'no_input' ? fields.no_input : fields.no_match;
    const text = own ?? (result.miss === 'no_input' ? sorry.no_input : sorry.no_match);
    // The built-in prompts are Standard German: rendered even where the step's own are dialect text.
    await context.say({ text: context.fill(text), ...voice, ...(own === undefined ? { dialectText: false } : {}), bargeIn: true });
  }
  return 'exhausted';
}
