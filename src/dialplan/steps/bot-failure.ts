import { botFailedPrompt } from '../dialplan-defaults.js';
import { promptVoice } from './prompt-voice.js';
import { goOn, type StepContext, type StepOutcome } from './step-context.js';

/** What a bot step says and does when its bot fails. */
export interface BotFailureFields {
  readonly url: string;
  readonly fallback?: string;
  readonly on_fail?: string;
}

/**
 * A bot failed (could not be reached, timed out, answered nonsense, dropped its connection):
 * the reason goes to the log and to `{{bot_error}}`, the fallback (an apology in the call's
 * language unless the step gives its own) is said, then the call goes on at `on_fail` or ends.
 */
export async function botFailed(fields: BotFailureFields, context: StepContext, reason: string): Promise<StepOutcome> {
  context.logger.warn({ url: fields.url, reason }, 'bot failed');
  context.vars['bot_error'] = reason;
  if (context.signal.aborted) return { next: 'end' };
  const voice = promptVoice(context, {});
  const text = fields.fallback ?? botFailedPrompt(voice.language);
  // The built-in prompt is Standard German: rendered even where the call's prompts are dialect text.
  await context.say({ text: context.fill(text), ...voice, ...(fields.fallback === undefined ? { dialectText: false } : {}), bargeIn: false });
  if (fields.on_fail !== undefined) return goOn(fields.on_fail);
  await context.hangup('bot failed');
  return { next: 'end' };
}
