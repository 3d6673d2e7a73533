import { hoursAt } from '../opening-hours.js';
import { goOn, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

/**
 * `hours`: open, closed or a public holiday now, in Europe/Zurich time. Sets `{{hours}}`
 * (open, closed, holiday) and `{{holiday}}` (its name) and goes to the matching step.
 */
export async function runHours(step: StepOf<'hours'>, context: StepContext): Promise<StepOutcome> {
  const now = hoursAt(step.hours, context.now());
  context.vars['hours'] = now.state;
  context.vars['holiday'] = now.state === 'holiday' ? now.holiday : '';
  context.logger.info({ hours: now.state, local: now.local, ...(now.state === 'holiday' ? { holiday: now.holiday } : {}) }, 'opening hours');
  if (now.state === 'open') return goOn(step.hours.open);
  if (now.state === 'holiday') return goOn(step.hours.holiday ?? step.hours.closed);
  return goOn(step.hours.closed);
}
