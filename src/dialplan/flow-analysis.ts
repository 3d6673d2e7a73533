/**
 * The shape of a route's steps as a graph: where each step may send the call next. The loader
 * uses it to find jumps to nowhere, loops that never wait for the caller, and steps nothing
 * reaches.
 */
import type { DialplanStep } from './dialplan-schema.js';
import { stepKind } from './step-kinds.js';

/** A step id named by another step, with the path of the field that names it. */
export interface StepReference {
  readonly target: string;
  readonly field: ReadonlyArray<string | number>;
}

/** Every step id a step names (goto, option and branch targets, fallbacks, on_fail, hours' targets). */
export function referencesOf(step: DialplanStep): StepReference[] {
  const refs: StepReference[] = [];
  const add = (target: string | undefined, ...field: Array<string | number>): void => {
    if (target !== undefined) refs.push({ target, field });
  };
  if ('goto' in step) add(step.goto, 'goto');
  if ('menu' in step) {
    step.menu.options.forEach((option, index) => add(option.goto, 'menu', 'options', index, 'goto'));
    add(step.menu.fallback, 'menu', 'fallback');
  }
  if ('gather' in step) add(step.gather.fallback, 'gather', 'fallback');
  if ('branch' in step) step.branch.forEach((branchCase, index) => add(branchCase.goto, 'branch', index, 'goto'));
  if ('hours' in step) {
    add(step.hours.open, 'hours', 'open');
    add(step.hours.closed, 'hours', 'closed');
    add(step.hours.holiday, 'hours', 'holiday');
  }
  if ('transfer' in step) add(step.transfer.on_fail, 'transfer', 'on_fail');
  if ('webhook' in step) add(step.webhook.on_fail, 'webhook', 'on_fail');
  if ('stream' in step) add(step.stream.on_fail, 'stream', 'on_fail');
  return refs;
}

/** Steps that wait for the caller (a bot listens through its actions): a loop through one of them is a conversation, not a spin. */
const LISTENING = new Set(['listen', 'menu', 'gather', 'record', 'webhook', 'stream']);

/** The indexes a step may send the call to next (`steps.length` or beyond: the call ends). */
export function successorsOf(steps: readonly DialplanStep[], index: number, indexOf: (id: string) => number): number[] {
  const step = steps[index]!;
  const next = index + 1;
  const at = (id: string | undefined): number => (id === undefined ? next : indexOf(id));
  switch (stepKind(step)) {
    case 'hangup':
      return [];
    case 'goto':
      return [indexOf((step as { goto: string }).goto)];
    case 'branch': {
      const cases = (step as { branch: Array<{ if?: unknown; goto: string }> }).branch;
      const targets = cases.map((branchCase) => indexOf(branchCase.goto));
      return cases.some((branchCase) => branchCase.if === undefined) ? targets : [...targets, next];
    }
    case 'menu': {
      const menu = (step as Extract<DialplanStep, { menu: unknown }>).menu;
      return [...menu.options.map((option) => indexOf(option.goto)), at(menu.fallback)];
    }
    case 'gather':
      return [next, at((step as Extract<DialplanStep, { gather: unknown }>).gather.fallback)];
    case 'hours': {
      const hours = (step as Extract<DialplanStep, { hours: unknown }>).hours;
      return [at(hours.open), at(hours.closed), at(hours.holiday ?? hours.closed)];
    }
    case 'transfer':
      return [at((step as Extract<DialplanStep, { transfer: unknown }>).transfer.on_fail)];
    case 'webhook':
    case 'stream': {
      // After the bot: the next step; after a failed bot, on_fail (or the end of the call).
      const onFail = 'webhook' in step ? step.webhook.on_fail : (step as Extract<DialplanStep, { stream: unknown }>).stream.on_fail;
      return onFail === undefined ? [next] : [next, indexOf(onFail)];
    }
    default:
      return [next];
  }
}

/** What is wrong with a route's flow: loops without a listening step (errors) and unreachable steps (warnings). */
export interface FlowFindings {
  /** A step that closes a loop in which no step waits for the caller. */
  readonly spinningLoop: number | null;
  /** Steps no path from the first step reaches. */
  readonly unreachable: number[];
}

/** Analyses a route whose references were all checked to exist. */
export function analyseFlow(steps: readonly DialplanStep[]): FlowFindings {
  const ids = new Map<string, number>();
  steps.forEach((step, index) => step.id !== undefined && ids.set(step.id, index));
  const indexOf = (id: string): number => ids.get(id)!;
  const successors = steps.map((_, index) => successorsOf(steps, index, indexOf).filter((target) => target < steps.length));
  const reached = new Set<number>([0]);
  const queue = [0];
  while (queue.length > 0) {
    for (const target of successors[queue.pop()!]!) {
      if (reached.has(target)) continue;
      reached.add(target);
      queue.push(target);
    }
  }
  const unreachable = steps.map((_, index) => index).filter((index) => !reached.has(index));
  return { spinningLoop: findSpinningLoop(steps, successors), unreachable };
}

/** A depth-first search over the steps that do not listen; an edge back to a step on the path closes a loop. */
function findSpinningLoop(steps: readonly DialplanStep[], successors: number[][]): number | null {
  const state = new Array<0 | 1 | 2>(steps.length).fill(0);
  const quiet = (index: number): boolean => !LISTENING.has(stepKind(steps[index]!));
  const visit = (index: number): number | null => {
    state[index] = 1;
    for (const target of successors[index]!) {
      if (!quiet(target)) continue;
      if (state[target] === 1) return index;
      if (state[target] === 0) {
        const found = visit(target);
        if (found !== null) return found;
      }
    }
    state[index] = 2;
    return null;
  };
  for (let index = 0; index < steps.length; index++) {
    if (state[index] !== 0 || !quiet(index)) continue;
    const found = visit(index);
    if (found !== null) return found;
  }
  return null;
}
