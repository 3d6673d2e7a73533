import type { StepContext, StepOf, StepOutcome } from './step-context.js';

/** `goto: ID`: goes on from the step with that id (the call counts it against `max_turns`). */
export async function runGoto(step: StepOf<'goto'>, _context: StepContext): Promise<StepOutcome> {
  return { next: 'goto', target: step.goto };
}
