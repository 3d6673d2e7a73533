import type { StepContext, StepOf, StepOutcome } from './step-context.js';

/** `hangup: {}`: ends the call (the call session hangs up as its steps end). */
export async function runHangup(_step: StepOf<'hangup'>, _context: StepContext): Promise<StepOutcome> {
  return { next: 'end' };
}
