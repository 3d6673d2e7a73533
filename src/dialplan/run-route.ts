/**
 * Runs a route's steps on a call: one step after the other, jumping where a step says, until a
 * step ends the call, the last step is done, the caller leaves, or the call has been sent back
 * to an earlier step more than `max_turns` times.
 */
import { DIALPLAN_DEFAULTS } from './dialplan-defaults.js';
import { runStep, type StepContext } from './steps/index.js';

/** Why a route stopped running. */
export type RouteEnd = 'ended' | 'last-step' | 'caller-left' | 'max-turns';

/** Runs the steps of `context.route`. */
export async function runRoute(context: StepContext): Promise<RouteEnd> {
  const steps = context.route.steps;
  const maxTurns = context.route.max_turns ?? DIALPLAN_DEFAULTS.route.max_turns;
  let turns = 0;
  for (let index = 0; index < steps.length; index++) {
    const outcome = await runStep(steps[index]!, context);
    if (context.signal.aborted) return context.callerLeft() ? 'caller-left' : 'ended';
    if (outcome.next === 'end') return 'ended';
    if (outcome.next === 'goto') {
      // The loader checked that every target names a step of its route.
      const target = steps.findIndex((candidate) => candidate.id === outcome.target);
      // Only a jump back makes a turn: forward jumps (menu options, branches) cannot loop.
      if (target <= index && ++turns > maxTurns) {
        context.logger.warn({ maxTurns }, 'the call passed max_turns');
        return 'max-turns';
      }
      index = target - 1;
    }
  }
  return 'last-step';
}
