import { CONTINUE, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/** `set: { name: value }`: sets variables; values may use `{{name}}` placeholders (filled in order). */
export async function runSet(step: StepOf<'set'>, context: StepContext): Promise<StepOutcome> {
  for (const [name, value] of Object.entries(step.set)) context.vars[name] = context.fill(value);
  return CONTINUE;
}
