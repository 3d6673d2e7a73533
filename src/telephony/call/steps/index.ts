/**
 * The step registry: one runner per step kind of the dialplan schema. The mapped type makes
 * the table exhaustive: a new step kind in the schema does not compile until it has a runner.
 */
import { stepKind, type StepKind } from '../../../dialplan/dialplan-loader.js';
import type { DialplanStep } from '../../../dialplan/dialplan-schema.js';
import { runAnswer } from './answer-step.js';
import { runGoto } from './goto-step.js';
import { runHangup } from './hangup-step.js';
import { runListen } from './listen-step.js';
import { runSay } from './say-step.js';
import type { StepContext, StepOf, StepOutcome, StepRunner } from './step-context.js';

const RUNNERS: { readonly [K in StepKind]: StepRunner<StepOf<K>> } = {
  answer: runAnswer,
  say: runSay,
  listen: runListen,
  hangup: runHangup,
  goto: runGoto,
};

/** Runs a step with the runner of its kind. */
export function runStep(step: DialplanStep, context: StepContext): Promise<StepOutcome> {
  const runner = RUNNERS[stepKind(step)] as StepRunner<DialplanStep>;
  return runner(step, context);
}

export type { StepContext, StepOutcome } from './step-context.js';
