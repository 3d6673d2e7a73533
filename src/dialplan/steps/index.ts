/**
 * The step registry: one runner per step kind of the dialplan schema. The mapped type makes
 * the table exhaustive: a new step kind in the schema does not compile until it has a runner.
 */
import type { DialplanStep } from '../dialplan-schema.js';
import { stepKind, type StepKind } from '../step-kinds.js';
import { runAnswer } from './answer-step.js';
import { runBranch } from './branch-step.js';
import { runGather } from './gather-step.js';
import { runGoto } from './goto-step.js';
import { runHangup } from './hangup-step.js';
import { runHours } from './hours-step.js';
import { runLanguage } from './language-step.js';
import { runListen } from './listen-step.js';
import { runMenu } from './menu-step.js';
import { runRecord } from './record-step.js';
import { runSay } from './say-step.js';
import { runSet } from './set-step.js';
import type { StepContext, StepOf, StepOutcome, StepRunner } from './step-context.js';
import { runTransfer } from './transfer-step.js';
import { runStream } from './stream-step.js';
import { runWebhook } from './webhook-step.js';

const RUNNERS: { readonly [K in StepKind]: StepRunner<StepOf<K>> } = {
  answer: runAnswer,
  say: runSay,
  listen: runListen,
  menu: runMenu,
  gather: runGather,
  record: runRecord,
  hangup: runHangup,
  goto: runGoto,
  set: runSet,
  branch: runBranch,
  hours: runHours,
  language: runLanguage,
  transfer: runTransfer,
  // A bot's actions run through this registry too.
  webhook: (step, context) => runWebhook(step, context, runStep),
  stream: runStream,
};

/** Runs a step with the runner of its kind. */
export function runStep(step: DialplanStep, context: StepContext): Promise<StepOutcome> {
  const runner = RUNNERS[stepKind(step)] as StepRunner<DialplanStep>;
  return runner(step, context);
}

export type { StepContext, StepOutcome } from './step-context.js';
