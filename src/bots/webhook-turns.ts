/**
 * The webhook bot's protocol: what the gateway POSTs at the start of the step and after each of
 * the caller's turns, and what the bot answers — a list of actions in the dialplan's own
 * vocabulary (`say`, `listen`, `menu`, `gather`, `set`, `language`, `transfer`, `record`,
 * `hangup`, `webhook`, `stream`), checked against the same schema as a dialplan file.
 */
import type { LoadedRoute } from '../dialplan/dialplan-loader.js';
import { stepShapeProblem } from '../dialplan/dialplan-loader.js';
import type { DialplanStep } from '../dialplan/dialplan-schema.js';
import { stepProblems } from '../dialplan/step-checks.js';
import { stepKind, type StepKind } from '../dialplan/step-kinds.js';
import type { HeardWord } from '../dialplan/steps/step-context.js';

/** The step kinds a bot may answer with; jumps (goto, branch, hours) are the bot's own logic. */
export const BOT_ACTIONS: ReadonlySet<StepKind> = new Set([
  'answer',
  'say',
  'listen',
  'menu',
  'gather',
  'set',
  'language',
  'transfer',
  'record',
  'hangup',
  'webhook',
  'stream',
]);

/** Most actions in one answer. */
export const MAX_ACTIONS = 50;

/** What the caller did since the last request. */
export type CallerTurn =
  | { readonly type: 'speech'; readonly transcript: string; readonly confidence: number | null; readonly words: readonly HeardWord[] }
  | { readonly type: 'digits'; readonly digits: string }
  | { readonly type: 'no_input' }
  /** A menu option chosen, or where a menu or gather would go after its last try: its `goto` / `fallback` label. */
  | { readonly type: 'choice'; readonly choice: string; readonly digits: string; readonly transcript: string }
  | { readonly type: 'recording'; readonly recording: string | null; readonly ended_by: string }
  | { readonly type: 'transfer'; readonly result: string; readonly status: number | null }
  /** A `stream` action ended: its bot closed the connection (`closed`), or failed (why in `error`). */
  | { readonly type: 'stream'; readonly result: 'closed' | 'failed'; readonly error: string | null };

/** One request to the bot. */
export interface WebhookRequest {
  /** `start`: the step began (or a bot handed over); `turn`: the caller answered an action; `hangup`: the call ended (its answer is not read). */
  readonly event: 'start' | 'turn' | 'hangup';
  readonly call: { readonly id: string; readonly caller: string; readonly called: string; readonly language: string; readonly route: string };
  readonly variables: Readonly<Record<string, string>>;
  readonly turn?: CallerTurn;
}

/**
 * The actions of a bot's answer (`{"actions": [...]}` or the list itself), each checked like a
 * dialplan step of the route; or the first problem, with the action's place.
 */
export function botActions(answer: unknown, route: LoadedRoute): { readonly actions: DialplanStep[] } | { readonly problem: string } {
  const list = Array.isArray(answer) ? answer : answer !== null && typeof answer === 'object' ? (answer as { actions?: unknown }).actions : undefined;
  if (!Array.isArray(list)) return { problem: 'the answer is neither a list of actions nor {"actions": [...]}' };
  if (list.length > MAX_ACTIONS) return { problem: `the answer has ${list.length} actions; at most ${MAX_ACTIONS}` };
  const actions: DialplanStep[] = [];
  for (const [index, action] of list.entries()) {
    const shape = stepShapeProblem(action);
    if (shape) return { problem: `action ${index + 1}: ${shape}` };
    const step = action as DialplanStep;
    const kind = stepKind(step);
    if (!BOT_ACTIONS.has(kind)) return { problem: `action ${index + 1}: a bot cannot answer with ${kind}` };
    const problem = stepProblems(step, route)[0];
    if (problem) return { problem: `action ${index + 1}: ${problem.field.join('.')}: ${problem.message}` };
    actions.push(step);
  }
  return { actions };
}
