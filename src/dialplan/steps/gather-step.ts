import { DIALPLAN_DEFAULTS } from '../dialplan-defaults.js';
import { promptVoice } from './prompt-voice.js';
import { CONTINUE, goOn, type StepContext, type StepOf, type StepOutcome } from './step-context.js';
import { withRetries } from './with-retries.js';

/** The longest a gather listens, however slowly the caller types. */
const GATHER_MAX_MS = 120_000;

/**
 * `gather`: takes keys (a customer number, a date of birth) until `max_digits`, the finishing
 * key or a pause of `inter_digit_timeout_ms`; an entry shorter than `min_digits` or not matching
 * `pattern` is no match. The entry lands in `{{into}}` (default `{{digits}}`); after the last try
 * the call goes on with `fallback` (the entry is then empty).
 */
export async function runGather(step: StepOf<'gather'>, context: StepContext): Promise<StepOutcome> {
  const defaults = DIALPLAN_DEFAULTS.gather;
  const gather = step.gather;
  const voice = promptVoice(context, gather);
  const into = gather.into ?? defaults.into;
  const minDigits = gather.min_digits ?? defaults.min_digits;
  const maxDigits = gather.max_digits ?? defaults.max_digits;
  const timeoutMs = gather.timeout_ms ?? defaults.timeout_ms;
  const interDigitTimeoutMs = gather.inter_digit_timeout_ms ?? defaults.inter_digit_timeout_ms;
  const pattern = gather.pattern === undefined ? null : new RegExp(gather.pattern, 'u');
  const finishOnKey = gather.finish_on_key ?? defaults.finish_on_key;
  const result = await withRetries<string>(context, voice, gather, defaults.retries, async () => {
    if (gather.prompt !== undefined) await context.say({ text: context.fill(gather.prompt), ...voice, bargeIn: true });
    if (context.signal.aborted) return { ended: true };
    const heard = await context.listen({
      speech: false,
      dtmf: true,
      language: voice.language,
      vocabulary: [],
      timeoutMs,
      maxMs: Math.min(GATHER_MAX_MS, timeoutMs + maxDigits * interDigitTimeoutMs),
      maxDigits,
      ...(finishOnKey !== '' ? { finishOnKey } : {}),
      interDigitTimeoutMs,
    });
    if (heard.reason === 'ended') return { ended: true };
    const entry = heard.digits;
    context.logger.info({ entry, reason: heard.reason }, 'gathered');
    if (entry === '') return { miss: 'no_input' };
    if (entry.length < minDigits || (pattern && !pattern.test(entry))) return { miss: 'no_match' };
    return { got: entry };
  });
  if (result === 'ended') return { next: 'end' };
  context.vars[into] = result === 'exhausted' ? '' : result.got;
  return result === 'exhausted' ? goOn(gather.fallback) : CONTINUE;
}
