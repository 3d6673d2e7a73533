import { CONTINUE, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/** `answer: {}`: answers the call; a `say` before it has played as early media. */
export async function runAnswer(_step: StepOf<'answer'>, context: StepContext): Promise<StepOutcome> {
  await context.answer();
  return CONTINUE;
}
