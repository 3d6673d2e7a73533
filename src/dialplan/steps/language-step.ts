import { CONTINUE, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/** `language`: the call goes on in another language (prompts and listening), voice and dialect. */
export async function runLanguage(step: StepOf<'language'>, context: StepContext): Promise<StepOutcome> {
  const { language, voice, dialect } = step.language;
  context.voice = { language, voice: voice ?? context.voice.voice, ...(dialect !== undefined ? { dialect } : {}) };
  context.vars['language'] = language;
  context.logger.info({ language, voice: context.voice.voice, dialect }, 'language');
  return CONTINUE;
}
