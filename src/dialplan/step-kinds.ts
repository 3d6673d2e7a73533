/** The kinds of dialplan step, and which one a step is. */
import type { DialplanStep } from './dialplan-schema.js';
import { STEP_SCHEMAS } from './dialplan-schema.js';

/** Every step kind, in the order the documentation lists them. */
export const STEP_KINDS = Object.keys(STEP_SCHEMAS) as Array<keyof typeof STEP_SCHEMAS>;
export type StepKind = keyof typeof STEP_SCHEMAS;

/** The kind of a step (the one of its keys that names an action). */
export function stepKind(step: DialplanStep): StepKind {
  return STEP_KINDS.find((kind) => kind in step)!;
}

/** A step of one kind, narrowed from the union by its key. */
export type StepOf<K extends StepKind> = Extract<DialplanStep, Record<K, unknown>>;
