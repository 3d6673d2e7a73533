import type { StepContext, StepOf, StepOutcome } from './step-context.js';

/** `hangup: { reason? }`: ends the call; the reason goes to the log and the BYE's Reason header. */
export async function runHangup(step: StepOf<'hangup'>, context: StepContext): Promise<StepOutcome> {
  await context.hangup(step.hangup.reason);
  return { next: 'end' };
}
