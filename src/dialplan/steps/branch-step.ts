import { saysWords } from './spoken-words.js';
import { CONTINUE, type StepContext, type StepOf, type StepOutcome } from './step-context.js';

type BranchCase = StepOf<'branch'>['branch'][number];
type Test = NonNullable<BranchCase['if']>[string];

/** Whether a variable's value passes a test (a plain string means "equals"). */
export function passes(value: string, test: Test): boolean {
  if (typeof test === 'string') return value === test;
  if (test.equals !== undefined && value !== test.equals) return false;
  if (test.not !== undefined && value === test.not) return false;
  if (test.contains !== undefined && !saysWords(value, test.contains)) return false;
  // The loader compiled every pattern once; a branch runs rarely enough to compile it again.
  if (test.matches !== undefined && !new RegExp(test.matches, 'u').test(value)) return false;
  if (test.in !== undefined && !test.in.includes(value)) return false;
  if (test.empty !== undefined && (value === '') !== test.empty) return false;
  return true;
}

/** `branch`: the first case whose tests all hold sends the call to its step; none holding goes on with the next step. */
export async function runBranch(step: StepOf<'branch'>, context: StepContext): Promise<StepOutcome> {
  for (const branchCase of step.branch) {
    const tests = Object.entries(branchCase.if ?? {});
    if (tests.every(([name, test]) => passes(context.vars[name] ?? '', test))) return { next: 'goto', target: branchCase.goto };
  }
  return CONTINUE;
}
